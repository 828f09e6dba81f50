// GPU metrics through rocprofiler-sdk's device counting service without an AMD GPU: a TEST-ONLY
// stand-in of the SDK's entry points (the real rocprofiler-sdk structs: agents, counter ids,
// counter records), handed in an Api table to the sampler's real entry points (sdk_initialize,
// session_start, session_stop, sdk_finalize), with stand-in GPUs whose counters grow by set
// amounts per read, per dimension instance. Checked: each metric's formula over the differences
// between reads (percentages of elapsed cycles, a rate per second from the read times), repeated
// values stored once and each track ended at the last read, a phase change stamped at the read
// that opened its interval, contexts started before HSA read once HSA starts them, a chip
// without a counter and a set over a block's counter limit leaving metrics out with their
// reasons, a read needing more records than the first buffer, a failed read counted, a session
// asked too late, and the tracks through the real rocpd sink.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "capture/settings.hpp"
#include "device_counting.hpp"
#include "rocprof/info.hpp"
#include "storage/rocpd_sink.hpp"
#include "tests/fake_capture_context.hpp"
#include "tests/sqlite_scalar.hpp"

namespace rocprof::sdk::dc {
namespace {

using rocprof::testing::FakeCaptureContext;

// ---- the stand-in SDK ---------------------------------------------------------------------
struct StandinCounter {
  const char* name;
  const char* block;  // the block whose counters it uses (limits below)
  uint32_t cost;      // hardware counters it takes in that block
  uint32_t instances;
  double per_read;             // what each instance gains per read (phase 1)
  double per_read_later = -1;  // from read `g_phase_at` on (-1: unchanged)
};
// Per read, per instance: GRBM 8 instances (XCCs), SQ 2048 (more records than a first buffer).
const std::vector<StandinCounter> kCounters = {
    {"GRBM_GUI_ACTIVE", "GRBM", 1, 8, 250, 1000},        // 25 %, then 100 % busy
    {"GRBM_COUNT", "GRBM", 1, 8, 1000},                  // 1000 cycles per read
    {"SQ_VALU_MFMA_BUSY_CYCLES", "SQ", 1, 2048, 237.5},  // 40 % of 1216 SIMDs
    {"SQ_BUSY_CU_CYCLES", "SQ", 1, 2048, 18.5546875},    // 50 % of 304 CUs (quad-cycles)
    {"SQ_WAVE_CYCLES", "SQ", 1, 2048, 237.5},            // 20 % of 304 CUs x 32 slots
    {"FETCH_SIZE", "TCC", 3, 1, 1024},                   // 1 MiB per read
    {"WRITE_SIZE", "TCC", 2, 1, 512},
    {"TCC_HIT_sum", "TCC", 1, 1, 90},
    {"TCC_MISS_sum", "TCC", 1, 1, 10},
    {"SQ_INSTS_VALU_MFMA_MOPS_F16", "SQ", 1, 2048, 0},
    {"SQ_INSTS_VALU_MFMA_MOPS_BF16", "SQ", 1, 2048, 0.5},  // 1024 x 512 ops per read
    {"SQ_INSTS_VALU_MFMA_MOPS_F32", "SQ", 1, 2048, 0},
    {"SQ_INSTS_VALU_MFMA_MOPS_F64", "SQ", 1, 2048, 0},
    {"SQ_INSTS_VALU_MFMA_MOPS_F8", "SQ", 1, 2048, 0},
    {"SQ_WAVES", "SQ", 1, 2048, 1}};
// Counters per block in one pass: the TCC's six leave the L2 hit rate out after the two sizes.
const std::map<std::string, uint32_t> kLimits = {{"GRBM", 2}, {"SQ", 8}, {"TCC", 6}};

struct StandinGpu {
  uint64_t handle;
  const char* name;
  bool has_f8;
  rocprofiler_context_id_t ctx{};
  rocprofiler_device_counting_service_cb_t cb = nullptr;
  void* cb_data = nullptr;
  uint64_t config = 0;  // the config set at the context's start
  bool started = false;
  uint64_t reads = 0;
  std::vector<double> totals;  // per counter, per instance: cumulative since start
};

StandinGpu gpu(uint64_t handle, const char* name, bool has_f8) {
  StandinGpu g{};
  g.handle = handle;
  g.name = name;
  g.has_f8 = has_f8;
  return g;
}

struct Standin {
  std::vector<StandinGpu> gpus;
  std::map<uint64_t, std::vector<uint64_t>> configs;  // handle -> counter ids
  uint64_t next_config = 100, next_ctx = 1, destroyed = 0, starts = 0, stops = 0;
  uint64_t phase_at = 1u << 30, fail_read = 0;
  bool hsa_up = true;  // false: contexts started now wait for HSA (start_hsa below)
  std::atomic<uint64_t> reads{0};
};
Standin* g_sdk = nullptr;

uint64_t counter_id(size_t i) { return 1 + i; }
const StandinCounter& by_id(uint64_t id) { return kCounters.at(id - 1); }
StandinGpu* gpu_of_agent(uint64_t h) {
  for (auto& g : g_sdk->gpus)
    if (g.handle == h) return &g;
  return nullptr;
}
StandinGpu* gpu_of_ctx(uint64_t c) {
  for (auto& g : g_sdk->gpus)
    if (g.ctx.handle == c) return &g;
  return nullptr;
}

const char* sdk_status_string(rocprofiler_status_t s) {
  switch (s) {
    case ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT:
      return "ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT";
    case ROCPROFILER_STATUS_ERROR:
      return "ROCPROFILER_STATUS_ERROR";
    default:
      return nullptr;
  }
}
rocprofiler_status_t sdk_create_context(rocprofiler_context_id_t* id) {
  id->handle = g_sdk->next_ctx++;
  return ROCPROFILER_STATUS_SUCCESS;
}
rocprofiler_status_t set_config(rocprofiler_context_id_t ctx, rocprofiler_counter_config_id_t c) {
  StandinGpu* g = gpu_of_ctx(ctx.handle);
  if (g == nullptr || g_sdk->configs.count(c.handle) == 0)
    return ROCPROFILER_STATUS_ERROR_PROFILE_NOT_FOUND;
  g->config = c.handle;
  return ROCPROFILER_STATUS_SUCCESS;
}
rocprofiler_status_t sdk_start_context(rocprofiler_context_id_t ctx) {
  StandinGpu* g = gpu_of_ctx(ctx.handle);
  if (g == nullptr || g->cb == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_INVALID;
  ++g_sdk->starts;
  // As the SDK does before HSA is up: the context is kept, its counters start with HSA.
  if (!g_sdk->hsa_up) return ROCPROFILER_STATUS_ERROR_HSA_NOT_LOADED;
  g->cb(ctx, rocprofiler_agent_id_t{g->handle}, set_config, g->cb_data);  // asks the tool
  g->started = g->config != 0;
  g->totals.assign(kCounters.size() * 2048, 0.0);  // the counters start from zero
  g->reads = 0;
  return ROCPROFILER_STATUS_SUCCESS;
}
rocprofiler_status_t sdk_stop_context(rocprofiler_context_id_t ctx) {
  StandinGpu* g = gpu_of_ctx(ctx.handle);
  if (g != nullptr) g->started = false;
  ++g_sdk->stops;
  return ROCPROFILER_STATUS_SUCCESS;
}
rocprofiler_status_t sdk_query_agents(rocprofiler_agent_version_t,
                                      rocprofiler_query_available_agents_cb_t cb, size_t,
                                      void* data) {
  static std::vector<rocprofiler_agent_v0_t> agents;
  agents.clear();
  rocprofiler_agent_v0_t cpu{};
  cpu.type = ROCPROFILER_AGENT_TYPE_CPU;
  cpu.id.handle = 1;
  agents.push_back(cpu);
  int32_t ordinal = 0;
  for (const auto& g : g_sdk->gpus) {
    rocprofiler_agent_v0_t a{};
    a.type = ROCPROFILER_AGENT_TYPE_GPU;
    a.id.handle = g.handle;
    a.name = g.name;
    a.cu_count = 304;
    a.simd_count = 1216;
    a.max_waves_per_cu = 32;
    a.logical_node_type_id = ordinal++;
    agents.push_back(a);
  }
  std::vector<const void*> ptrs;
  for (const auto& a : agents) ptrs.push_back(&a);
  return cb(ROCPROFILER_AGENT_INFO_VERSION_0, ptrs.data(), ptrs.size(), data);
}
rocprofiler_status_t sdk_configure_dc(rocprofiler_context_id_t ctx, rocprofiler_buffer_id_t buf,
                                      rocprofiler_agent_id_t agent,
                                      rocprofiler_device_counting_service_cb_t cb, void* data) {
  StandinGpu* g = gpu_of_agent(agent.handle);
  if (g == nullptr || buf.handle != 0) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  g->ctx = ctx;
  g->cb = cb;
  g->cb_data = data;
  return ROCPROFILER_STATUS_SUCCESS;
}
rocprofiler_status_t sdk_iterate_counters(rocprofiler_agent_id_t agent,
                                          rocprofiler_available_counters_cb_t cb, void* data) {
  StandinGpu* g = gpu_of_agent(agent.handle);
  std::vector<rocprofiler_counter_id_t> ids;
  for (size_t i = 0; i < kCounters.size(); ++i)
    if (g->has_f8 || std::string(kCounters[i].name) != "SQ_INSTS_VALU_MFMA_MOPS_F8")
      ids.push_back(rocprofiler_counter_id_t{counter_id(i)});
  return cb(agent, ids.data(), ids.size(), data);
}
rocprofiler_status_t sdk_counter_info(rocprofiler_counter_id_t id,
                                      rocprofiler_counter_info_version_id_t v, void* out) {
  if (v != ROCPROFILER_COUNTER_INFO_VERSION_0 || id.handle == 0 || id.handle > kCounters.size())
    return ROCPROFILER_STATUS_ERROR_COUNTER_NOT_FOUND;
  auto* info = static_cast<rocprofiler_counter_info_v0_t*>(out);
  info->id = id;
  info->name = by_id(id.handle).name;
  return ROCPROFILER_STATUS_SUCCESS;
}
rocprofiler_status_t sdk_record_counter_id(rocprofiler_counter_instance_id_t rec,
                                           rocprofiler_counter_id_t* id) {
  id->handle = rec >> 32;
  return ROCPROFILER_STATUS_SUCCESS;
}
rocprofiler_status_t sdk_create_config(rocprofiler_agent_id_t, rocprofiler_counter_id_t* list,
                                       size_t n, rocprofiler_counter_config_id_t* out) {
  std::map<std::string, uint32_t> used;
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n; ++i) {
    const StandinCounter& c = by_id(list[i].handle);
    if ((used[c.block] += c.cost) > kLimits.at(c.block))
      return ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT;
    ids.push_back(list[i].handle);
  }
  out->handle = g_sdk->next_config++;
  g_sdk->configs[out->handle] = ids;
  return ROCPROFILER_STATUS_SUCCESS;
}
rocprofiler_status_t sdk_destroy_config(rocprofiler_counter_config_id_t c) {
  g_sdk->destroyed += g_sdk->configs.erase(c.handle);
  return ROCPROFILER_STATUS_SUCCESS;
}
// A synchronous read: every counter of the context's config gains its amount per instance,
// and each instance's cumulative value is a record.
rocprofiler_status_t sdk_sample(rocprofiler_context_id_t ctx, rocprofiler_user_data_t,
                                rocprofiler_counter_flag_t flags, rocprofiler_counter_record_t* out,
                                size_t* n) {
  StandinGpu* g = gpu_of_ctx(ctx.handle);
  if (g == nullptr || !g->started) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_STARTED;
  if (flags != ROCPROFILER_COUNTER_FLAG_NONE || out == nullptr)
    return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  const std::vector<uint64_t>& ids = g_sdk->configs.at(g->config);
  size_t need = 0;
  for (uint64_t id : ids) need += by_id(id).instances;
  if (*n < need) {
    *n = need;
    return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  ++g->reads;
  if (g->handle == g_sdk->gpus[0].handle) g_sdk->reads.fetch_add(1);
  size_t k = 0;
  for (uint64_t id : ids) {
    const StandinCounter& c = by_id(id);
    const double step =
        g->reads >= g_sdk->phase_at && c.per_read_later >= 0 ? c.per_read_later : c.per_read;
    for (uint32_t i = 0; i < c.instances; ++i) {
      double& total = g->totals[(id - 1) * 2048 + i];
      total += step;
      out[k] = rocprofiler_counter_record_t{};
      out[k].id = (id << 32) | i;
      out[k].counter_value = total;
      out[k].agent_id = rocprofiler_agent_id_t{g->handle};
      ++k;
    }
  }
  *n = k;
  // A failed read: the counters went on counting, the caller gets nothing.
  return g->reads == g_sdk->fail_read ? ROCPROFILER_STATUS_ERROR : ROCPROFILER_STATUS_SUCCESS;
}

// HSA comes up (on the application's thread): the contexts started before it start now.
void start_hsa() {
  g_sdk->hsa_up = true;
  for (auto& g : g_sdk->gpus)
    if (g.cb != nullptr && !g.started) {
      // All set before the tool hears of the start: its thread may read at once.
      g.totals.assign(kCounters.size() * 2048, 0.0);
      g.reads = 0;
      g.started = true;
      g.cb(g.ctx, rocprofiler_agent_id_t{g.handle}, set_config, g.cb_data);
      if (g.config == 0) g.started = false;  // the tool named no counters
    }
}

Api standin_api() {
  Api a;
  a.rocprofiler_get_status_string = sdk_status_string;
  a.rocprofiler_create_context = sdk_create_context;
  a.rocprofiler_start_context = sdk_start_context;
  a.rocprofiler_stop_context = sdk_stop_context;
  a.rocprofiler_query_available_agents = sdk_query_agents;
  a.rocprofiler_configure_device_counting_service = sdk_configure_dc;
  a.rocprofiler_sample_device_counting_service = sdk_sample;
  a.rocprofiler_iterate_agent_supported_counters = sdk_iterate_counters;
  a.rocprofiler_query_counter_info = sdk_counter_info;
  a.rocprofiler_query_record_counter_id = sdk_record_counter_id;
  a.rocprofiler_create_counter_config = sdk_create_config;
  a.rocprofiler_destroy_counter_config = sdk_destroy_config;
  a.library = "test-only stand-in";
  return a;
}

// The reads' clock: 1 ms further at each read, so a rate per second is known exactly.
std::atomic<uint64_t> g_clock{0};
uint64_t standin_clock() { return g_clock.fetch_add(1000000) + 1000000; }

struct Captured {
  FakeCaptureContext ctx;
  std::map<std::string, std::string> meta;
  std::map<std::string, std::vector<std::pair<uint64_t, double>>> tracks;
};

// A session with GPU metrics on the stand-in (GPU 0 gfx942, GPU 1 gfx90a without F8 counters):
// the SDK initializes inside the session, our thread reads until GPU 0 has served `reads`.
void run_session(Captured* run, Standin* sdk, const std::string& set, uint64_t reads) {
  g_sdk = sdk;
  sdk->gpus = {gpu(0x1000, "gfx942", true), gpu(0x2000, "gfx90a", false)};
  g_clock = 0;
  Sampler sampler(standin_clock);
  GpuMetricsSettings s;
  s.hz = 2000;
  s.set = set;
  sampler.session_start(run->ctx, s);
  sampler.sdk_initialize(standin_api());
  for (int i = 0; i < 5000 && sdk->reads.load() < reads; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  sampler.session_stop(run->ctx);
  sampler.sdk_finalize();
  for (const auto& row : run->ctx.rows<MetadataInfo>()) run->meta[row.tag] = row.value;
  for (const Record& r : run->ctx.records) {
    ASSERT_EQ(r.kind, RecordKind::kSample);
    ASSERT_EQ(r.flags, kFlagCounter);
    run->tracks[run->ctx.text(r.name_id)].emplace_back(r.start, r.sample.value);
  }
}

TEST(DeviceCountingStandin, EachFormulaFromTheDifferencesBetweenReads) {
  Standin sdk;
  sdk.phase_at = 6;  // GRBM_GUI_ACTIVE grows 4x faster from the 6th read on
  Captured run;
  run_session(&run, &sdk, "default", 12);
  ASSERT_EQ(run.meta["rocprof.gpu_metrics.status.gpu0"], "on");
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.chip.gpu0"], "gfx942");
  // Busy 25 % over the intervals from read 1 to read 6, then 100 %, stamped where the read
  // that opened the interval returned (read 5 of GPU 0: the clock moves per read of either GPU).
  const auto& gr = run.tracks["pm_gr_active [0]"];
  ASSERT_GE(gr.size(), 3u);
  EXPECT_DOUBLE_EQ(gr[0].second, 25.0);
  EXPECT_DOUBLE_EQ(gr[1].second, 100.0);
  EXPECT_EQ(gr[1].first, 9000000u);  // GPU 0's 5th read: the 9th tick (GPU 1 reads in between)
  EXPECT_EQ(gr.back().second, 100.0);
  EXPECT_GT(gr.back().first, gr[1].first);  // the track ends at the last read
  EXPECT_DOUBLE_EQ(run.tracks["pm_tensor_active [0]"][0].second, 40.0);
  EXPECT_DOUBLE_EQ(run.tracks["pm_sm_active [0]"][0].second, 50.0);
  EXPECT_DOUBLE_EQ(run.tracks["pm_occupancy [0]"][0].second, 20.0);
  // Rates per host second: 2 ticks (2 ms) between two reads of GPU 0.
  EXPECT_DOUBLE_EQ(run.tracks["pm_dram_read_bytes [0]"][0].second, 1024.0 * 1024 / 2e-3);
  EXPECT_DOUBLE_EQ(run.tracks["pm_dram_write_bytes [0]"][0].second, 512.0 * 1024 / 2e-3);
  EXPECT_DOUBLE_EQ(run.tracks["pm_mfma_bf16 [0]"][0].second, 1024.0 * 512 / 2e-3);
  EXPECT_DOUBLE_EQ(run.tracks["pm_mfma_f16 [0]"][0].second, 0.0);
  // A constant metric: its first value and its end only.
  ASSERT_EQ(run.tracks["pm_sm_active [0]"].size(), 2u);
  // Over the TCC's six counters: the L2 hit rate, after both sizes, is left out with the reason.
  EXPECT_EQ(run.tracks.count("pm_l2_hit_rate [0]"), 0u);
  EXPECT_NE(run.meta["rocprof.gpu_metrics.left_out.gpu0"].find(
                "pm_l2_hit_rate: does not fit one pass with the metrics before it "
                "(ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT)"),
            std::string::npos)
      << run.meta["rocprof.gpu_metrics.left_out.gpu0"];
  EXPECT_NE(
      run.meta["rocprof.gpu_metrics.metrics.gpu0"].find("pm_gr_active=GRBM_GUI_ACTIVE/GRBM_COUNT"),
      std::string::npos);
  // A chip without a counter: GPU 1 leaves F8 out, naming it; the rest is sampled.
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.chip.gpu1"], "gfx90a");
  EXPECT_NE(run.meta["rocprof.gpu_metrics.left_out.gpu1"].find(
                "pm_mfma_f8: gfx90a has no counter SQ_INSTS_VALU_MFMA_MOPS_F8"),
            std::string::npos);
  EXPECT_EQ(run.tracks.count("pm_mfma_f8 [1]"), 0u);
  EXPECT_DOUBLE_EQ(run.tracks["pm_gr_active [1]"][0].second, 25.0);
  // Every read of GPU 0 but the first (the base) gave a sample; the trial configs were freed
  // and the contexts started and stopped once each.
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.samples.gpu0"],
            std::to_string(std::stoull(run.meta["rocprof.gpu_metrics.reads.gpu0"]) - 1));
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.errors.gpu0"], "0");
  EXPECT_EQ(sdk.configs.size(), 2u);  // the two GPUs' own
  EXPECT_EQ(sdk.starts, 2u);
  EXPECT_EQ(sdk.stops, 2u);
  EXPECT_NE(run.meta["rocprof.gpu_metrics.backend"].find("never run on AMD hardware"),
            std::string::npos);
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.hz"], "2000");
  // Each series is described once, as a counter of its GPU's agent, in our component.
  const auto pmc = run.ctx.rows<PmcInfo>();
  size_t gpu0 = 0;
  for (const PmcInfo& p : pmc) {
    EXPECT_EQ(p.component, "rocprofiler_sdk_device_counting");
    gpu0 += p.agent_id == gpu_agent_id(0) ? 1 : 0;
  }
  EXPECT_EQ(gpu0, named_set("default").size() - 1);
}

TEST(DeviceCountingStandin, AFailedReadIsCountedAndTheNextSpansBoth) {
  Standin sdk;
  sdk.fail_read = 4;
  Captured run;
  run_session(&run, &sdk, "memory", 8);
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.errors.gpu0"], "1");
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.last_error.gpu0"],
            "rocprofiler_sample_device_counting_service: ROCPROFILER_STATUS_ERROR");
  // The read after the failed one covers two intervals at the same rate: no new value.
  const auto& bytes = run.tracks["pm_dram_read_bytes [0]"];
  ASSERT_EQ(bytes.size(), 2u);
  EXPECT_DOUBLE_EQ(bytes[0].second, 1024.0 * 1024 / 2e-3);
  EXPECT_EQ(run.tracks.count("pm_l2_hit_rate [0]"), 0u);  // over the TCC's limit
}

TEST(DeviceCountingStandin, ACustomSetIsCountersPerSecondAndAnUnknownOneIsRefused) {
  Standin sdk;
  Captured run;
  run_session(&run, &sdk, "SQ_WAVES, NO_SUCH_COUNTER", 4);
  EXPECT_DOUBLE_EQ(run.tracks["SQ_WAVES [0]"][0].second, 2048.0 / 2e-3);
  EXPECT_NE(run.meta["rocprof.gpu_metrics.left_out.gpu0"].find(
                "NO_SUCH_COUNTER: gfx942 has no counter NO_SUCH_COUNTER"),
            std::string::npos);
}

TEST(DeviceCountingStandin, ContextsStartedBeforeHsaAreReadOnceHsaStartsThem) {
  Standin sdk;
  g_sdk = &sdk;
  sdk.gpus = {gpu(0x1000, "gfx942", true)};
  sdk.hsa_up = false;
  g_clock = 0;
  FakeCaptureContext c;
  Sampler sampler(standin_clock);
  GpuMetricsSettings s;
  s.hz = 2000;
  s.set = "memory";
  sampler.session_start(c, s);
  sampler.sdk_initialize(standin_api());  // starts the context: HSA is not up yet
  EXPECT_EQ(sdk.gpus[0].config, 0u);      // no counters chosen yet
  start_hsa();                            // the SDK asks for the config on this thread
  for (int i = 0; i < 5000 && sdk.reads.load() < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  sampler.session_stop(c);
  std::map<std::string, std::string> meta;
  for (const auto& row : c.rows<MetadataInfo>()) meta[row.tag] = row.value;
  EXPECT_EQ(meta["rocprof.gpu_metrics.status.gpu0"], "on");
  EXPECT_GE(std::stoull(meta["rocprof.gpu_metrics.samples.gpu0"]), 3u);
  bool read_bytes = false;
  for (const Record& r : c.records)
    read_bytes = read_bytes || (c.text(r.name_id) == "pm_dram_read_bytes [0]" &&
                                r.sample.value == 1024.0 * 1024 / 1e-3);  // 1 tick per read
  EXPECT_TRUE(read_bytes);
}

TEST(DeviceCountingStandin, ASessionAfterTheSdkStartedSaysItCameTooLate) {
  Standin sdk;
  g_sdk = &sdk;
  sdk.gpus = {gpu(0x1000, "gfx942", true)};
  FakeCaptureContext c;
  Sampler sampler(standin_clock);
  sampler.sdk_initialize(standin_api());
  GpuMetricsSettings s;
  s.hz = 1000;
  sampler.session_start(c, s);
  sampler.session_stop(c);
  EXPECT_EQ(sampler.status().rfind("off: rocprofiler-sdk started before --gpu-metrics", 0), 0u);
  EXPECT_EQ(sdk.starts, 0u);
  EXPECT_TRUE(c.records.empty());
}

TEST(DeviceCountingStandin, ALibraryWithoutTheServiceIsRefusedByName) {
  Api a;
  std::string why;
  EXPECT_FALSE(resolve("/nonexistent/librocprofiler-sdk.so", &a, &why));
  EXPECT_NE(why.find("lacks rocprofiler_"), std::string::npos) << why;
}

TEST(DeviceCountingFormulas, NoValueWithoutCyclesOrLookups) {
  AgentFacts f{"gfx942", 304, 1216, 32};
  const Delta none[2] = {{0, 8}, {0, 8}};
  EXPECT_TRUE(std::isnan(evaluate(Formula::kPercentOf, none, 2, 1e-3, f)));
  EXPECT_TRUE(std::isnan(evaluate(Formula::kHitRate, none, 2, 1e-3, f)));
  EXPECT_TRUE(std::isnan(evaluate(Formula::kPerSecond, none, 1, 0, f)));
  const Delta busy[2] = {{4000, 8}, {8000, 8}};
  EXPECT_DOUBLE_EQ(evaluate(Formula::kPercentOf, busy, 2, 1e-3, f), 50.0);
}

TEST(DeviceCountingStandin, TheTracksThroughTheSinkAreCounterSamplesOfTheirAgent) {
  Standin sdk;
  Captured run;
  run_session(&run, &sdk, "compute", 4);
  SessionInfo info;
  info.path = std::string(::testing::TempDir()) + "/sdk_dc_" + std::to_string(getpid()) + ".db";
  std::remove(info.path.c_str());
  info.guid = "0000ddb5-8903-7903-b269-cd8d3745bb8b";
  info.pid = 42;
  info.hostname = "host";
  RocpdSink sink;
  std::string error;
  ASSERT_TRUE(sink.open(info, &error)) << error;
  sink.write_strings(1, run.ctx.strings);
  for (const InfoRow& row : run.ctx.infos) sink.write_info(row);
  sink.write_records(run.ctx.records.data(), run.ctx.records.size());
  sink.commit();
  sink.close(1u << 30);
  const auto q = [&info](const std::string& sql) {
    return rocprof::testing::sql_scalar(info.path, sql);
  };
  EXPECT_EQ(q("SELECT COUNT(*) FROM rocpd_info_pmc WHERE component = "
              "'rocprofiler_sdk_device_counting' AND name = 'pm_tensor_active'"),
            2);
  EXPECT_EQ(q("SELECT COUNT(*) FROM rocpd_track T JOIN rocpd_string S ON S.id = T.name_id "
              "WHERE S.string = 'pm_tensor_active [0]'"),
            1);
  EXPECT_EQ(q("SELECT COUNT(*) FROM rocpd_sample"), static_cast<int64_t>(run.ctx.records.size()));
  std::remove(info.path.c_str());
}

}  // namespace
}  // namespace rocprof::sdk::dc
