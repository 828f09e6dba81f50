// ROCTx counter stamps mapped to CLOCK_BOOTTIME (buffer/tsc_map.hpp): within the clock reads
// around them, in order, through the collector's drain, and after old points are thinned.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "buffer/collector.hpp"
#include "buffer/tsc_map.hpp"
#include "rocprof/clock.hpp"

using namespace rocprof;

namespace {
// A reading can straddle a preemption on a loaded machine; the mapping itself is ns-exact.
constexpr uint64_t kSlackNs = 2000;

struct Bracketed {
  uint64_t before, tsc, after;
};
Bracketed bracketed() {
  const uint64_t before = now_ns();
  const uint64_t tsc = tsc_now();
  return {before, tsc, now_ns()};
}
}  // namespace

TEST(TscMap, StampsLandBetweenTheClockReadsAroundThem) {
  if (!tsc_stamps())
    GTEST_SKIP() << "the kernel does not trust this machine's counter: ROCTx reads the clock";
  TscMap map;
  map.calibrate();
  std::vector<Bracketed> seen;
  for (int i = 0; i < 50; ++i) {
    seen.push_back(bracketed());
    if (i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  map.calibrate();
  uint64_t last = 0;
  for (const Bracketed& b : seen) {
    const uint64_t ns = map.boottime(b.tsc);
    EXPECT_GE(ns + kSlackNs, b.before);
    EXPECT_LE(ns, b.after + kSlackNs);
    EXPECT_GE(ns, last) << "the mapping keeps the stamps' order";
    last = ns;
  }
}

TEST(TscMap, ThinningKeepsTheMappingInOrder) {
  if (!tsc_stamps()) GTEST_SKIP() << "the kernel does not trust this machine's counter";
  TscMap map;
  const Bracketed first = bracketed();
  for (std::size_t i = 0; i < TscMap::kMaxPoints + 100; ++i) map.calibrate();
  EXPECT_LE(map.points(), TscMap::kMaxPoints);
  EXPECT_GT(map.points(), TscMap::kMaxPoints / 2);
  const Bracketed late = bracketed();
  map.calibrate();
  EXPECT_LE(map.boottime(first.tsc), map.boottime(late.tsc));
  EXPECT_GE(map.boottime(late.tsc) + kSlackNs, late.before);
  EXPECT_LE(map.boottime(late.tsc), late.after + kSlackNs);
}

TEST(TscMap, TheDrainHandsSinksBoottimeAndClearsTheFlag) {
  if (!tsc_stamps()) GTEST_SKIP() << "the kernel does not trust this machine's counter";
  StringTable strings;
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  Collector c(std::move(sink), SessionInfo{}, strings, CollectorOptions{});
  std::string error;
  ASSERT_TRUE(c.start(&error)) << error;
  const Bracketed a = bracketed();
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Bracketed b = bracketed();
  Record r{};
  r.kind = RecordKind::kRegion;
  r.flags = kFlagTscTime;
  r.start = a.tsc;
  r.end = b.tsc;
  ASSERT_TRUE(c.emit(r));
  c.stop();
  ASSERT_EQ(mem->records.size(), 1u);
  const Record& got = mem->records[0];
  EXPECT_EQ(got.flags & kFlagTscTime, 0);
  EXPECT_GE(got.start + kSlackNs, a.before);
  EXPECT_LE(got.start, a.after + kSlackNs);
  EXPECT_GE(got.end + kSlackNs, b.before);
  EXPECT_LE(got.end, b.after + kSlackNs);
}

// The counter stamps ranges where the kernel offers it as a clocksource, also when it keeps time
// with another one built on it (a virtual machine's kvm-clock), and only where it is invariant.
TEST(TscMap, CounterTrustedWhereTheKernelOffersIt) {
  const char* flags = "flags\t\t: fpu tsc msr constant_tsc rep_good nopl nonstop_tsc cpuid";
  EXPECT_TRUE(tsc_trusted("tsc hpet acpi_pm \n", flags));
  EXPECT_TRUE(tsc_trusted("kvm-clock tsc acpi_pm \n", flags));
  EXPECT_TRUE(tsc_trusted("hyperv_clocksource_tsc_page tsc", flags));
  // The kernel withdrew tsc (out of step across CPUs, or halted in deep idle states).
  EXPECT_FALSE(tsc_trusted("kvm-clock acpi_pm \n", flags));
  EXPECT_FALSE(tsc_trusted("hyperv_clocksource_tsc_page", flags));
  EXPECT_FALSE(tsc_trusted("", flags));
  // Not invariant: its rate follows the core's frequency, or it stops in deep sleep.
  EXPECT_FALSE(tsc_trusted("tsc hpet", "flags\t\t: fpu tsc msr constant_tsc cpuid"));
  EXPECT_FALSE(tsc_trusted("tsc hpet", "flags\t\t: fpu tsc msr nonstop_tsc cpuid"));
  EXPECT_FALSE(tsc_trusted("tsc hpet", "flags\t\t: fpu tsc msr constant_tscx nonstop_tsc_"));
}
