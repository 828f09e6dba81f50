// PC sampling without a GPU: parsed buffers built from the real cupti_pcsampling.h structs go
// through emit_buffer into a FakeCaptureContext (every field checked), and the records it made
// go through the real rocpd sink into a database whose pc_samples view is read back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "pc_sampling.hpp"
#include "storage/rocpd_sink.hpp"
#include "storage/sqlite_api.hpp"
#include "tests/fake_capture_context.hpp"
#include "tests/sqlite_scalar.hpp"

namespace rocprof::cupti::pc {
namespace {

using rocprof::testing::FakeCaptureContext;

TEST(PcSamplingPeriod, CyclesRoundToThePowerOfTwo) {
  uint32_t e = 0;
  std::string why;
  ASSERT_TRUE(period_exponent("cycles", 1000, 0, &e, &why));
  EXPECT_EQ(e, 10u);  // 1024 is the nearest power of two
  ASSERT_TRUE(period_exponent("cycles", 1, 0, &e, &why));
  EXPECT_EQ(e, kMinPeriodExp);  // the hardware's shortest period
  ASSERT_TRUE(period_exponent("cycles", 0xffffffffu, 0, &e, &why));
  EXPECT_EQ(e, 31u);
  ASSERT_TRUE(period_exponent("cycles", 0, 0, &e, &why));
  EXPECT_EQ(e, 0u);  // CUPTI's default
}

TEST(PcSamplingPeriod, TimeUsesTheSmClock) {
  uint32_t e = 0;
  std::string why;
  // 1 us at 1980 MHz = 1980 cycles -> 2^11 = 2048.
  ASSERT_TRUE(period_exponent("time", 1, 1980000, &e, &why));
  EXPECT_EQ(e, 11u);
  EXPECT_FALSE(period_exponent("time", 1, 0, &e, &why));
  EXPECT_NE(why.find("SM clock"), std::string::npos);
}

TEST(PcSamplingPeriod, InstructionsAreRefusedWithTheReason) {
  uint32_t e = 0;
  std::string why;
  EXPECT_FALSE(period_exponent("instructions", 100, 1000, &e, &why));
  EXPECT_NE(why.find("cycles or time"), std::string::npos) << why;
}

TEST(PcSamplingStalls, ShortNames) {
  bool ni = true;
  EXPECT_EQ(short_stall_name("smsp__pcsamp_warps_issue_stalled_long_scoreboard", &ni),
            "long_scoreboard");
  EXPECT_FALSE(ni);
  EXPECT_EQ(short_stall_name("smsp__pcsamp_warps_issue_stalled_math_pipe_throttle_not_issued", &ni),
            "math_pipe_throttle");
  EXPECT_TRUE(ni);
  EXPECT_EQ(short_stall_name("something_else", &ni), "something_else");
}

// A parsed buffer as CUPTI hands it back: two PCs of one kernel, reasons by CUPTI index.
struct Synthetic {
  CUpti_PCSamplingData data{};
  CUpti_PCSamplingPCData pcs[2]{};
  CUpti_PCSamplingStallReason r0[2]{}, r1[3]{};
  char name[32] = "_Z7hotloopPfi";
  Synthetic() {
    data.size = sizeof data;
    data.collectNumPcs = 2;
    data.totalNumPcs = 2;
    data.totalSamples = 130;
    data.droppedSamples = 3;
    data.nonUsrKernelsTotalSamples = 7;
    data.rangeId = 5;
    data.pPcData = pcs;
    r0[0] = {11, 100};  // long_scoreboard
    r0[1] = {12, 60};   // long_scoreboard, not issued (a subset of the 100)
    r1[0] = {20, 20};   // selected
    r1[1] = {11, 0};    // no samples: no record
    r1[2] = {99, 4};    // an index CUPTI did not list: kept, without a reason
    pcs[0] = {sizeof(CUpti_PCSamplingPCData), 0xfedcba9876543210ull, 0x80, 3, 0, name, 2, r0, 0};
    pcs[1] = {sizeof(CUpti_PCSamplingPCData), 0xfedcba9876543210ull, 0x90, 3, 0, name, 3, r1, 0};
  }
};

StallNames stalls(FakeCaptureContext& c) {
  StallNames s;
  s.by_index[11] = {c.intern("long_scoreboard"), false};
  s.by_index[12] = {c.intern("long_scoreboard"), true};
  s.by_index[20] = {c.intern("selected"), false};
  return s;
}

TEST(PcSamplingMapping, EveryField) {
  FakeCaptureContext c;
  Synthetic b;
  const StallNames names = stalls(c);
  const uint32_t category = c.intern("PC_SAMPLING");
  const uint32_t file = c.intern("/src/hot.cu");
  const SourceLookup source = [file](uint64_t crc, const char* fn, uint64_t pc) {
    EXPECT_EQ(crc, 0xfedcba9876543210ull);
    EXPECT_STREQ(fn, "_Z7hotloopPfi");
    return pc == 0x80 ? SourceLine{file, 42} : SourceLine{};
  };
  Totals t;
  emit_buffer(c, b.data, names, source, gpu_agent_id(1), category, 1000, 2000, &t);
  ASSERT_EQ(c.records.size(), 4u);
  const Record& r = c.records[0];
  EXPECT_EQ(r.kind, RecordKind::kPcSample);
  EXPECT_EQ(r.start, 1000u);
  EXPECT_EQ(r.end, 2000u);
  EXPECT_EQ(r.category_id, category);
  EXPECT_EQ(c.text(r.name_id), "_Z7hotloopPfi");
  EXPECT_EQ(r.correlation_id, 0u);  // continuous mode
  EXPECT_EQ(r.pc.code_object, 0xfedcba9876543210ull);
  EXPECT_EQ(r.pc.pc_offset, 0x80u);
  EXPECT_EQ(r.pc.samples, 100u);
  EXPECT_EQ(r.pc.range_id, 5u);
  EXPECT_EQ(r.pc.agent_id, gpu_agent_id(1));
  EXPECT_EQ(r.pc.function_index, 3u);
  EXPECT_EQ(c.text(r.pc.stall_reason_id), "long_scoreboard");
  EXPECT_EQ(r.pc.flags, 0u);
  EXPECT_EQ(c.text(r.pc.source_file_id), "/src/hot.cu");
  EXPECT_EQ(r.pc.line, 42u);
  EXPECT_EQ(c.records[1].pc.samples, 60u);
  EXPECT_EQ(c.records[1].pc.flags, static_cast<uint32_t>(kPcSampleNotIssued));
  EXPECT_EQ(c.text(c.records[2].pc.stall_reason_id), "selected");
  EXPECT_EQ(c.records[2].pc.line, 0u);
  EXPECT_EQ(c.records[3].pc.stall_reason_id, 0u);
  EXPECT_EQ(c.records[3].pc.samples, 4u);
  EXPECT_EQ(t.records, 4u);
  EXPECT_EQ(t.samples, 124u);  // the not-issued subset is not counted twice
  EXPECT_EQ(t.total_samples, 130u);
  EXPECT_EQ(t.dropped, 3u);
  EXPECT_EQ(t.non_user, 7u);
  EXPECT_EQ(t.no_line, 24u);
  EXPECT_EQ(t.fetches, 1u);
}

int64_t scalar(const std::string& path, const std::string& query) {
  return rocprof::testing::sql_scalar(path, query);
}

TEST(PcSamplingMapping, ThroughTheSinkIntoPcSamples) {
  FakeCaptureContext c;
  Synthetic b;
  const StallNames names = stalls(c);
  const uint32_t category = c.intern("PC_SAMPLING");
  const uint32_t file = c.intern("/src/hot.cu");
  Totals t;
  emit_buffer(
      c, b.data, names,
      [file](uint64_t, const char*, uint64_t pc) {
        return pc == 0x80 ? SourceLine{file, 42} : SourceLine{};
      },
      gpu_agent_id(0), category, 1000, 2000, &t);
  SessionInfo info;
  info.path = std::string(::testing::TempDir()) + "/pc_" + std::to_string(getpid()) + ".db";
  std::remove(info.path.c_str());
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8a";
  info.pid = 42;
  info.hostname = "host";
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  sink.write_strings(1, c.strings);
  sink.write_records(c.records.data(), c.records.size());
  sink.commit();
  sink.close(3000);
  const std::string& p = info.path;
  EXPECT_EQ(scalar(p, "SELECT COUNT(*) FROM pc_samples"), 4);
  EXPECT_EQ(scalar(p, "SELECT SUM(count) FROM pc_samples WHERE not_issued = 0"), 124);
  EXPECT_EQ(scalar(p,
                   "SELECT count FROM pc_samples WHERE kernel_name = '_Z7hotloopPfi' AND "
                   "stall_reason = 'long_scoreboard' AND not_issued = 0 AND line = 42 AND "
                   "source_file = '/src/hot.cu' AND pc_offset = 128 AND "
                   "instruction_comment = '/src/hot.cu:42'"),
            100);
  // The CRC's 64 bits survive as a signed integer.
  EXPECT_EQ(static_cast<uint64_t>(scalar(p, "SELECT code_object FROM rocpd_pc_sample LIMIT 1")),
            0xfedcba9876543210ull);
  // Every row has its event, of category PC_SAMPLING.
  EXPECT_EQ(scalar(p,
                   "SELECT COUNT(*) FROM rocpd_pc_sample P JOIN rocpd_event E ON E.id = "
                   "P.event_id JOIN rocpd_string S ON S.id = E.category_id WHERE S.string = "
                   "'PC_SAMPLING'"),
            4);
  std::remove(p.c_str());
}

}  // namespace
}  // namespace rocprof::cupti::pc
