// The SQLite sink writes the schema and rows a reader can count (read back through SQLite).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "storage/rocpd_sink.hpp"
#include "storage/sqlite_api.hpp"
#include "tests/sqlite_scalar.hpp"

using namespace rocprof;

namespace {

int64_t scalar(const std::string& path, const std::string& query) {
  return rocprof::testing::sql_scalar(path, query);
}

std::string temp_path(const char* name) {
  return std::string(::testing::TempDir()) + "/" + name + "_" + std::to_string(getpid()) + ".db";
}

}  // namespace

TEST(RocpdSink, SqliteIsFound) {
  std::string error;
  EXPECT_NE(sql::api(&error), nullptr) << error;
}

TEST(RocpdSink, SuffixFromGuid) {
  EXPECT_EQ(rocpd_suffix("0000ddb5-8903-7903-b269-cd8d3745bb8a"),
            "_0000ddb5_8903_7903_b269_cd8d3745bb8a");
}

TEST(RocpdSink, WritesSchemaMetadataAndRows) {
  SessionInfo info;
  info.path = temp_path("sink");
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8a";
  info.pid = 42;
  info.hostname = "host";
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  sink.write_strings(1, {"MARKER_CORE_API", "range-a", "KERNEL_DISPATCH", "kern"});
  Record r{};
  r.kind = RecordKind::kRegion;
  r.flags = kFlagMessage;
  r.tid = 7;
  r.start = 100;
  r.end = 200;
  r.category_id = 1;
  r.name_id = 2;
  sink.write_records(&r, 1);
  Record k{};
  k.kind = RecordKind::kKernelDispatch;
  k.start = 300;
  k.end = 400;
  k.category_id = 3;
  k.name_id = 4;
  k.kernel.agent_id = gpu_agent_id(0);
  k.kernel.grid[0] = 1024;
  k.kernel.block[0] = 256;
  sink.write_records(&k, 1);
  sink.write_info(ThreadInfo{7, 50, 0, "main"});
  sink.commit();
  EXPECT_FALSE(sink.closed_complete());
  sink.close(500);
  EXPECT_TRUE(sink.closed_complete());
  const std::string& p = info.path;
  EXPECT_EQ(scalar(p, "SELECT value FROM rocpd_metadata WHERE tag='schema_version'"), 3);
  EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_region_0000ddb5_8903_7903_b269_cd8d3745bb8a"), 1);
  EXPECT_EQ(scalar(p, "SELECT duration FROM regions WHERE name='range-a'"), 100);
  EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_kernel_dispatch WHERE grid_size_x=1024"), 1);
  EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_event"), 2);
  EXPECT_EQ(scalar(p, "SELECT fini FROM rocpd_info_process WHERE pid=42"), 500);
  EXPECT_EQ(scalar(p, "SELECT \"end\" FROM rocpd_info_thread WHERE tid=7"), 500);
  EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_info_agent WHERE type='CPU'"), 1);
  std::remove(p.c_str());
}

TEST(RocpdSink, UnwritablePathFailsWithMessage) {
  // A regular file where a folder should be: no mkdir can make this path (even as root).
  const std::string blocker = temp_path("blocker");
  std::FILE* f = std::fopen(blocker.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  SessionInfo info;
  info.path = blocker + "/sub/x.db";
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8a";
  RocpdSink sink;
  std::string error;
  EXPECT_FALSE(sink.open(info, &error));
  EXPECT_FALSE(error.empty());
  std::remove(blocker.c_str());
}

// Counter values find their dispatch's event whichever arrives first, by the launch's
// correlation id or its other one; a value whose dispatch never comes is counted, not stored.
TEST(RocpdSink, CounterValuesPairWithTheirDispatch) {
  SessionInfo info;
  info.path = temp_path("pmc");
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8b";
  info.pid = 42;
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  sink.write_strings(1, {"KERNEL_DISPATCH"});
  PmcInfo bytes;
  bytes.key = 7;
  bytes.agent_id = gpu_agent_id(0);
  bytes.name = bytes.symbol = "dram__bytes_read.sum";
  bytes.component = "cupti";
  sink.write_info(bytes);
  auto value = [](uint64_t corr, uint64_t alt, double v) {
    Record r{};
    r.kind = RecordKind::kPmcValue;
    r.correlation_id = corr;
    r.pmc.pmc_key = 7;
    r.pmc.agent_id = gpu_agent_id(0);
    r.pmc.value = v;
    r.pmc.alt_correlation_id = alt;
    return r;
  };
  auto dispatch = [](uint64_t corr, uint64_t start) {
    Record k{};
    k.kind = RecordKind::kKernelDispatch;
    k.correlation_id = corr;
    k.start = start;
    k.end = start + 10;
    k.category_id = 1;
    k.kernel.agent_id = gpu_agent_id(0);
    k.kernel.dispatch_id = corr;
    return k;
  };
  Record rs[] = {value(10, 0, 1000.0),  // before its dispatch
                 dispatch(10, 100),     dispatch(11, 200), value(11, 0, 2000.0),  // after it
                 value(12, 13, 3000.0),                      // the dispatch carries the other id
                 dispatch(13, 300),     value(99, 0, 1.0)};  // never matched
  sink.write_records(rs, sizeof rs / sizeof rs[0]);
  sink.close(500);
  const std::string& p = info.path;
  EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_pmc_event"), 3);
  EXPECT_EQ(scalar(p, "SELECT counter_value FROM pmc_events WHERE dispatch_id=10"), 1000);
  EXPECT_EQ(scalar(p, "SELECT counter_value FROM pmc_events WHERE dispatch_id=11"), 2000);
  EXPECT_EQ(scalar(p, "SELECT value FROM counters_collection WHERE dispatch_id=13"), 3000);
  EXPECT_EQ(
      scalar(p, "SELECT value FROM rocpd_metadata WHERE tag='rocprof.counters.unmatched_values'"),
      1);
  EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_info_pmc WHERE component='cupti' AND agent_id=2"),
            1);
  std::remove(p.c_str());
}

// A PC sample that knows its dispatch and the sampled wave's state (AMD's samples) keeps both:
// dispatch_id joins the dispatch's row, extdata holds the state; NVIDIA's rows keep NULL, {}.
TEST(RocpdSink, PcSamplesKeepTheirDispatchAndWaveState) {
  SessionInfo info;
  info.path = temp_path("pc_wave");
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8c";
  info.pid = 42;
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  sink.write_strings(1, {"PC_SAMPLING", "_Z3hotPf", "waitcnt", "lds"});
  auto sample = [](uint64_t dispatch, uint32_t flags) {
    Record r = make_record(RecordKind::kPcSample, 100, 100, 0, 1, 9);
    r.name_id = 2;
    r.pc.pc_offset = 0x40;
    r.pc.samples = 1;
    r.pc.dispatch_id = dispatch;
    r.pc.flags = flags;
    r.pc.exec_mask = 0xf0000000000000ffull;
    r.pc.wave_count = 3;
    r.pc.inst_type_id = 4;
    r.pc.stall_reason_id = 3;
    return r;
  };
  Record rs[] = {sample(5, kPcSampleExecMask | kPcSampleWaveState), sample(0, 0)};
  sink.write_records(rs, 2);
  sink.close(500);
  const std::string& p = info.path;
  EXPECT_EQ(scalar(p,
                   "SELECT dispatch_id FROM pc_samples WHERE json_extract(extdata, '$.exec_mask') "
                   "= '0xf0000000000000ff' AND json_extract(extdata, '$.wave_count') = 3 AND "
                   "json_extract(extdata, '$.wave_issued') = 0 AND "
                   "json_extract(extdata, '$.inst_type') = 'lds' AND stall_reason = 'waitcnt'"),
            5);
  EXPECT_EQ(
      scalar(p, "SELECT count(*) FROM pc_samples WHERE dispatch_id IS NULL AND extdata = '{}'"), 1);
  std::remove(p.c_str());
}

// Recorded text is cut as it is written, wherever the string falls in a batch (first, middle,
// alone), and everything derived from it (the event's {"message": ...}) sees only the cut text;
// two texts cut to one stay two strings (rocpd_string is UNIQUE).
TEST(RocpdSink, RecordedTextIsRedactedInStringsAndEveryRowMadeFromThem) {
  SessionInfo info;
  info.path = temp_path("redact");
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8a";
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  sink.write_strings(1, {"fetch https://a:pw-one@h/x", "MARKER_CORE_API", "roctxRangePushA",
                         "fetch https://a:pw-two@h/x"});
  sink.write_strings(5, {"plain", "fetch https://a:pw-three@h/x"});
  for (uint32_t message : {1u, 4u, 5u, 6u}) {
    Record r{};
    r.kind = RecordKind::kRegion;
    r.flags = kFlagMessage;
    r.tid = 7;
    r.start = 100 * message;
    r.end = r.start + 10;
    r.category_id = 2;
    r.name_id = 3;
    r.region.message_id = message;
    sink.write_records(&r, 1);
  }
  sink.close(1000);
  const std::string& p = info.path;
  for (const char* secret : {"pw-one", "pw-two", "pw-three"}) {
    const std::string like = std::string("'%") + secret + "%'";
    EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_string WHERE string LIKE " + like), 0);
    EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_event WHERE extdata LIKE " + like), 0);
  }
  EXPECT_EQ(scalar(p,
                   "SELECT count(*) FROM rocpd_string WHERE string LIKE "
                   "'fetch https://a:<redacted>@h/x%'"),
            3);
  EXPECT_EQ(scalar(p,
                   "SELECT count(*) FROM rocpd_event WHERE extdata LIKE "
                   "'%https://a:<redacted>@h/x%'"),
            3);
  EXPECT_EQ(
      scalar(p, "SELECT count(*) FROM regions WHERE json_extract(extdata, '$.message') = 'plain'"),
      1);
  EXPECT_EQ(scalar(p,
                   "SELECT json_extract(value, '$.text') FROM rocpd_metadata "
                   "WHERE tag = 'rocprof.redacted'"),
            3);
  std::remove(p.c_str());
}
