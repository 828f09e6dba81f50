#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "buffer/string_table.hpp"

using rocprof::StringTable;

TEST(StringTable, SameStringSameIdFromOne) {
  StringTable t;
  EXPECT_EQ(t.intern("a"), 1u);
  EXPECT_EQ(t.intern("b"), 2u);
  EXPECT_EQ(t.intern("a"), 1u);
  EXPECT_EQ(t.intern_cached("b"), 2u);
  EXPECT_EQ(t.get(2), "b");
  EXPECT_EQ(t.get(0), "");
}

TEST(StringTable, CachedLookupDoesNotKeepCallerBuffer) {
  StringTable t;
  char buf[8] = "first";
  const uint32_t id = t.intern_cached(buf);
  std::snprintf(buf, sizeof buf, "other");  // the caller reuses its buffer
  EXPECT_NE(t.intern_cached(buf), id);
  EXPECT_EQ(t.intern_cached("first"), id);
  EXPECT_EQ(t.get(id), "first");
}

TEST(StringTable, TakeNewHandsOutEachStringOnce) {
  StringTable t;
  t.intern("x");
  t.intern("y");
  std::vector<std::string> out;
  EXPECT_EQ(t.take_new(out), 1u);
  EXPECT_EQ(out, (std::vector<std::string>{"x", "y"}));
  out.clear();
  t.intern("z");
  EXPECT_EQ(t.take_new(out), 3u);
  EXPECT_EQ(out, (std::vector<std::string>{"z"}));
  t.rewind_taken();
  out.clear();
  EXPECT_EQ(t.take_new(out), 1u);
  EXPECT_EQ(out.size(), 3u);
}

TEST(StringTable, ConcurrentInterningAgreesOnIds) {
  StringTable t;
  constexpr int kThreads = 4, kNames = 500;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kNames; ++i) ids[w][i] = t.intern_cached("name-" + std::to_string(i));
    });
  }
  for (auto& th : threads) th.join();
  for (int w = 1; w < kThreads; ++w) EXPECT_EQ(ids[w], ids[0]);
  EXPECT_EQ(t.size(), static_cast<size_t>(kNames));
  std::set<uint32_t> unique(ids[0].begin(), ids[0].end());
  EXPECT_EQ(unique.size(), static_cast<size_t>(kNames));
}

TEST(StringTable, ThreadCacheStaysBoundedWithEveryStringNew) {
  // A program that names every call differently (a message with a step number) must not grow
  // each thread's cache with the table; ids stay those of the table.
  StringTable t;
  constexpr int kNames = 100000;
  std::vector<uint32_t> ids(kNames);
  for (int i = 0; i < kNames; ++i) ids[i] = t.intern_cached("step " + std::to_string(i));
  EXPECT_LE(StringTable::local_cache_size(), 65536u);
  EXPECT_EQ(t.size(), static_cast<size_t>(kNames));
  for (int i = 0; i < kNames; i += 997)
    EXPECT_EQ(t.intern_cached("step " + std::to_string(i)), ids[i]);
  EXPECT_EQ(t.get(ids[12345]), "step 12345");
}
