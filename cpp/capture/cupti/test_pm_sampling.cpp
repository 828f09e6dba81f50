// PM sampling (--gpu-metrics) without a GPU: a stand-in of CUPTI's PM sampling and Profiler Host
// entry points (the real cupti_pmsampling.h / cupti_profiler_host.h structs), handed to the
// backend's real entry points (pm::start, on_context_created, stop) in an Api table, with a
// stand-in GPU that writes numbered samples into a bounded hardware buffer between decodes.
// Checked: every sample arrives once and in order when the counter data image fills and wraps,
// an overflowing hardware buffer is counted (samples lost = the stand-in's own count), a chip
// without a metric leaves it out with its reason (and a metric past one pass), repeated values
// are stored once, the clock of the samples' timestamps is told apart, and a paused session
// stops the GPU's sampling and starts it again on resume.
#define ROCPROF_CUPTI_COUNTERS 1  // as the backend is built where these headers exist
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "capture/settings.hpp"
#include "pm_sampling.hpp"
#include "rocprof/clock.hpp"
#include "tests/fake_capture_context.hpp"

namespace rocprof::cupti::pm {
namespace {

using rocprof::testing::FakeCaptureContext;

// ---- the stand-in GPU and CUPTI ---------------------------------------------------------
struct StandinHost {
  std::vector<std::string> metrics;
};

struct StandinGpu {
  std::vector<std::string> chip_metrics;  // what the stand-in chip can sample
  size_t max_per_pass = 64;
  size_t produce = 0;                // samples written between two decode rounds
  size_t hw_capacity = 1u << 20;     // samples the hardware buffer holds
  uint64_t t0 = 0, period = 100000;  // timestamps: t0 + index * period
  uint64_t next_index = 0, lost = 0;
  std::deque<uint64_t> hw;      // sample indices in the hardware buffer
  std::vector<uint64_t> image;  // decoded into the counter data image
  size_t image_capacity = 0;
  bool overflow = false, mid_round = false, started = false, enabled = false;
  std::vector<std::string> configured;  // the host object's metrics at config time
  double constant = 42.0;               // the value of every metric but the first
  uint64_t realtime_offset = 0;         // CLOCK_REALTIME - CLOCK_BOOTTIME, when stamped so
  int evaluate_us = 0;                  // what an evaluation costs the host
  std::vector<uint64_t> long_from;      // the first sample after each Start
  bool fail_stop = false;               // Stop answers an error
  int fail_start_from = 0;              // the n-th Start and later answer an error (0: none)
  int start_calls = 0;
};
StandinGpu g;
// Starts and stops of sampling, read by the test while the sampler's thread makes them.
std::atomic<int> g_starts{0}, g_stops{0};

CUptiResult result_string(CUptiResult r, const char** s) {
  *s = r == CUPTI_ERROR_INVALID_METRIC_NAME ? "CUPTI_ERROR_INVALID_METRIC_NAME" : "CUPTI_ERROR";
  return CUPTI_SUCCESS;
}
CUptiResult profiler_init(CUpti_Profiler_Initialize_Params*) { return CUPTI_SUCCESS; }
CUptiResult chip_name(CUpti_Device_GetChipName_Params* p) {
  p->pChipName = "SI100";
  return CUPTI_SUCCESS;
}
CUptiResult device_id(CUcontext ctx, uint32_t* id) {
  *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ctx) - 1);
  return CUPTI_SUCCESS;
}
CUptiResult availability(CUpti_PmSampling_GetCounterAvailability_Params* p) {
  if (p->pCounterAvailabilityImage == nullptr) p->counterAvailabilityImageSize = 16;
  return CUPTI_SUCCESS;
}
StandinHost* host(CUpti_Profiler_Host_Object* h) { return reinterpret_cast<StandinHost*>(h); }
CUptiResult host_init(CUpti_Profiler_Host_Initialize_Params* p) {
  EXPECT_EQ(p->profilerType, CUPTI_PROFILER_TYPE_PM_SAMPLING);
  p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(new StandinHost);
  return CUPTI_SUCCESS;
}
CUptiResult host_deinit(CUpti_Profiler_Host_Deinitialize_Params* p) {
  delete host(p->pHostObject);
  return CUPTI_SUCCESS;
}
CUptiResult add_metrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  for (size_t i = 0; i < p->numMetrics; ++i)
    if (std::find(g.chip_metrics.begin(), g.chip_metrics.end(), p->ppMetricNames[i]) ==
        g.chip_metrics.end())
      return CUPTI_ERROR_INVALID_METRIC_NAME;
  for (size_t i = 0; i < p->numMetrics; ++i)
    host(p->pHostObject)->metrics.push_back(p->ppMetricNames[i]);
  return CUPTI_SUCCESS;
}
CUptiResult image_size(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  p->configImageSize = 8;
  g.configured = host(p->pHostObject)->metrics;
  return CUPTI_SUCCESS;
}
CUptiResult image(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  std::memset(p->pConfigImage, 0, p->configImageSize);
  p->pConfigImage[0] = static_cast<uint8_t>(host(p->pHostObject)->metrics.size());
  return CUPTI_SUCCESS;
}
CUptiResult passes(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  p->numOfPasses = p->pConfigImage[0] <= g.max_per_pass ? 1 : 2;
  return CUPTI_SUCCESS;
}
CUptiResult properties(CUpti_Profiler_Host_GetMetricProperties_Params* p) {
  p->pDescription = "stand-in metric";
  p->pHwUnit = "sm";
  p->pDimUnit = "percent";
  p->metricType = CUPTI_METRIC_TYPE_RATIO;
  return CUPTI_SUCCESS;
}
// Metric 0 of the configuration: the sample's index; every other: a constant.
CUptiResult evaluate(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  if (p->rangeIndex >= g.image.size()) return CUPTI_ERROR_INVALID_PARAMETER;
  if (g.evaluate_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(g.evaluate_us));
  for (size_t m = 0; m < p->numMetrics; ++m)
    p->pMetricValues[m] = m == 0 ? static_cast<double>(g.image[p->rangeIndex]) : g.constant;
  return CUPTI_SUCCESS;
}
CUptiResult enable(CUpti_PmSampling_Enable_Params* p) {
  g.enabled = true;
  p->pPmSamplingObject = reinterpret_cast<CUpti_PmSampling_Object*>(&g);
  return CUPTI_SUCCESS;
}
CUptiResult disable(CUpti_PmSampling_Disable_Params*) {
  g.enabled = false;
  return CUPTI_SUCCESS;
}
CUptiResult set_config(CUpti_PmSampling_SetConfig_Params* p) {
  EXPECT_EQ(p->triggerMode, CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL);
  g.period = p->samplingInterval;
  return CUPTI_SUCCESS;
}
CUptiResult start_sampling(CUpti_PmSampling_Start_Params*) {
  if (g.fail_start_from > 0 && ++g.start_calls >= g.fail_start_from) return CUPTI_ERROR_UNKNOWN;
  g.started = true;
  g.long_from.push_back(g.next_index);
  ++g_starts;
  return CUPTI_SUCCESS;
}
CUptiResult stop_sampling(CUpti_PmSampling_Stop_Params*) {
  if (g.fail_stop) return CUPTI_ERROR_UNKNOWN;
  g.started = false;
  ++g_stops;
  return CUPTI_SUCCESS;
}
CUptiResult data_size(CUpti_PmSampling_GetCounterDataSize_Params* p) {
  g.image_capacity = p->maxSamples;
  p->counterDataSize = 64 + 16 * size_t{p->maxSamples};
  return CUPTI_SUCCESS;
}
CUptiResult data_init(CUpti_PmSampling_CounterDataImage_Initialize_Params*) {
  g.image.clear();
  return CUPTI_SUCCESS;
}
// A round begins where the last one reached the end of the records: the stand-in GPU writes
// `produce` samples first (while sampling runs), dropping what the hardware buffer cannot hold.
CUptiResult decode(CUpti_PmSampling_DecodeData_Params* p) {
  if (!g.mid_round && g.started)
    for (size_t i = 0; i < g.produce; ++i, ++g.next_index) {
      if (g.hw.size() >= g.hw_capacity) {
        g.overflow = true;
        ++g.lost;
        continue;
      }
      g.hw.push_back(g.next_index);
    }
  while (!g.hw.empty() && g.image.size() < g.image_capacity) {
    g.image.push_back(g.hw.front());
    g.hw.pop_front();
  }
  g.mid_round = !g.hw.empty();
  p->decodeStopReason = g.mid_round ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL
                                    : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
  p->overflow = g.overflow ? 1 : 0;
  g.overflow = false;
  return CUPTI_SUCCESS;
}
CUptiResult data_info(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
  p->numTotalSamples = g.image_capacity;
  p->numPopulatedSamples = p->numCompletedSamples = g.image.size();
  return CUPTI_SUCCESS;
}
// As on an H200: the first sample after each Start begins seconds earlier (stood in: 3 s), in
// CLOCK_REALTIME; the others are one period each.
CUptiResult sample_info(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) {
  const uint64_t i = g.image.at(p->sampleIndex);
  const bool first = std::find(g.long_from.begin(), g.long_from.end(), i) != g.long_from.end();
  p->startTimestamp = g.t0 + i * g.period - (first ? 3000000000ull : 0) + g.realtime_offset;
  p->endTimestamp = g.t0 + (i + 1) * g.period + g.realtime_offset;
  return CUPTI_SUCCESS;
}

Api standin_api() {
  Api a;
  a.path = "stand-in libcupti (PM sampling)";
  a.cuptiGetResultString = result_string;
  CounterApi& c = a.counters;
  c.cuptiProfilerInitialize = profiler_init;
  c.cuptiDeviceGetChipName = chip_name;
  c.cuptiGetDeviceId = device_id;
  c.cuptiPmSamplingGetCounterAvailability = availability;
  c.cuptiProfilerHostInitialize = host_init;
  c.cuptiProfilerHostDeinitialize = host_deinit;
  c.cuptiProfilerHostConfigAddMetrics = add_metrics;
  c.cuptiProfilerHostGetConfigImageSize = image_size;
  c.cuptiProfilerHostGetConfigImage = image;
  c.cuptiProfilerHostGetNumOfPasses = passes;
  c.cuptiProfilerHostGetMetricProperties = properties;
  c.cuptiProfilerHostEvaluateToGpuValues = evaluate;
  c.cuptiPmSamplingEnable = enable;
  c.cuptiPmSamplingDisable = disable;
  c.cuptiPmSamplingSetConfig = set_config;
  c.cuptiPmSamplingStart = start_sampling;
  c.cuptiPmSamplingStop = stop_sampling;
  c.cuptiPmSamplingGetCounterDataSize = data_size;
  c.cuptiPmSamplingCounterDataImageInitialize = data_init;
  c.cuptiPmSamplingDecodeData = decode;
  c.cuptiPmSamplingGetCounterDataInfo = data_info;
  c.cuptiPmSamplingCounterDataGetSampleInfo = sample_info;
  return a;
}

// Every name of the default set: a chip that has them all.
std::vector<std::string> all_names() {
  std::vector<std::string> out;
  for (const MetricDef& d : named_set("default"))
    for (const char* n : d.names) out.emplace_back(n);
  return out;
}

struct Captured {
  FakeCaptureContext ctx;
  std::map<std::string, std::string> meta;
  std::map<std::string, std::vector<std::pair<uint64_t, double>>> tracks;
};

// Starts the backend's sampler at `hz` on the stand-in GPU 0.
void begin(Captured* run, uint32_t hz, const std::string& set) {
  static Api api = standin_api();  // the sampler keeps a pointer to it
  g.t0 = now_ns();
  GpuMetricsSettings s;
  s.hz = hz;
  s.set = set;
  s.decode_ms = 5;
  std::string why;
  ASSERT_TRUE(start(run->ctx, s, api, &why)) << why;
  on_context_created(reinterpret_cast<CUcontext>(1));  // device 0
  on_context_created(reinterpret_cast<CUcontext>(1));  // once per device
}

// Waits (up to 4 s) until `done` holds.
template <class F>
void wait_until(F done) {
  for (int i = 0; i < 2000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

// Starts the backend's sampler at `hz` on the stand-in, lets the stand-in GPU write samples
// until `samples_wanted` were written, stops it and reads back the records.
void sample(Captured* run, uint32_t hz, const std::string& set, size_t samples_wanted) {
  begin(run, hz, set);
  wait_until([&] { return g.next_index >= samples_wanted; });
  stop(run->ctx);
  disable_all();
  EXPECT_FALSE(g.enabled);
  for (const auto& row : run->ctx.rows<MetadataInfo>()) run->meta[row.tag] = row.value;
  for (const Record& r : run->ctx.records) {
    ASSERT_EQ(r.kind, RecordKind::kSample);
    ASSERT_EQ(r.flags, kFlagCounter);
    run->tracks[run->ctx.text(r.name_id)].emplace_back(r.start, r.sample.value);
  }
}

void reset_gpu(size_t produce, size_t hw_capacity) {
  g = StandinGpu{};
  g_starts = g_stops = 0;
  g.chip_metrics = all_names();
  g.produce = produce;
  g.hw_capacity = hw_capacity;
}

uint64_t realtime_minus_boottime() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const uint64_t real = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
  return real - now_ns();
}

TEST(PmSamplingStandin, EverySampleOnceInOrderWhenTheImageWraps) {
  reset_gpu(/*produce=*/250, /*hw_capacity=*/1u << 20);
  g.realtime_offset = realtime_minus_boottime();  // stamped in CLOCK_REALTIME, as on an H200
  Captured run;
  sample(&run, 1000, "default", 2000);  // image: 2 * 5 + 64 = 74 samples: each round wraps 4x
  const auto& tensor = run.tracks["pm_tensor_active [0]"];
  ASSERT_FALSE(tensor.empty());
  // Metric 0 is the sample's index: every one from 1 on (the first, seconds long, is left out),
  // once, at its own time moved to CLOCK_BOOTTIME; the last value is stored again at the end
  // of its sample.
  const uint64_t n = g.next_index;
  ASSERT_EQ(tensor.size(), n);
  const int64_t skew = static_cast<int64_t>(tensor[0].first - (g.t0 + 1000000));
  EXPECT_LT(std::llabs(skew), 100000) << "the clock offset is off by " << skew << " ns";
  for (uint64_t i = 1; i < n; ++i) {
    EXPECT_EQ(tensor[i - 1].second, static_cast<double>(i));
    EXPECT_EQ(tensor[i - 1].first - skew, g.t0 + i * 1000000);
  }
  EXPECT_EQ(tensor[n - 1].first - skew, g.t0 + n * 1000000);
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.samples.gpu0"], std::to_string(n - 1));
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.long_samples.gpu0"], "1");
  EXPECT_GT(std::stoull(run.meta["rocprof.gpu_metrics.image_full.gpu0"]), 0u);
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.overflows.gpu0"], "0");
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.missing_samples.gpu0"], "0");
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.achieved_hz.gpu0"], "1000.0");
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.clock"], "CLOCK_REALTIME");
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.status.gpu0"], "on");
  // A constant metric: its first value and its end, every other sample counted as unchanged.
  const auto& sm = run.tracks["pm_sm_active [0]"];
  ASSERT_EQ(sm.size(), 2u);
  EXPECT_EQ(sm[0], std::make_pair(g.t0 + 1000000 + skew, 42.0));
  EXPECT_EQ(sm[1].first - skew, g.t0 + n * 1000000);
  const size_t constants = named_set("default").size() - 1;
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.values_unchanged"], std::to_string(constants * (n - 2)));
  EXPECT_TRUE(run.ctx.dropped.empty());
}

TEST(PmSamplingStandin, AnOverflowingHardwareBufferIsCountedWithTheSamplesLost) {
  reset_gpu(/*produce=*/300, /*hw_capacity=*/100);
  Captured run;
  sample(&run, 1000, "compute", 1500);
  ASSERT_GT(g.lost, 0u);
  EXPECT_GT(std::stoull(run.meta["rocprof.gpu_metrics.overflows.gpu0"]), 0u);
  // Lost samples show as gaps in the timestamps; all but those at the very end are counted.
  const uint64_t missing = std::stoull(run.meta["rocprof.gpu_metrics.missing_samples.gpu0"]);
  EXPECT_LE(missing, g.lost);
  EXPECT_GE(missing + 200, g.lost);
  EXPECT_EQ(run.ctx.dropped["GPU metric samples lost (hardware buffer)"], missing);
  const auto& tensor = run.tracks["pm_tensor_active [0]"];
  EXPECT_EQ(tensor.size(), g.next_index - g.lost);  // less the first (long) sample, plus the end
}

TEST(PmSamplingStandin, AHostTooSlowToEvaluateEverySampleThinsThemAndLosesNone) {
  reset_gpu(/*produce=*/100, /*hw_capacity=*/1u << 20);
  g.evaluate_us = 2000;  // two sample periods per evaluation: the host cannot keep up
  Captured run;
  sample(&run, 1000, "compute", 400);
  const uint64_t samples = std::stoull(run.meta["rocprof.gpu_metrics.samples.gpu0"]);
  const uint64_t thinned = std::stoull(run.meta["rocprof.gpu_metrics.thinned_samples.gpu0"]);
  EXPECT_EQ(samples, g.next_index - 1);  // every sample decoded (the first is long)
  EXPECT_GT(thinned, 0u);
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.missing_samples.gpu0"], "0");
  const auto& tensor = run.tracks["pm_tensor_active [0]"];
  ASSERT_EQ(tensor.size(), samples - thinned + 1);  // the evaluated ones, and the end
  for (size_t i = 1; i + 1 < tensor.size(); ++i) EXPECT_GT(tensor[i].second, tensor[i - 1].second);
}

TEST(PmSamplingStandin, AChipWithoutAMetricLeavesItOutWithItsReason) {
  reset_gpu(/*produce=*/20, /*hw_capacity=*/1u << 20);
  // A Turing-like chip: no realtime tensor counter (its fallback instead), no DRAM throughput
  // under either name; and at most 5 metrics in one pass.
  auto& names = g.chip_metrics;
  names.erase(std::remove_if(names.begin(), names.end(),
                             [](const std::string& n) {
                               return n.rfind("sm__pipe_tensor_cycles_active_realtime", 0) == 0 ||
                                      n.find("read_throughput") != std::string::npos ||
                                      n.rfind("dram__bytes_read", 0) == 0;
                             }),
              names.end());
  g.max_per_pass = 5;
  Captured run;
  ::testing::internal::CaptureStderr();
  sample(&run, 1000, "default", 100);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.status.gpu0"], "on");
  const std::string& chosen = run.meta["rocprof.gpu_metrics.metrics.gpu0"];
  EXPECT_NE(chosen.find("pm_tensor_active=sm__pipe_shared_cycles_active_realtime"),
            std::string::npos)
      << chosen;
  EXPECT_EQ(chosen.find("pm_dram_read="), std::string::npos) << chosen;
  const std::string& left = run.meta["rocprof.gpu_metrics.left_out.gpu0"];
  EXPECT_NE(
      left.find("pm_dram_read: not available on this SI100 GPU "
                "(dram__bytes_read.sum.pct_of_peak_sustained_elapsed, dramc__read_throughput"),
      std::string::npos)
      << left;
  EXPECT_NE(left.find("does not fit one pass"), std::string::npos) << left;
  EXPECT_NE(err.find("left out pm_dram_read: not available on this SI100 GPU"), std::string::npos)
      << err;
  EXPECT_EQ(g.configured.size(), 5u);  // the config image holds the five that fit
  EXPECT_EQ(run.tracks.count("pm_dram_read [0]"), 0u);
  EXPECT_EQ(run.tracks.size(), 5u);
  for (const auto& info : run.ctx.template rows<PmcInfo>()) {
    EXPECT_EQ(info.component, "cupti_pm_sampling");
    EXPECT_EQ(info.agent_id, gpu_agent_id(0));
  }
}

TEST(PmSamplingStandin, NamesTheChipHasNotAreRefusedAtSetUp) {
  reset_gpu(20, 1u << 20);
  g.chip_metrics = {"a__b.sum"};
  Captured run;
  ::testing::internal::CaptureStderr();
  sample(&run, 1000, "nope__metric.sum", 0);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.status.gpu0"],
            "off: none of the metrics of 'nope__metric.sum' can be sampled on SI100");
  EXPECT_NE(err.find("--gpu-metrics: GPU 0: none of the metrics"), std::string::npos) << err;
  EXPECT_TRUE(run.tracks.empty());
}

// A paused session (an on-demand window closed, roctxProfilerPause) stops the GPU's sampling,
// so that it costs nothing; on resume sampling starts again, its first (long) sample is left
// out, and the pause counts neither as lost samples nor in the achieved rate.
TEST(PmSamplingStandin, APauseStopsSamplingAndResumeStartsItAgain) {
  reset_gpu(/*produce=*/50, /*hw_capacity=*/1u << 20);
  Captured run;
  begin(&run, 1000, "default");
  wait_until([] { return g.next_index >= 400; });
  run.ctx.is_paused = true;
  wait_until([] { return g_stops.load() >= 1; });
  ASSERT_EQ(g_stops.load(), 1) << "sampling was not stopped for the pause";
  const uint64_t at_pause = g.next_index;
  std::this_thread::sleep_for(std::chrono::milliseconds(40));  // eight decode periods
  EXPECT_EQ(g.next_index, at_pause) << "the GPU sampled while the session was paused";
  run.ctx.is_paused = false;
  wait_until([] { return g_starts.load() >= 2; });
  ASSERT_EQ(g_starts.load(), 2) << "sampling was not started again on resume";
  wait_until([&] { return g.next_index >= at_pause + 400; });
  stop(run.ctx);
  disable_all();
  for (const auto& row : run.ctx.rows<MetadataInfo>()) run.meta[row.tag] = row.value;
  std::map<std::string, std::vector<std::pair<uint64_t, double>>> tracks;
  for (const Record& r : run.ctx.records)
    tracks[run.ctx.text(r.name_id)].emplace_back(r.start, r.sample.value);
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.pauses.gpu0"], "1");
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.long_samples.gpu0"], "2");  // one per start
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.missing_samples.gpu0"], "0");
  EXPECT_EQ(run.meta["rocprof.gpu_metrics.achieved_hz.gpu0"], "1000.0");
  EXPECT_TRUE(run.ctx.dropped.empty());
  // Metric 0 is the sample's index: in order, before the pause and after it, none twice.
  const auto& tensor = tracks["pm_tensor_active [0]"];
  ASSERT_GT(tensor.size(), 600u);
  size_t after = 0;
  for (size_t i = 1; i < tensor.size(); ++i) {
    EXPECT_GE(tensor[i].first, tensor[i - 1].first);
    if (tensor[i].second > static_cast<double>(at_pause)) ++after;
  }
  EXPECT_GT(after, 300u);
  // The series end before the pause where the last sample kept ended, not where the samples
  // taken as the pause began (not kept) ended: its end point is one period after its start.
  const auto& sm = tracks["pm_sm_active [0]"];
  ASSERT_EQ(sm.size(), 4u);
  size_t last_kept = 0;
  while (last_kept + 1 < tensor.size() && tensor[last_kept + 1].first < sm[2].first) ++last_kept;
  ASSERT_GT(last_kept, 0u);
  EXPECT_EQ(tensor[last_kept].second, tensor[last_kept - 1].second);  // the end point
  EXPECT_EQ(tensor[last_kept].first - tensor[last_kept - 1].first, 1000000u);
  EXPECT_EQ(sm[1].first, tensor[last_kept].first);
  // A constant metric: its value and its end before the pause, again from the first sample
  // after it to the end.
  EXPECT_LT(sm[1].first, sm[2].first);
  EXPECT_EQ(sm[2].second, 42.0);
}

// A GPU that will not stop samples on through the pause (its samples dropped, as before); one
// that will not start again has no metrics after the pause; both are said in the metadata.
TEST(PmSamplingStandin, AGpuThatWillNotStopOrStartAgainIsSaidAndNothingIsStoredWhilePaused) {
  for (const bool stop_fails : {true, false}) {
    reset_gpu(/*produce=*/50, /*hw_capacity=*/1u << 20);
    g.fail_stop = stop_fails;
    g.fail_start_from = stop_fails ? 0 : 2;  // the set-up's Start works, the resume's fails
    Captured run;
    ::testing::internal::CaptureStderr();
    begin(&run, 1000, "default");
    wait_until([] { return g.next_index >= 200; });
    run.ctx.is_paused = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    const uint64_t at_pause = g.next_index;
    run.ctx.is_paused = false;
    wait_until([] { return g.start_calls >= 2 || g.next_index >= 2000; });
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    stop(run.ctx);
    disable_all();
    const std::string err = ::testing::internal::GetCapturedStderr();
    for (const auto& row : run.ctx.rows<MetadataInfo>()) run.meta[row.tag] = row.value;
    EXPECT_EQ(run.meta["rocprof.gpu_metrics.pause_failed.gpu0"], stop_fails ? "stop" : "start");
    EXPECT_EQ(run.meta["rocprof.gpu_metrics.pauses.gpu0"], stop_fails ? "0" : "1");
    if (stop_fails) {
      EXPECT_GT(g.next_index, at_pause);  // it sampled on through the pause
    } else {
      EXPECT_NE(err.find("did not start again after a pause"), std::string::npos) << err;
      EXPECT_EQ(g.next_index, at_pause);  // nothing sampled after it
    }
  }
}

TEST(PmSamplingClock, TheNearerClockIsTaken) {
  const char* name = nullptr;
  EXPECT_EQ(clock_offset(1000, 1100, 9000000, &name), 0);
  EXPECT_STREQ(name, "CLOCK_BOOTTIME");
  EXPECT_EQ(clock_offset(8999000, 1100, 9000000, &name), 1100 - 9000000);
  EXPECT_STREQ(name, "CLOCK_REALTIME");
}

}  // namespace
}  // namespace rocprof::cupti::pm
