// Device-metrics pieces without a session: counter samples into rocpd rows (rocprof-sys's
// layout), the *_VISIBLE_DEVICES rules, --gpus/--cpus lists, /proc readings of this process,
// and the energy counter's unwrapping and update period.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "capture/metrics/host.hpp"
#include "capture/metrics/source.hpp"
#include "capture/metrics/visible.hpp"
#include "capture/settings.hpp"
#include "rocprof/clock.hpp"
#include "storage/rocpd_sink.hpp"
#include "storage/sqlite_api.hpp"

using namespace rocprof;

namespace {

std::string text(const std::string& path, const std::string& query) {
  std::string error;
  const sql::Api* api = sql::api(&error);
  sql::sqlite3* db = nullptr;
  api->open_v2(path.c_str(), &db, sql::kOpenReadWrite, nullptr);
  sql::sqlite3_stmt* s = nullptr;
  std::string out;
  if (api->prepare_v2(db, query.c_str(), -1, &s, nullptr) == sql::kOk)
    while (api->step(s) == sql::kRow) {
      const unsigned char* t = api->column_text(s, 0);
      out += (t ? reinterpret_cast<const char*>(t) : "NULL") + std::string("\n");
    }
  api->finalize(s);
  api->close_v2(db);
  return out;
}

Record counter(uint32_t track, uint32_t key, uint64_t t, double v, uint32_t category) {
  return counter_sample(t, 99, category, track, key, v);
}

}  // namespace

TEST(Metrics, CounterSamplesBecomeRocprofSysRows) {
  SessionInfo info;
  info.path = std::string(::testing::TempDir()) + "/metrics_" + std::to_string(getpid()) + ".db";
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8a";
  info.pid = 42;
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  // 1 category, 2/3 track names, 4/5 pmc keys
  sink.write_strings(1, {"nvml", "device_power [0]", "device_power [1]", "pmc:2:device_power",
                         "pmc:3:device_power"});
  AgentInfo a;
  a.id = 2;
  sink.write_info(a);
  a.id = 3;
  a.absolute_index = 1;
  sink.write_info(a);
  for (uint32_t key : {4u, 5u}) {
    PmcInfo p;
    p.key = key;
    p.agent_id = key - 2;
    p.name = "device_power";
    p.symbol = "Power";
    p.units = "W";
    sink.write_info(p);
  }
  const Record recs[] = {counter(2, 4, 1000, 150.5, 1), counter(3, 5, 1000, 99.0, 1),
                         counter(2, 4, 2000, 151.5, 1)};
  sink.write_records(recs, 3);
  sink.close(3000);
  // A track per counter and device, no thread; each value on its sample's own event.
  EXPECT_EQ(text(info.path,
                 "SELECT S.string || '|' || COALESCE(T.tid, 'NULL') FROM rocpd_track T "
                 "JOIN rocpd_string S ON S.id = T.name_id ORDER BY T.id"),
            "device_power [0]|NULL\ndevice_power [1]|NULL\n");
  EXPECT_EQ(
      text(info.path,
           "SELECT T.id || '|' || SA.timestamp || '|' || PE.value || '|' || I.agent_id || '|' "
           "|| I.units || '|' || C.string FROM rocpd_sample SA JOIN rocpd_track T ON "
           "T.id = SA.track_id JOIN rocpd_pmc_event PE ON PE.event_id = SA.event_id JOIN "
           "rocpd_info_pmc I ON I.id = PE.pmc_id JOIN rocpd_event E ON E.id = SA.event_id "
           "JOIN rocpd_string C ON C.id = E.category_id ORDER BY SA.id"),
      "1|1000|150.5|2|W|nvml\n2|1000|99.0|3|W|nvml\n1|2000|151.5|2|W|nvml\n");
  EXPECT_EQ(text(info.path, "SELECT COUNT(DISTINCT event_id) FROM rocpd_pmc_event"), "3\n");
  std::remove(info.path.c_str());
}

TEST(Metrics, VisibleDevicesAsCudaReadsThem) {
  using metrics::apply_visible;
  std::vector<metrics::GpuDevice> d(4);
  for (uint32_t i = 0; i < 4; ++i) {
    d[i].index = i;
    d[i].uuid = "GPU-" + std::string(1, static_cast<char>('a' + i)) + "bcdef-1234";
  }
  const std::vector<uint32_t> all = {0, 1, 2, 3};
  EXPECT_EQ(apply_visible(d, all, nullptr), all);
  EXPECT_EQ(apply_visible(d, all, ""), std::vector<uint32_t>{});
  EXPECT_EQ(apply_visible(d, all, "2,0"), (std::vector<uint32_t>{2, 0}));
  EXPECT_EQ(apply_visible(d, all, "GPU-cbc,1"), (std::vector<uint32_t>{2, 1}));
  // An entry naming nothing, or a device twice, ends the list (CUDA's rule).
  EXPECT_EQ(apply_visible(d, all, "1,7,2"), std::vector<uint32_t>{1});
  EXPECT_EQ(apply_visible(d, all, "1,1,2"), std::vector<uint32_t>{1});
  // Indices count within what an outer variable left (HIP over ROCR).
  EXPECT_EQ(apply_visible(d, {3, 1}, "1"), std::vector<uint32_t>{1});
}

TEST(Metrics, IndexLists) {
  std::vector<uint32_t> v;
  bool all = false;
  EXPECT_TRUE(capture::parse_index_list("all", &v, &all));
  EXPECT_TRUE(all);
  EXPECT_TRUE(capture::parse_index_list("none", &v, &all));
  EXPECT_FALSE(all);
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(capture::parse_index_list("0,2-4", &v, &all));
  EXPECT_EQ(v, (std::vector<uint32_t>{0, 2, 3, 4}));
  for (const char* bad : {"1-", "-1", "a", "3-1", "1,,2"})
    EXPECT_FALSE(capture::parse_index_list(bad, &v, &all)) << bad;
}

TEST(Metrics, ProcReadingsOfThisProcess) {
  metrics::HostReader r;
  r.open(metrics::HostReader::all_cores());
  ASSERT_FALSE(r.cores().empty());
  std::vector<double> proc(metrics::kHostMetricCount), core(r.cores().size() * 2);
  const uint64_t t0 = now_ns();
  r.read(t0, proc.data(), core.data());
  EXPECT_GT(proc[metrics::kProcessRss], 0.0);
  EXPECT_TRUE(std::isnan(proc[metrics::kProcessPageFaults]));  // a rate needs two readings
  const size_t bytes = 32u << 20;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  madvise(p, bytes, MADV_NOHUGEPAGE);
  const long page = sysconf(_SC_PAGESIZE);
  for (size_t off = 0; off < bytes; off += static_cast<size_t>(page))
    static_cast<char*>(p)[off] = 1;
  const uint64_t t1 = now_ns();
  std::vector<double> proc2(metrics::kHostMetricCount), core2(core.size());
  r.read(t1, proc2.data(), core2.data());
  const double pages = static_cast<double>(bytes) / static_cast<double>(page);
  const double faults = proc2[metrics::kProcessPageFaults] * static_cast<double>(t1 - t0) / 1e9;
  // The rate is over the time between the two readings: times it, the faults between them.
  EXPECT_GE(faults + 0.5, pages);
  EXPECT_LE(faults, pages + 200);
  EXPECT_NEAR(proc2[metrics::kProcessRss] - proc[metrics::kProcessRss], bytes / 1e6,
              bytes / 1e6 * 0.1);
  for (size_t c = 0; c < r.cores().size(); ++c) {
    const double load = core2[c * metrics::kCoreMetricCount + metrics::kCoreLoad];
    EXPECT_TRUE(std::isnan(load) || (load >= 0 && load <= 100)) << load;
  }
  munmap(p, bytes);
}

TEST(Metrics, EnergyCounterUnwrapsAndNeverDecreases) {
  using metrics::EnergyCounter;
  constexpr uint64_t k32 = uint64_t{1} << 32;
  EXPECT_EQ(EnergyCounter::step(100, 250), 150u);
  EXPECT_EQ(EnergyCounter::step(k32 - 10, 5), 15u);   // a 32-bit counter wrapped
  EXPECT_EQ(EnergyCounter::step(1000, 5), 5u);        // far from the top: it restarted
  EXPECT_EQ(EnergyCounter::step(k32 + 1000, 5), 5u);  // wider than 32 bits: restarted
  EnergyCounter e;
  e.reset(2);
  metrics::GpuReading r;
  const double uj = 15.25e-6;  // J per count
  std::vector<double> got;
  for (uint64_t raw : {k32 - 300, k32 - 100, uint64_t{50}, uint64_t{400}}) {
    r.clear();
    e.update(1, raw, uj, &r);
    got.push_back(r.value[metrics::kEnergy]);
  }
  // The first value is the counter itself (the driver's reference point); then each step.
  EXPECT_DOUBLE_EQ(got[0], static_cast<double>(k32 - 300) * uj);
  EXPECT_DOUBLE_EQ(got[2], static_cast<double>(k32 + 50) * uj);
  EXPECT_DOUBLE_EQ(got[3], static_cast<double>(k32 + 400) * uj);
  for (size_t i = 1; i < got.size(); ++i) EXPECT_GE(got[i], got[i - 1]);
  r.clear();
  e.update(0, 7000, 1e-3, &r);  // NVML: mJ; devices are apart
  EXPECT_DOUBLE_EQ(r.value[metrics::kEnergy], 7.0);
}

TEST(Metrics, ChangePeriodIsTheCountersOwnRate) {
  // Read every 10 ms, changing every 50 ms: every interval between changes is 50 ms.
  metrics::ChangePeriod p;
  EXPECT_EQ(p.period_ns(), 0u);
  for (uint64_t t = 0; t <= 2000; t += 10) p.add(t * 1000000, static_cast<double>(t / 50));
  EXPECT_TRUE(p.seen());
  EXPECT_EQ(p.period_ns(), 50000000u);
  // Changing every 25 ms, seen at 10 ms readings: 20 and 30 ms apart in turn, 25 on average;
  // a late reading's long interval is left out.
  metrics::ChangePeriod q;
  for (uint64_t t = 0; t <= 3000; t += 10) {
    if (t > 1000 && t < 1400) continue;  // a stall
    q.add(t * 1000000, static_cast<double>(t / 25));
  }
  EXPECT_NEAR(static_cast<double>(q.period_ns()), 25e6, 0.5e6);
  // NaN (the library gave nothing) is not a value.
  metrics::ChangePeriod none;
  EXPECT_FALSE(none.add(1, std::nan("")));
  EXPECT_FALSE(none.seen());
}

TEST(Metrics, ChangePeriodSaysWhenAChangeIsSeenAndTheRecentPeriod) {
  // What the energy reader plans its next counter reading by: nothing before 8 intervals.
  metrics::ChangePeriod p;
  int changes = 0;
  for (uint64_t t = 0; t <= 1000; t += 10) {
    const bool changed = p.add(t * 1000000, static_cast<double>(t / 100));
    changes += changed;
    EXPECT_EQ(changed, t > 0 && t % 100 == 0) << t;
    if (changes < 9) EXPECT_EQ(p.recent_period_ns(), 0u) << t;
  }
  EXPECT_EQ(p.recent_period_ns(), 100000000u);
  EXPECT_FALSE(p.add(1001000000, 10.0));  // the same value again
}
