// Bounded runs (storage/step_keeper.hpp) through the real sink and SQLite: steps whose GPU
// records arrive late, blocks of steps at a time, as CUPTI hands them over.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "rocprof/info.hpp"
#include "storage/rocpd_sink.hpp"
#include "storage/sqlite_api.hpp"
#include "storage/step_keeper.hpp"
#include "tests/sqlite_scalar.hpp"

using namespace rocprof;

namespace {

int64_t scalar(const std::string& path, const std::string& query) {
  return rocprof::testing::sql_scalar(path, query, sql::kOpenReadOnly);
}

// Strings 1.. as the collector would intern them.
enum : uint32_t { kMarker = 1, kPush, kStep, kKernelCat, kGemm, kCopyCat, kD2H, kRuntime, kSync };

Record range(uint64_t start, uint64_t end) {
  Record r = make_record(RecordKind::kRegion, start, end, 7, kMarker, 0);
  r.flags = kFlagMessage;
  r.name_id = kPush;
  r.region.message_id = kStep;
  return r;
}

Record kernel(uint64_t start, uint64_t ns) {
  Record k = make_record(RecordKind::kKernelDispatch, start, start + ns, 7, kKernelCat, 0);
  k.name_id = kGemm;
  k.kernel.agent_id = gpu_agent_id(0);
  k.kernel.grid[0] = k.kernel.block[0] = 64;
  return k;
}

}  // namespace

TEST(StepKeeper, KeepPolicyText) {
  KeepPolicy p;
  std::string error;
  EXPECT_TRUE(parse_keep_policy("auto", &p, &error));
  EXPECT_EQ(p.mode, KeepPolicy::kAuto);
  EXPECT_TRUE(parse_keep_policy("slowest:7", &p, &error));
  EXPECT_EQ(p.mode, KeepPolicy::kSlowest);
  EXPECT_EQ(p.n, 7u);
  EXPECT_TRUE(parse_keep_policy("every:100", &p, &error));
  EXPECT_EQ(p.mode, KeepPolicy::kEvery);
  for (const char* bad : {"", "slowest", "slowest:", "slowest:0", "every:x", "all", "auto:3"})
    EXPECT_FALSE(parse_keep_policy(bad, &p, &error)) << bad;
}

TEST(StepKeeper, LateGpuRecordsGoWithTheirStepAndTheAnomaliesStayWhole) {
  SessionInfo info;
  info.path = std::string(::testing::TempDir()) + "/keeper_" + std::to_string(getpid()) + ".db";
  ::unlink(info.path.c_str());
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8a";
  info.pid = 42;
  info.max_size = 2'000'000;
  info.gpu_records = true;
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  sink.write_strings(
      1, {"MARKER_CORE_API", "roctxRangePushA", "step", "KERNEL_DISPATCH", "gemm", "MEMORY_COPY",
          "MEMORY_COPY_DEVICE_TO_HOST", "CUDA_RUNTIME_API", "cudaStreamSynchronize"});
  constexpr int kSteps = 600, kBlock = 50, kExtra = 200, kHost = 300, kPageable = 400;
  std::vector<uint64_t> starts;
  std::vector<Record> ranges, gpu;
  uint64_t t = 1'000'000'000;
  for (int i = 0; i < kSteps; ++i) {
    const uint64_t host = i == kHost ? 20'000'000 : 0;
    starts.push_back(t);
    const int kernels = i == kExtra ? 44 : 4;
    uint64_t g = t + 10'000 + host;
    for (int k = 0; k < kernels; ++k, g += 20'000) gpu.push_back(kernel(g, 15'000));
    if (i == kPageable) {
      Record c = make_record(RecordKind::kMemoryCopy, g, g + 2'000'000, 7, kCopyCat, 0);
      c.name_id = kD2H;
      c.copy.bytes = 8 << 20;
      c.copy.src_agent_id = gpu_agent_id(0);
      c.copy.dst_memory = static_cast<uint8_t>(MemoryKind::kPageable);
      gpu.push_back(c);
      g += 2'000'000;
    }
    Record sync = make_record(RecordKind::kRegion, g, g + 1'000, 7, kRuntime, 0);
    sync.name_id = kSync;
    ranges.push_back(sync);
    ranges.push_back(range(t, g + 5'000));
    t = g + 50'000;
    if ((i + 1) % kBlock == 0) {  // the ranges of a block, then its GPU records, late
      sink.write_records(ranges.data(), ranges.size());
      sink.write_records(gpu.data(), gpu.size());
      ranges.clear();
      gpu.clear();
      sink.commit();
    }
  }
  sink.close(t);
  ASSERT_TRUE(sink.closed_complete());
  struct stat st{};
  ASSERT_EQ(::stat(info.path.c_str(), &st), 0);
  EXPECT_LE(st.st_size, 2'000'000);
  const std::string& p = info.path;
  EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocprof_step_summary"), kSteps);
  EXPECT_EQ(scalar(p, "SELECT sum(kernels) FROM rocprof_step_summary"), kSteps * 4 + 40);
  EXPECT_EQ(scalar(p,
                   "SELECT json_extract(value, '$.records_late') FROM rocpd_metadata WHERE "
                   "tag = 'rocprof.bounded'"),
            0);
  const std::pair<int, const char*> planted[] = {
      {kExtra, "extra kernels"}, {kHost, "host time"}, {kPageable, "pageable copy"}};
  for (const auto& [step, cause] : planted) {
    const std::string s = std::to_string(step);
    EXPECT_EQ(scalar(p, "SELECT detail FROM rocprof_step_summary WHERE step = " + s), 1) << s;
    EXPECT_EQ(scalar(p, "SELECT causes LIKE '%" + std::string(cause) +
                            "%' FROM rocprof_step_summary WHERE step = " + s),
              1)
        << s;
    EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_kernel_dispatch WHERE start >= " +
                            std::to_string(starts[step]) + " AND start < " +
                            std::to_string(starts[step + 1])),
              step == kExtra ? 44 : 4)
        << s;
  }
  EXPECT_LT(scalar(p, "SELECT count(*) FROM rocprof_step_summary WHERE detail = 1"), 60);
  EXPECT_EQ(scalar(p, "SELECT count(*) FROM rocpd_memory_copy"), 1);
  ::unlink(p.c_str());
}
