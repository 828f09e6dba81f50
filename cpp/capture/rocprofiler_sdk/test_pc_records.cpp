// AMD PC sampling without the SDK: records built from the real rocprofiler-sdk pc_sampling.h
// structs go through emit_records into a FakeCaptureContext (every field checked), and through
// the real rocpd sink into a database whose pc_samples view is read back. Also the interval
// chosen from a GPU's configurations, the kernel table and the dispatch ring.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "pc_sampling.hpp"
#include "rocprof/info.hpp"
#include "storage/rocpd_sink.hpp"
#include "storage/sqlite_api.hpp"
#include "tests/fake_capture_context.hpp"
#include "tests/sqlite_scalar.hpp"

namespace rocprof::sdk {
namespace {

using rocprof::testing::FakeCaptureContext;

rocprofiler_pc_sampling_configuration_t config(rocprofiler_pc_sampling_method_t m,
                                               rocprofiler_pc_sampling_unit_t u, size_t lo,
                                               size_t hi, uint64_t flags) {
  rocprofiler_pc_sampling_configuration_t c{};
  c.size = sizeof c;
  c.method = m;
  c.unit = u;
  c.min_interval = lo;
  c.max_interval = hi;
  c.flags = flags;
  return c;
}

const std::vector<rocprofiler_pc_sampling_configuration_t> kMi300 = {
    config(ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP, ROCPROFILER_PC_SAMPLING_UNIT_TIME, 1, 1000000,
           ROCPROFILER_PC_SAMPLING_CONFIGURATION_FLAGS_NONE),
    config(ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC, ROCPROFILER_PC_SAMPLING_UNIT_CYCLES, 256,
           1ull << 31, ROCPROFILER_PC_SAMPLING_CONFIGURATION_FLAGS_INTERVAL_POW2)};

TEST(SdkPcInterval, DefaultsAreRocprofv3sDocumentedOnes) {
  uint64_t v = 0;
  std::string why;
  ASSERT_TRUE(choose_interval(kMi300, ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP,
                              ROCPROFILER_PC_SAMPLING_UNIT_TIME, 0, &v, &why));
  EXPECT_EQ(v, 1u);
  ASSERT_TRUE(choose_interval(kMi300, ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC,
                              ROCPROFILER_PC_SAMPLING_UNIT_CYCLES, 0, &v, &why));
  EXPECT_EQ(v, 1u << 20);
}

TEST(SdkPcInterval, PowerOfTwoWhereTheGpuDemandsIt) {
  uint64_t v = 0;
  std::string why;
  ASSERT_TRUE(choose_interval(kMi300, ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC,
                              ROCPROFILER_PC_SAMPLING_UNIT_CYCLES, 1000000, &v, &why));
  EXPECT_EQ(v, 1u << 20);  // 1048576 is the nearest
  ASSERT_TRUE(choose_interval(kMi300, ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP,
                              ROCPROFILER_PC_SAMPLING_UNIT_TIME, 10, &v, &why));
  EXPECT_EQ(v, 10u);  // host-trap takes any value in range
}

TEST(SdkPcInterval, RefusalsNameTheOptionAndWhatTheGpuOffers) {
  uint64_t v = 0;
  std::string why;
  EXPECT_FALSE(choose_interval(kMi300, ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP,
                               ROCPROFILER_PC_SAMPLING_UNIT_CYCLES, 0, &v, &why));
  EXPECT_NE(why.find("--pc-sampling-unit cycles"), std::string::npos) << why;
  EXPECT_NE(why.find("host_trap by time (1..1000000)"), std::string::npos) << why;
  EXPECT_FALSE(choose_interval({kMi300[0]}, ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC,
                               ROCPROFILER_PC_SAMPLING_UNIT_CYCLES, 0, &v, &why));
  EXPECT_NE(why.find("no stochastic PC sampler"), std::string::npos) << why;
  EXPECT_FALSE(choose_interval(kMi300, ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP,
                               ROCPROFILER_PC_SAMPLING_UNIT_TIME, 5000000, &v, &why));
  EXPECT_NE(why.find("--pc-sampling-interval 5000000 is outside"), std::string::npos) << why;
  EXPECT_FALSE(choose_interval({}, ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP,
                               ROCPROFILER_PC_SAMPLING_UNIT_TIME, 0, &v, &why));
  EXPECT_NE(why.find("offers no PC sampling"), std::string::npos) << why;
}

TEST(SdkPcKernels, ByIdAndByPc) {
  Kernels k;
  k.code_object(7, 0x10000, 0x4000);
  k.kernel(1, 7, "_Z3hotPf.kd", 0x10100);
  k.kernel(2, 7, "_Z4coldPf.kd", 0x10800);
  // A kernel reported before its code object: placed once the code object comes.
  k.kernel(3, 8, "_Z4latev.kd", 0x20100);
  EXPECT_EQ(k.by_id(1), "_Z3hotPf");  // ".kd" cut, as the HSA backend stores kernel_name
  EXPECT_EQ(k.by_id(9), "");
  EXPECT_EQ(k.by_pc(7, 0x100), "_Z3hotPf");
  EXPECT_EQ(k.by_pc(7, 0x7fc), "_Z3hotPf");
  EXPECT_EQ(k.by_pc(7, 0x800), "_Z4coldPf");
  EXPECT_EQ(k.by_pc(7, 0x80), "");  // before the first kernel
  EXPECT_EQ(k.by_pc(8, 0x100), "");
  k.code_object(8, 0x20000, 0x1000);
  EXPECT_EQ(k.by_pc(8, 0x104), "_Z4latev");
}

TEST(SdkPcDispatches, RingKeepsTheLastAndForgetsOverwritten) {
  DispatchRing ring;
  ring.put(5, DispatchInfo{17, 900, 1, 3});
  DispatchInfo d;
  ASSERT_TRUE(ring.get(5, &d));
  EXPECT_EQ(d.dispatch_id, 17u);
  EXPECT_EQ(d.correlation_id, 900u);
  EXPECT_EQ(d.kernel_id, 1u);
  EXPECT_EQ(d.agent, 3u);
  EXPECT_FALSE(ring.get(6, &d));
  EXPECT_FALSE(ring.get(0, &d));
  ring.put(5 + DispatchRing::kSize, DispatchInfo{18, 901, 2, 3});
  EXPECT_FALSE(ring.get(5, &d));  // its slot was taken by a later dispatch
}

TEST(SdkPcNames, ShortNamesOfTheSdksEnums) {
  EXPECT_EQ(short_name("ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT",
                       "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_", 3),
            "waitcnt");
  EXPECT_EQ(short_name(nullptr, "X_", 4), "value_4");
}

const char* inst_name(rocprofiler_pc_sampling_instruction_type_t t) {
  return t == ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_VALU
             ? "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_VALU"
             : nullptr;
}
const char* reason_name(rocprofiler_pc_sampling_instruction_not_issued_reason_t r) {
  return r == ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT
             ? "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT"
             : nullptr;
}

// A delivery as the SDK hands it over: host-trap and stochastic samples, an invalid one and a
// record of another category.
struct Delivery {
  rocprofiler_pc_sampling_record_host_trap_v0_t trap{};
  rocprofiler_pc_sampling_record_stochastic_v0_t issued{}, waiting{};
  rocprofiler_pc_sampling_record_invalid_t invalid{};
  rocprofiler_record_header_t h[5]{};
  rocprofiler_record_header_t* ptrs[5]{};
  Delivery() {
    trap.size = sizeof trap;
    trap.pc = {7, 0x140};
    trap.exec_mask = 0xffffffffffffffffull;
    trap.timestamp = 5000;
    trap.dispatch_id = 1;  // in the ring: ours 17
    trap.correlation_id.internal = 44;
    issued.size = sizeof issued;
    issued.pc = {7, 0x810};
    issued.exec_mask = 0xff;
    issued.timestamp = 6000;
    issued.dispatch_id = 2;  // not in the ring: named by its PC
    issued.wave_issued = 1;
    issued.inst_type = ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_VALU;
    issued.wave_count = 6;
    waiting = issued;
    waiting.wave_issued = 0;
    waiting.pc = {9, 0x10};  // unknown code object: no kernel name at all
    waiting.snapshot.reason_not_issued =
        ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT;
    waiting.inst_type = ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_NO_INST;
    invalid.size = sizeof invalid;
    auto set = [this](int i, uint32_t cat, uint32_t kind, void* p) {
      h[i].category = cat;
      h[i].kind = kind;
      h[i].payload = p;
      ptrs[i] = &h[i];
    };
    set(0, ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING,
        ROCPROFILER_PC_SAMPLING_RECORD_HOST_TRAP_V0_SAMPLE, &trap);
    set(1, ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING,
        ROCPROFILER_PC_SAMPLING_RECORD_STOCHASTIC_V0_SAMPLE, &issued);
    set(2, ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING,
        ROCPROFILER_PC_SAMPLING_RECORD_STOCHASTIC_V0_SAMPLE, &waiting);
    set(3, ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING, ROCPROFILER_PC_SAMPLING_RECORD_INVALID_SAMPLE,
        &invalid);
    set(4, ROCPROFILER_BUFFER_CATEGORY_TRACING, 1, nullptr);
  }
};

struct World {
  FakeCaptureContext c;
  Kernels kernels;
  DispatchRing ring;
  Vocabulary names;
  Source src;
  World() {
    kernels.code_object(7, 0x10000, 0x4000);
    kernels.kernel(1, 7, "_Z3hotPf.kd", 0x10100);
    kernels.kernel(2, 7, "_Z4coldPf.kd", 0x10800);
    ring.put(1, DispatchInfo{17, 900, 1, 3});
    names = make_vocabulary(c, inst_name, reason_name);
    src = Source{gpu_agent_id(1), &kernels, &ring, &names, c.intern("PC_SAMPLING")};
  }
};

TEST(SdkPcMapping, EveryField) {
  World w;
  Delivery d;
  Totals t;
  emit_records(w.c, w.src, d.ptrs, 5, &t);
  ASSERT_EQ(w.c.records.size(), 3u);
  const Record& r = w.c.records[0];
  EXPECT_EQ(r.kind, RecordKind::kPcSample);
  EXPECT_EQ(r.start, 5000u);
  EXPECT_EQ(r.end, 5000u);
  EXPECT_EQ(w.c.text(r.category_id), "PC_SAMPLING");
  EXPECT_EQ(w.c.text(r.name_id), "_Z3hotPf");  // the dispatch's kernel
  EXPECT_EQ(r.correlation_id, 900u);           // the HSA backend's, handed over
  EXPECT_EQ(r.pc.dispatch_id, 17u);
  EXPECT_EQ(r.pc.code_object, 7u);
  EXPECT_EQ(r.pc.pc_offset, 0x140u);
  EXPECT_EQ(r.pc.samples, 1u);
  EXPECT_EQ(r.pc.agent_id, gpu_agent_id(1));
  EXPECT_EQ(r.pc.exec_mask, 0xffffffffffffffffull);
  EXPECT_EQ(r.pc.flags, static_cast<uint32_t>(kPcSampleExecMask));  // host-trap: no wave state
  EXPECT_EQ(r.pc.stall_reason_id, 0u);
  EXPECT_EQ(r.pc.line, 0u);
  const Record& s = w.c.records[1];
  EXPECT_EQ(w.c.text(s.name_id), "_Z4coldPf");  // by PC: its dispatch left the ring
  EXPECT_EQ(s.pc.dispatch_id, 0u);
  EXPECT_EQ(s.correlation_id, 0u);
  EXPECT_EQ(s.pc.flags,
            static_cast<uint32_t>(kPcSampleExecMask | kPcSampleWaveState | kPcSampleIssued));
  EXPECT_EQ(w.c.text(s.pc.stall_reason_id), "issued");
  EXPECT_EQ(w.c.text(s.pc.inst_type_id), "valu");
  EXPECT_EQ(s.pc.wave_count, 6u);
  const Record& u = w.c.records[2];
  EXPECT_EQ(w.c.text(u.name_id), "(unknown kernel)");
  EXPECT_EQ(w.c.text(u.pc.stall_reason_id), "waitcnt");
  EXPECT_EQ(u.pc.flags & kPcSampleIssued, 0u);
  EXPECT_EQ(u.pc.flags & kPcSampleNotIssued, 0u);      // a sample of its own, not NVIDIA's subset
  EXPECT_EQ(w.c.text(u.pc.inst_type_id), "value_15");  // a type the SDK did not name
  EXPECT_EQ(t.samples, 3u);
  EXPECT_EQ(t.invalid, 1u);
  EXPECT_EQ(t.other, 1u);
  EXPECT_EQ(t.deliveries, 1u);
  EXPECT_EQ(t.without_dispatch, 2u);
  EXPECT_EQ(t.without_kernel, 1u);
}

int64_t scalar(const std::string& path, const std::string& query) {
  return rocprof::testing::sql_scalar(path, query);
}

TEST(SdkPcMapping, ThroughTheSinkIntoPcSamples) {
  World w;
  Delivery d;
  Totals t;
  emit_records(w.c, w.src, d.ptrs, 5, &t);
  SessionInfo info;
  info.path = std::string(::testing::TempDir()) + "/sdk_pc_" + std::to_string(getpid()) + ".db";
  std::remove(info.path.c_str());
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8a";
  info.pid = 42;
  info.hostname = "host";
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  sink.write_strings(1, w.c.strings);
  sink.write_records(w.c.records.data(), w.c.records.size());
  sink.commit();
  sink.close(9000);
  const std::string& p = info.path;
  EXPECT_EQ(scalar(p, "SELECT COUNT(*) FROM pc_samples"), 3);
  EXPECT_EQ(scalar(p,
                   "SELECT dispatch_id FROM pc_samples WHERE kernel_name = '_Z3hotPf' AND "
                   "pc_offset = 320 AND code_object = 7 AND correlation_id = 900 AND "
                   "start = 5000 AND count = 1 AND stall_reason IS NULL AND line IS NULL"),
            17);
  EXPECT_EQ(scalar(p, "SELECT COUNT(*) FROM pc_samples WHERE dispatch_id IS NULL"), 2);
  // The wave's state in extdata: the mask as hex text (64-bit unsigned), the rest as numbers.
  EXPECT_EQ(scalar(p,
                   "SELECT COUNT(*) FROM pc_samples WHERE json_extract(extdata, '$.exec_mask') = "
                   "'0xffffffffffffffff' AND json_extract(extdata, '$.wave_count') IS NULL"),
            1);
  EXPECT_EQ(scalar(p,
                   "SELECT json_extract(extdata, '$.wave_count') FROM pc_samples WHERE "
                   "stall_reason = 'issued' AND json_extract(extdata, '$.inst_type') = 'valu' AND "
                   "json_extract(extdata, '$.wave_issued') = 1 AND "
                   "json_extract(extdata, '$.exec_mask') = '0x00000000000000ff'"),
            6);
  EXPECT_EQ(scalar(p,
                   "SELECT json_extract(extdata, '$.wave_issued') FROM pc_samples WHERE "
                   "stall_reason = 'waitcnt'"),
            0);
  std::remove(p.c_str());
}

}  // namespace
}  // namespace rocprof::sdk
