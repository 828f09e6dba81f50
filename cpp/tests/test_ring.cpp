#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "buffer/ring.hpp"

using rocprof::Record;
using rocprof::Ring;

namespace {
Record numbered(uint64_t i) {
  Record r{};
  r.kind = rocprof::RecordKind::kRegion;
  r.start = i;
  return r;
}
}  // namespace

TEST(Ring, DrainsInOrder) {
  Ring ring(8);
  for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(ring.push(numbered(i)));
  std::vector<uint64_t> got;
  EXPECT_EQ(ring.drain([&](const Record& r) { got.push_back(r.start); }), 5u);
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(ring.empty());
}

TEST(Ring, FullRingDropsAndCounts) {
  Ring ring(4);
  for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(ring.push(numbered(i)));
  EXPECT_FALSE(ring.push(numbered(99)));
  EXPECT_FALSE(ring.push(numbered(100)));
  EXPECT_EQ(ring.dropped(), 2u);
  std::vector<uint64_t> got;
  ring.drain([&](const Record& r) { got.push_back(r.start); });
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(ring.push(numbered(5))) << "space is reusable after a drain";
}

TEST(Ring, WrapsAroundManyTimes) {
  Ring ring(4);
  uint64_t next = 0, expect = 0;
  for (int round = 0; round < 100; ++round) {
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(ring.push(numbered(next++)));
    ring.drain([&](const Record& r) { ASSERT_EQ(r.start, expect++); });
  }
  EXPECT_EQ(expect, 300u);
}

TEST(Ring, ConcurrentProducerConsumerLosesNothingUnlessCounted) {
  Ring ring(1024);
  constexpr uint64_t kN = 2'000'000;
  std::atomic<bool> done{false};
  uint64_t received = 0, last = 0;
  bool ordered = true;
  std::thread consumer([&] {
    while (!done.load() || !ring.empty()) {
      ring.drain([&](const Record& r) {
        if (received > 0 && r.start <= last) ordered = false;
        last = r.start;
        ++received;
      });
    }
  });
  for (uint64_t i = 1; i <= kN; ++i) ring.push(numbered(i));
  done = true;
  consumer.join();
  EXPECT_TRUE(ordered);
  EXPECT_EQ(received + ring.dropped(), kN);
}
