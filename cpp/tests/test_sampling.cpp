// The Python-free parts of call-stack sampling: the raw sample ring, the CPU-time tick
// filter (miss counting), the stack tree (dedup) and the launcher-frame trim.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "capture/sampling/sample_ring.hpp"
#include "capture/sampling/stack.hpp"

using rocprof::sampling::CpuCredit;
using rocprof::sampling::FrameRef;
using rocprof::sampling::launcher_keep;
using rocprof::sampling::launcher_time;
using rocprof::sampling::LauncherFrames;
using rocprof::sampling::parse_header;
using rocprof::sampling::sample_header;
using rocprof::sampling::SampleRing;
using rocprof::sampling::StackTree;

namespace {
constexpr int kPyWords = 3;

// A raw sample of `npy` Python frames and `nnat` native ones, frame words numbered from `base`.
std::vector<uint64_t> sample(int npy, int nnat, uint64_t ts, uint64_t base) {
  std::vector<uint64_t> w{sample_header(npy, nnat), ts};
  for (int i = 0; i < npy * kPyWords + nnat; ++i) w.push_back(base + i);
  return w;
}
}  // namespace

TEST(SampleRing, HeaderRoundTrip) {
  int npy = -1, nnat = -1;
  ASSERT_TRUE(parse_header(sample_header(256, 255), &npy, &nnat));
  EXPECT_EQ(npy, 256);
  EXPECT_EQ(nnat, 255);
  EXPECT_FALSE(parse_header(0, &npy, &nnat));
}

TEST(SampleRing, SamplesComeOutWholeAndInOrderAcrossTheWrap) {
  std::vector<uint64_t> words(64);
  SampleRing ring;
  ring.attach(words.data(), words.size());
  std::vector<uint64_t> got;
  // 5 + 2 = 17 words each: the ring wraps every few samples.
  for (uint64_t i = 0; i < 40; ++i) {
    const auto s = sample(5, 2, 1000 + i, 100 * i);
    ASSERT_TRUE(ring.push(s.data(), s.size()));
    ASSERT_TRUE(ring.pop(kPyWords, &got));
    EXPECT_EQ(got, s) << "sample " << i;
  }
  EXPECT_TRUE(ring.empty());
  EXPECT_FALSE(ring.pop(kPyWords, &got));
}

TEST(SampleRing, FullRingRefusesWithoutOverwriting) {
  std::vector<uint64_t> words(32);
  SampleRing ring;
  ring.attach(words.data(), words.size());
  const auto a = sample(3, 0, 1, 10);  // 11 words
  const auto b = sample(3, 0, 2, 20);
  const auto c = sample(3, 0, 3, 30);
  ASSERT_TRUE(ring.push(a.data(), a.size()));
  ASSERT_TRUE(ring.push(b.data(), b.size()));
  EXPECT_FALSE(ring.push(c.data(), c.size()));  // 22 + 11 > 32: the caller counts a miss
  std::vector<uint64_t> got;
  ASSERT_TRUE(ring.pop(kPyWords, &got));
  EXPECT_EQ(got, a);
  ASSERT_TRUE(ring.push(c.data(), c.size()));  // room again once the resolver caught up
  ASSERT_TRUE(ring.pop(kPyWords, &got));
  EXPECT_EQ(got, b);
  ASSERT_TRUE(ring.pop(kPyWords, &got));
  EXPECT_EQ(got, c);
}

TEST(SampleRing, PeekLeavesTheSampleUntilDropped) {
  // The resolver looks at a sample its caches cannot resolve without the GIL and leaves it
  // (and the ones after it) for the GIL pass.
  std::vector<uint64_t> words(64);
  SampleRing ring;
  ring.attach(words.data(), words.size());
  const auto a = sample(4, 1, 1, 10);  // 15 words
  const auto b = sample(2, 0, 2, 20);
  ASSERT_TRUE(ring.push(a.data(), a.size()));
  ASSERT_TRUE(ring.push(b.data(), b.size()));
  std::vector<uint64_t> got;
  EXPECT_EQ(ring.peek(kPyWords, &got), a.size());
  EXPECT_EQ(got, a);
  EXPECT_EQ(ring.peek(kPyWords, &got), a.size());  // still there
  EXPECT_EQ(got, a);
  ring.drop(a.size());
  EXPECT_EQ(ring.peek(kPyWords, &got), b.size());
  EXPECT_EQ(got, b);
  ring.drop(b.size());
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.peek(kPyWords, &got), 0u);
}

TEST(SampleRing, OneProducerOneConsumerLoseNothing) {
  std::vector<uint64_t> words(1 << 10);
  SampleRing ring;
  ring.attach(words.data(), words.size());
  constexpr uint64_t kSamples = 200000;
  uint64_t refused = 0;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kSamples; ++i) {
      const auto s = sample(static_cast<int>(i % 7), static_cast<int>(i % 3), i, i);
      if (!ring.push(s.data(), s.size())) ++refused;
    }
  });
  uint64_t popped = 0, last_ts = 0;
  std::vector<uint64_t> got;
  bool ok = true;
  auto take = [&] {
    while (ring.pop(kPyWords, &got)) {
      const uint64_t ts = got[1];
      ok &= got == sample(static_cast<int>(ts % 7), static_cast<int>(ts % 3), ts, ts);
      ok &= popped == 0 || ts > last_ts;
      last_ts = ts;
      ++popped;
    }
  };
  while (popped + refused < kSamples) take();  // refused is only read once the count adds up
  producer.join();
  take();
  EXPECT_TRUE(ok);
  EXPECT_EQ(popped + refused, kSamples);
}

TEST(SampleRing, GarbageIsDroppedNotMisread) {
  std::vector<uint64_t> words(16);
  SampleRing ring;
  ring.attach(words.data(), words.size());
  const uint64_t junk[3] = {0x1234, 5, 6};
  ASSERT_TRUE(ring.push(junk, 3));
  std::vector<uint64_t> got;
  EXPECT_FALSE(ring.pop(kPyWords, &got));
  EXPECT_TRUE(ring.empty());
}

TEST(CpuCredit, OneSamplePerPeriodOfCpuTimeIdleTicksTakeNothing) {
  const uint64_t period = 1000000;  // 1 kHz
  CpuCredit c;
  c.start(5);
  uint64_t cpu = 5, missed = 0, taken = 0;
  for (int i = 0; i < 100; ++i) taken += c.tick(cpu += period, period, &missed);
  EXPECT_EQ(taken, 100u);
  for (int i = 0; i < 100; ++i) taken += c.tick(cpu, period, &missed);  // sleeping thread
  EXPECT_EQ(taken, 100u);
  EXPECT_EQ(missed, 0u);
}

TEST(CpuCredit, JitteredTicksStillTakeOnePerPeriod) {
  const uint64_t period = 1000000;
  CpuCredit c;
  c.start(0);
  uint64_t cpu = 0, missed = 0, taken = 0;
  // Ticks alternately early and late (0.9 and 1.1 periods of CPU between them).
  for (int i = 0; i < 1000; ++i)
    taken += c.tick(cpu += (i % 2 ? 1100000 : 900000), period, &missed);
  EXPECT_GE(taken, 999u);
  EXPECT_LE(taken, 1000u);
  EXPECT_EQ(missed, 0u);
}

TEST(CpuCredit, CpuTimeTheTicksCouldNotKeepUpWithIsCountedAsMissed) {
  const uint64_t period = 1000000;
  CpuCredit c;
  c.start(0);
  uint64_t cpu = 0, missed = 0, taken = 0;
  taken += c.tick(cpu += 10 * period, period, &missed);  // 10 periods between two ticks
  EXPECT_EQ(taken, 1u);
  EXPECT_EQ(missed, 8u);  // one taken now, one kept as credit for the next tick
  for (int i = 0; i < 10; ++i) taken += c.tick(cpu += period, period, &missed);
  taken += c.tick(cpu, period, &missed);  // the credit kept is paid at the next tick
  EXPECT_EQ(taken + missed, 20u);         // every period of CPU time is a sample taken or missed
  EXPECT_FALSE(c.tick(cpu, period, &missed));
}

TEST(CpuCredit, LooksTakeOnePerPeriodOfCpuTimeWithJitter) {
  const uint64_t period = 100000;  // 10 kHz
  CpuCredit c;
  c.start(0);
  uint64_t cpu = 0, missed = 0, taken = 0;
  // Looks alternately early and late (0.9 and 1.1 periods of CPU apart): one sample per whole
  // period, no more (the signal method's tolerance would take one per 0.9 periods here if the
  // looks were all early), none lost.
  for (int i = 0; i < 2000; ++i) taken += c.look(cpu += (i % 2 ? 110000 : 90000), period, &missed);
  EXPECT_EQ(taken, 1999u);  // 2000 periods of CPU: one still carried
  EXPECT_EQ(missed, 0u);
  for (int i = 0; i < 2000; ++i) taken += c.look(cpu += 90000, period, &missed);  // all early
  EXPECT_EQ(taken, 1999u + 1801u);  // 1800 periods more and the one carried: nothing left
  EXPECT_EQ(missed, 0u);
}

TEST(CpuCredit, ALateLookIsSampledAtTheNextLooksUpToTheBacklog) {
  const uint64_t period = 100000;
  CpuCredit c;
  c.start(0);
  uint64_t cpu = 0, missed = 0, taken = 0;
  taken += c.look(cpu += 3 * period, period, &missed);  // a look 3 periods late
  EXPECT_EQ(taken, 1u);
  EXPECT_EQ(missed, 0u);  // two periods left as backlog, within kBacklog
  for (int i = 0; i < 20; ++i) taken += c.look(cpu += period / 2, period, &missed);
  EXPECT_EQ(taken, 3u + 10u);  // the backlog paid at the next looks, then one per period
  EXPECT_EQ(missed, 0u);
  taken += c.look(cpu += 10 * period, period, &missed);  // past the backlog: counted missed
  EXPECT_EQ(taken, 14u);
  EXPECT_EQ(missed, 10u - 1u - CpuCredit::kBacklog);
}

namespace {
FrameRef py(uint32_t func, uint32_t file, int32_t line = 1) {
  return FrameRef{func, file, line, false};
}
FrameRef native(uint32_t func) { return FrameRef{func, 99, 0, true}; }
}  // namespace

TEST(StackTree, EachUniqueStackIsStoredOnce) {
  StackTree t;
  bool is_new = false;
  const uint64_t a = t.node(0, py(1, 1), &is_new);
  EXPECT_TRUE(is_new);
  const uint64_t ab = t.node(a, py(2, 1), &is_new);
  EXPECT_TRUE(is_new);
  EXPECT_EQ(t.node(0, py(1, 1), &is_new), a);
  EXPECT_FALSE(is_new);
  EXPECT_EQ(t.node(a, py(2, 1), &is_new), ab);
  EXPECT_FALSE(is_new);
  // The same frame under another caller, or at another line, is another node.
  EXPECT_NE(t.node(ab, py(2, 1), &is_new), ab);
  EXPECT_NE(t.node(a, py(2, 1, 7), &is_new), ab);
  EXPECT_NE(t.node(0, py(2, 1), &is_new), ab);
  EXPECT_EQ(t.size(), 5u);
  EXPECT_GT(a, 0u);  // 0 is reserved for "no caller"
}

TEST(StackTree, ManySamplesOfFewStacksMakeFewNodes) {
  StackTree t;
  size_t created = 0;
  for (int s = 0; s < 10000; ++s) {
    uint64_t node = 0;
    for (uint32_t depth = 0; depth < 20; ++depth) {
      bool is_new = false;
      node = t.node(node, py(depth + 1 + (depth == 19 ? s % 4 : 0), 1), &is_new);
      created += is_new;
    }
  }
  EXPECT_EQ(created, 19u + 4u);
  EXPECT_EQ(t.size(), created);
}

TEST(LauncherTrim, CutsEverythingOutsideTheScriptsModuleFrame) {
  const LauncherFrames l{10, 11, 20, 21};
  // Innermost first: work, <module> (script), _run_code, _run_module_code, run_path (runpy),
  // run_target, run, dispatch, main (rocprof), <module>, _run_code, _run_module_as_main.
  const std::vector<FrameRef> s = {py(1, 2),   py(3, 2),   py(20, 21), py(22, 21),
                                   py(23, 21), py(10, 11), py(30, 31), py(32, 31),
                                   py(33, 34), py(3, 34),  py(20, 21), py(35, 21)};
  EXPECT_EQ(launcher_keep(s.data(), s.size(), l), 2u);
}

TEST(LauncherTrim, NativeFramesBetweenRunpyAndTheScriptAreCutToo) {
  const LauncherFrames l{10, 11, 20, 21};
  const std::vector<FrameRef> s = {native(50), py(1, 2),   py(3, 2),   native(51), native(52),
                                   py(20, 21), native(53), py(10, 11), native(54)};
  EXPECT_EQ(launcher_keep(s.data(), s.size(), l), 3u);
}

TEST(LauncherTrim, KeepsStacksWithoutTheLauncher) {
  const LauncherFrames l{10, 11, 20, 21};
  // In-process API under `python -m`: runpy's _run_code but no run_target.
  const std::vector<FrameRef> inproc = {py(1, 2), py(3, 2), py(20, 21), py(35, 21)};
  EXPECT_EQ(launcher_keep(inproc.data(), inproc.size(), l), inproc.size());
  // A worker thread of a launched script.
  const std::vector<FrameRef> worker = {py(1, 2), py(40, 41), py(42, 41)};
  EXPECT_EQ(launcher_keep(worker.data(), worker.size(), l), worker.size());
  // The launcher's own time (stopping the session, after the script returned).
  const std::vector<FrameRef> stop = {py(60, 61), py(10, 11), py(30, 31), py(3, 34)};
  EXPECT_EQ(launcher_keep(stop.data(), stop.size(), l), stop.size());
  // Same names in another file are not the launcher.
  const std::vector<FrameRef> other = {py(1, 2), py(20, 99), py(10, 98)};
  EXPECT_EQ(launcher_keep(other.data(), other.size(), l), other.size());
  // Trim switched off (ids 0), and the empty stack.
  const std::vector<FrameRef> full = {py(1, 2), py(3, 2), py(20, 21), py(10, 11)};
  EXPECT_EQ(launcher_keep(full.data(), full.size(), LauncherFrames{}), full.size());
  EXPECT_EQ(launcher_keep(full.data(), full.size(), l), 2u);
  EXPECT_EQ(launcher_keep(full.data(), 0, l), 0u);
}

TEST(LauncherTrim, TheLaunchersOwnTimeIsToldFromTheProgramsImports) {
  const LauncherFrames l{10, 11, 20, 21, 3};  // func 3: <module>
  // Files 11 (the launcher), 21 (runpy) and 50 (the import system) are the launcher's side.
  const auto own = [](uint32_t file) { return file == 11 || file == 21 || file == 50; };
  // The launcher reading the script or calling the standard library (file 70) itself.
  const std::vector<FrameRef> reading = {py(4, 70), native(7), py(2, 11), py(10, 11), py(30, 31)};
  EXPECT_TRUE(launcher_time(reading.data(), reading.size(), l, own));
  // runpy setting up __main__ before the script's frame exists.
  const std::vector<FrameRef> setup = {py(5, 21), py(22, 21), py(2, 11), py(10, 11)};
  EXPECT_TRUE(launcher_time(setup.data(), setup.size(), l, own));
  // `-m pkg.mod`: runpy importing the user's package, whose __init__ (file 60) runs.
  const std::vector<FrameRef> package = {py(6, 60), py(3, 60), py(2, 50), py(22, 21), py(10, 11)};
  EXPECT_FALSE(launcher_time(package.data(), package.size(), l, own));
  // No run_target on the stack (a worker thread), or the trim switched off.
  const std::vector<FrameRef> worker = {py(1, 50), py(2, 21)};
  EXPECT_FALSE(launcher_time(worker.data(), worker.size(), l, own));
  EXPECT_FALSE(launcher_time(reading.data(), reading.size(), LauncherFrames{}, own));
}
