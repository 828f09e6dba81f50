// CUPTI PM sampling (pm_sampling.hpp): the metric sets, the choice of names per chip, and the
// sampler thread that sets each GPU up, drains its hardware buffer and emits counter samples.
#include "pm_sampling.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "capture/context.hpp"
#include "capture/metric_series.hpp"
#include "capture/settings.hpp"
#include "counters_api.hpp"
#include "counters_host.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::cupti::pm {
namespace {

constexpr int kPmSampling = 1;     // CUPTI_PROFILER_TYPE_PM_SAMPLING
constexpr size_t kMaxStride = 16;  // at most every 16th sample left unevaluated in between

// The sets. Names are CUPTI's PM-sampling metric table and the chips' own tables (checked with
// tests/gpu/pm_sampling_probe.py --chip GH100); "%": percent of the sample period or of peak.
#define PCT ".avg.pct_of_peak_sustained_elapsed"
const MetricDef kTensor{
    "pm_tensor_active",
    "Tensor Active",
    "%",
    "Cycles the SMs' tensor pipes were issuing, of the sample's cycles",
    {"sm__pipe_tensor_cycles_active_realtime" PCT, "sm__pipe_shared_cycles_active_realtime" PCT}};
const MetricDef kSmActive{"pm_sm_active",
                          "SM Active",
                          "%",
                          "Cycles with at least one warp in flight, averaged over the SMs",
                          {"sm__cycles_active" PCT}};
const MetricDef kSmIssue{"pm_sm_issue",
                         "SM Issue",
                         "%",
                         "Cycles the warp schedulers issued an instruction",
                         {"sm__inst_executed_realtime" PCT}};
const MetricDef kOccupancy{"pm_occupancy",
                           "Warps Active",
                           "%",
                           "Warps in flight of the SMs' warp slots (achieved occupancy)",
                           {"sm__warps_active_realtime" PCT}};
const MetricDef kDramRead{"pm_dram_read",
                          "DRAM Read",
                          "%",
                          "DRAM read throughput, of peak",
                          // Measured on an H200: the dramc/dram throughput percentages (a
                          // throughput metric's) read as fractions of one in PM sampling; the
                          // byte counter's percentage of peak reads as a percentage.
                          {"dram__bytes_read.sum.pct_of_peak_sustained_elapsed",
                           "dramc__read_throughput" PCT, "dram__read_throughput" PCT}};
const MetricDef kDramWrite{"pm_dram_write",
                           "DRAM Write",
                           "%",
                           "DRAM write throughput, of peak",
                           {"dram__bytes_write.sum.pct_of_peak_sustained_elapsed",
                            "dramc__write_throughput" PCT, "dram__write_throughput" PCT}};
const MetricDef kDramReadBytes{"pm_dram_read_bytes",
                               "DRAM Read",
                               "B/s",
                               "Bytes read from DRAM per second",
                               {"dram__bytes_read.sum.per_second"}};
const MetricDef kDramWriteBytes{"pm_dram_write_bytes",
                                "DRAM Write",
                                "B/s",
                                "Bytes written to DRAM per second",
                                {"dram__bytes_write.sum.per_second"}};
const MetricDef kL2Hit{"pm_l2_hit_rate",
                       "L2 Hit Rate",
                       "%",
                       "L2 sector lookups that hit",
                       {"LTS.TriageCompute.lts__average_t_sector_hit_rate_realtime.pct",
                        "lts__t_sector_hit_rate.pct"}};
const MetricDef kPcieRead{"pm_pcie_read",
                          "PCIe Read",
                          "%",
                          "Bytes received over PCIe, of the link's peak",
                          {"pcie__read_bytes" PCT}};
const MetricDef kPcieWrite{"pm_pcie_write",
                           "PCIe Write",
                           "%",
                           "Bytes sent over PCIe, of the link's peak",
                           {"pcie__write_bytes" PCT}};
const MetricDef kNvlinkRx{
    "pm_nvlink_rx", "NVLink RX", "%", "Bytes received over NVLink, of peak", {"nvlrx__bytes" PCT}};
const MetricDef kNvlinkTx{
    "pm_nvlink_tx", "NVLink TX", "%", "Bytes sent over NVLink, of peak", {"nvltx__bytes" PCT}};
const MetricDef kHmma{"pm_tensor_hmma",
                      "Tensor HMMA",
                      "%",
                      "Cycles the tensor pipes ran floating-point (HMMA: fp16/bf16/tf32/fp8) ops",
                      {"TPC.TriageCompute.sm__pipe_tensor_op_hmma_cycles_active_realtime" PCT}};
const MetricDef kImma{"pm_tensor_imma",
                      "Tensor IMMA",
                      "%",
                      "Cycles the tensor pipes ran integer (IMMA) ops",
                      {"TPC.TriageCompute.sm__pipe_tensor_op_imma_cycles_active_realtime" PCT}};
const MetricDef kGrActive{"pm_gr_active",
                          "GR Active",
                          "%",
                          "Cycles the compute engine had work",
                          {"gr__cycles_active.sum.pct_of_peak_sustained_elapsed"}};
#undef PCT

struct NamedSet {
  const char* name;
  std::vector<MetricDef> metrics;
};
const std::vector<NamedSet>& sets() {
  static const std::vector<NamedSet> s{
      {"default",
       {kTensor, kSmActive, kSmIssue, kOccupancy, kDramRead, kDramWrite, kDramReadBytes,
        kDramWriteBytes, kL2Hit, kPcieRead, kPcieWrite, kNvlinkRx, kNvlinkTx, kHmma, kImma,
        kGrActive}},
      {"compute", {kTensor, kSmActive, kSmIssue, kOccupancy, kHmma, kImma, kGrActive}},
      {"memory",
       {kDramRead, kDramWrite, kDramReadBytes, kDramWriteBytes, kL2Hit, kPcieRead, kPcieWrite,
        kNvlinkRx, kNvlinkTx}}};
  return s;
}

std::string units_of(const std::string& dim_unit) {
  if (dim_unit == "percent") return "%";
  if (dim_unit == "byte/second") return "B/s";
  return dim_unit;
}

// A set given as CUPTI names: each its own metric, its track named after it.
std::vector<MetricDef> custom_set(const std::string& text, std::vector<std::string>* storage) {
  *storage = split_metric_names(text);
  std::vector<MetricDef> out;
  for (const std::string& n : *storage)
    out.push_back(MetricDef{n.c_str(), n.c_str(), "", "", {n.c_str()}});
  return out;
}

}  // namespace

const std::vector<MetricDef>& named_set(const std::string& name) {
  static const std::vector<MetricDef> none;
  for (const NamedSet& s : sets())
    if (name == s.name) return s.metrics;
  return none;
}

std::vector<std::string> set_names() {
  std::vector<std::string> out;
  for (const NamedSet& s : sets()) out.emplace_back(s.name);
  return out;
}

bool choose(const Api& a, const std::string& chip, const std::vector<uint8_t>* availability,
            const std::string& set, std::vector<Chosen>* out, std::vector<std::string>* left_out,
            std::string* why) {
  std::vector<std::string> storage;
  std::vector<MetricDef> defs = named_set(set);
  if (defs.empty()) defs = custom_set(set, &storage);
  std::vector<const char*> picked;
  for (const MetricDef& def : defs) {
    bool has_one = false, fits = false;
    std::string unavailable;  // CUPTI's answer for a name this GPU's counters cannot give
    for (const char* name : def.names) {
      MetricHost single(a);
      if (!single.init(chip, availability, why, kPmSampling)) return false;
      std::string err;
      if (!single.add_metrics({name}, &err)) {  // not a PM-sampling metric of this chip (GPU)
        if (availability != nullptr && unavailable.empty()) unavailable = err;
        continue;
      }
      has_one = true;
      MetricHost trial(a);
      std::vector<const char*> names = picked;
      names.push_back(name);
      std::vector<uint8_t> image;
      size_t passes = 0;
      if (!trial.init(chip, availability, why, kPmSampling)) return false;
      if (!trial.config_image(names, &image, &passes, &err) || passes != 1) continue;
      Chosen c{def.key, def.symbol, def.units, def.description, name};
      MetricProps props;
      if (trial.properties(name, &props)) {
        if (c.units.empty()) c.units = units_of(props.dim_unit);
        if (c.description.empty()) c.description = props.description;
      }
      out->push_back(std::move(c));
      picked.push_back(name);
      fits = true;
      break;
    }
    if (fits) continue;
    std::string names;
    for (const char* n : def.names) names += std::string(names.empty() ? "" : ", ") + n;
    left_out->push_back(std::string(def.key) + ": " +
                        (has_one ? "does not fit one pass with the metrics before it"
                         : availability != nullptr ? "not available on this " + chip + " GPU (" +
                                                         names + ": " + unavailable + ")"
                                                   : chip + " has no PM-sampling metric " + names));
  }
  if (out->empty()) {
    *why = "none of the metrics of '" + set + "' can be sampled on " + chip;
    return false;
  }
  return true;
}

}  // namespace rocprof::cupti::pm

namespace rocprof::cupti {
bool pm_sampling_set(const std::string& chip, const std::string& set, std::vector<PmChoice>* chosen,
                     std::vector<std::string>* left_out, std::string* why) {
  const Api* a = load("", why);
  if (a == nullptr) return false;
  if (!a->counters_missing.empty()) {
    *why = a->path + " lacks " + a->counters_missing + " (PM sampling needs CUDA 12.6+)";
    return false;
  }
  std::vector<pm::Chosen> out;
  if (!pm::choose(*a, chip, nullptr, set, &out, left_out, why)) return false;
  for (const pm::Chosen& c : out) chosen->push_back(PmChoice{c.key, c.cupti_name, c.units});
  return true;
}
}  // namespace rocprof::cupti

namespace rocprof::cupti::pm {

int64_t clock_offset(uint64_t ts, uint64_t boottime, uint64_t realtime, const char** name) {
  const auto dist = [ts](uint64_t t) { return t > ts ? t - ts : ts - t; };
  if (dist(realtime) < dist(boottime)) {
    *name = "CLOCK_REALTIME";
    return static_cast<int64_t>(boottime) - static_cast<int64_t>(realtime);
  }
  *name = "CLOCK_BOOTTIME";
  return 0;
}

namespace {

uint64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

using Series = MetricSeries;

struct Device {
  uint32_t ordinal = 0, agent_id = 0;
  std::string chip, status = "pending";
  std::vector<Chosen> metrics;
  std::vector<std::string> left_out;
  std::vector<const char*> names;
  std::vector<Series> series;
  std::vector<uint8_t> availability, config, counter_data;
  std::unique_ptr<MetricHost> host;
  CUpti_PmSampling_Object* obj = nullptr;
  bool started = false;
  // Sampling stopped while the session is paused (on-demand windows, roctxProfilerPause): the
  // GPU's counters are not read and this thread evaluates nothing, so a paused session pays
  // nothing for them; started again on resume.
  bool halted = false;
  bool cannot_halt = false;    // Stop failed: sampling runs on, its samples dropped while paused
  bool cannot_resume = false;  // Start failed after a pause: no more metrics from this GPU
  bool skip_next = false;      // the first sample after a Start: from an earlier reference
  std::vector<double> values;
  // Figures for the metadata.
  uint64_t samples = 0, overflows = 0, full = 0, decodes = 0, errors = 0, missing = 0;
  uint64_t long_samples = 0;  // the first after each Start, or over 4 periods: left out
  uint64_t thinned = 0;       // decoded but not evaluated (the host fell behind)
  size_t stride = 1;          // every stride-th sample of a decode is evaluated
  uint64_t halts = 0;
  uint64_t steps = 0, stepped_ns = 0;  // sample to sample within stretches: the achieved rate
  uint64_t last_start = 0, last_end = 0;
  std::string last_error;
};

class Sampler {
 public:
  bool start(CaptureContext& c, const GpuMetricsSettings& s, const Api& a, std::string* why) {
    if (running_.load() || forked_) return true;
    if (!a.counters_missing.empty()) {
      *why = a.path + " lacks " + a.counters_missing + " (PM sampling needs CUDA 12.6+)";
      return false;
    }
    std::vector<std::string> storage;
    if (named_set(s.set).empty() && custom_set(s.set, &storage).empty()) {
      *why = "--gpu-metrics-set '" + s.set + "' names no metric";
      return false;
    }
    ctx_ = &c;
    api_ = &a;
    generation_.fetch_add(1, std::memory_order_relaxed);
    settings_ = s;
    interval_ns_ = 1000000000ull / std::max<uint32_t>(s.hz, 1);
    disable_all();
    pending_.clear();
    seen_.clear();
    offset_known_ = false;
    clock_name_ = "";
    out_ = MetricSeriesWriter{&c, 0, c.intern("cupti_pm_sampling")};
    stop_ = false;
    c.info(MetadataInfo{"rocprof.gpu_metrics.hz", std::to_string(s.hz)});
    c.info(MetadataInfo{"rocprof.gpu_metrics.set", s.set});
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    thread_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    running_.store(true, std::memory_order_release);
    return true;
  }

  void post(CUcontext ctx) {
    if (!running_.load(std::memory_order_acquire) || ctx == nullptr ||
        api_->counters.cuptiGetDeviceId == nullptr)
      return;
    uint32_t device = 0;
    if (api_->counters.cuptiGetDeviceId(ctx, &device) != CUPTI_SUCCESS) return;
    std::lock_guard<std::mutex> g(mu_);
    if (std::find(seen_.begin(), seen_.end(), device) != seen_.end()) return;
    seen_.push_back(device);
    pending_.push_back(device);
    cv_.notify_one();
  }

  void stop(CaptureContext& c) {
    if (!running_.load()) return;
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
    running_.store(false);
    report(c);
  }

  void disable_all() {
    for (Device& d : devices_) {
      if (d.obj == nullptr) continue;
      auto p = params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
      p.pPmSamplingObject = d.obj;
      api_->counters.cuptiPmSamplingDisable(&p);
      d.obj = nullptr;
    }
    devices_.clear();
  }

  void fork_child() {
    // Neither the thread nor the parent's sampling objects exist here: forget both (a fork
    // child samples nothing: the GPUs are its parent's).
    forked_ = true;
    if (running_.load()) thread_.detach();
    running_.store(false);
    devices_.clear();
  }

  // Read on the application's threads (the callbacks): an atomic.
  bool running() const { return running_.load(std::memory_order_acquire); }
  // Bumped per session, so that a thread's last-seen context is looked at again in the next.
  static std::atomic<uint32_t> generation_;

 private:
  void run() {
    prctl(PR_SET_NAME, "rocprof-pmsamp", 0, 0, 0);
    out_.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait_for(lk, std::chrono::milliseconds(settings_.decode_ms),
                   [this] { return stop_ || !pending_.empty(); });
      std::vector<uint32_t> fresh;
      fresh.swap(pending_);
      const bool stopping = stop_;
      lk.unlock();
      for (uint32_t dev : fresh) set_up(dev);
      const bool paused = ctx_->paused();
      for (Device& d : devices_) {
        if (!d.started) continue;
        if (paused != d.halted && !(paused ? d.cannot_halt : d.cannot_resume)) halt(d, paused);
        if (!d.halted) decode(d);
      }
      if (stopping) {
        for (Device& d : devices_) finish(d);
        return;
      }
      lk.lock();
    }
  }

  bool call(Device& d, const char* what, CUptiResult r) {
    if (r == CUPTI_SUCCESS) return true;
    d.last_error = call_error(*api_, what, r);
    return false;
  }

  void set_up(uint32_t ordinal) {
    devices_.emplace_back();
    Device& d = devices_.back();
    d.ordinal = ordinal;
    d.agent_id = gpu_agent_id(ordinal);
    std::string why;
    if (!configure(d, &why)) {
      d.status = "off: " + why;
      std::fprintf(stderr, "rocprof: --gpu-metrics: GPU %u: %s; tracing continues\n", ordinal,
                   why.c_str());
      if (d.obj != nullptr) {
        auto p =
            params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
        p.pPmSamplingObject = d.obj;
        api_->counters.cuptiPmSamplingDisable(&p);
        d.obj = nullptr;
      }
      return;
    }
    d.status = "on";
    for (const std::string& line : d.left_out)
      std::fprintf(stderr, "rocprof: --gpu-metrics: GPU %u (%s) left out %s\n", ordinal,
                   d.chip.c_str(), line.c_str());
  }

  bool configure(Device& d, std::string* why) {
    const CounterApi& c = api_->counters;
    static std::once_flag profiler_once;
    std::call_once(profiler_once, [&c] {
      auto p =
          params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
      c.cuptiProfilerInitialize(&p);
    });
    auto chip =
        params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = d.ordinal;
    CUptiResult r = c.cuptiDeviceGetChipName(&chip);
    if (r != CUPTI_SUCCESS || chip.pChipName == nullptr)
      return *why = call_error(*api_, "cuptiDeviceGetChipName", r), false;
    d.chip = chip.pChipName;
    auto av = params<CUpti_PmSampling_GetCounterAvailability_Params>(
        CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
    av.deviceIndex = d.ordinal;
    if ((r = c.cuptiPmSamplingGetCounterAvailability(&av)) == CUPTI_SUCCESS &&
        av.counterAvailabilityImageSize > 0) {
      d.availability.assign(av.counterAvailabilityImageSize, 0);
      av.pCounterAvailabilityImage = d.availability.data();
      r = c.cuptiPmSamplingGetCounterAvailability(&av);
    }
    if (r != CUPTI_SUCCESS) {
      if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        return *why =
                   "no permission to read the GPU's performance counters "
                   "(NVreg_RestrictProfilingToAdminUsers)",
               false;
      return *why = call_error(*api_, "cuptiPmSamplingGetCounterAvailability", r), false;
    }
    if (!choose(*api_, d.chip, &d.availability, settings_.set, &d.metrics, &d.left_out, why))
      return false;
    for (const Chosen& m : d.metrics) d.names.push_back(m.cupti_name.c_str());
    d.host = std::make_unique<MetricHost>(*api_);
    size_t passes = 0;
    if (!d.host->init(d.chip, &d.availability, why, kPmSampling) ||
        !d.host->config_image(d.names, &d.config, &passes, why))
      return false;
    if (passes != 1) return *why = std::to_string(passes) + " passes: PM sampling takes one", false;
    auto en = params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
    en.deviceIndex = d.ordinal;
    if ((r = c.cuptiPmSamplingEnable(&en)) != CUPTI_SUCCESS)
      return *why = call_error(*api_, "cuptiPmSamplingEnable", r), false;
    d.obj = en.pPmSamplingObject;
    auto sc =
        params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
    sc.pPmSamplingObject = d.obj;
    sc.configSize = d.config.size();
    sc.pConfig = d.config.data();
    sc.hardwareBufferSize = static_cast<size_t>(settings_.buffer_mb) << 20;
    sc.samplingInterval = interval_ns_;
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
    if ((r = c.cuptiPmSamplingSetConfig(&sc)) != CUPTI_SUCCESS)
      return *why = call_error(*api_, "cuptiPmSamplingSetConfig", r), false;
    // Eight decode periods of room (on an H200 each drain too late for a smaller room lost 8-12).
    const uint64_t per_decode = uint64_t{settings_.hz} * settings_.decode_ms / 1000;
    auto ds = params<CUpti_PmSampling_GetCounterDataSize_Params>(
        CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
    ds.pPmSamplingObject = d.obj;
    ds.pMetricNames = d.names.data();
    ds.numMetrics = d.names.size();
    ds.maxSamples = static_cast<uint32_t>(std::min<uint64_t>(8 * per_decode + 64, 65536));
    if ((r = c.cuptiPmSamplingGetCounterDataSize(&ds)) != CUPTI_SUCCESS)
      return *why = call_error(*api_, "cuptiPmSamplingGetCounterDataSize", r), false;
    d.counter_data.assign(ds.counterDataSize, 0);
    if (!reset(d)) return *why = d.last_error, false;
    d.values.assign(d.names.size(), 0.0);
    describe(d);
    auto st = params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
    st.pPmSamplingObject = d.obj;
    if ((r = c.cuptiPmSamplingStart(&st)) != CUPTI_SUCCESS)
      return *why = call_error(*api_, "cuptiPmSamplingStart", r), false;
    d.started = true;
    d.skip_next = true;
    return true;
  }

  void describe(Device& d) {
    for (const Chosen& m : d.metrics) {
      Series s = metric_series(*ctx_, "cupti_pm_sampling", d.ordinal, d.agent_id, m.key);
      s.info.symbol = m.symbol;
      s.info.units = m.units;
      s.info.description = m.description + " (CUPTI " + m.cupti_name + ", " + d.chip + ")";
      d.series.push_back(std::move(s));
    }
  }

  bool reset(Device& d) {
    auto p = params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pPmSamplingObject = d.obj;
    p.counterDataSize = d.counter_data.size();
    p.pCounterData = d.counter_data.data();
    return call(d, "cuptiPmSamplingCounterDataImageInitialize",
                api_->counters.cuptiPmSamplingCounterDataImageInitialize(&p));
  }

  // Drains the hardware buffer: decode, evaluate and emit, reset; again while the image filled.
  void decode(Device& d) {
    const CounterApi& c = api_->counters;
    for (int round = 0; round < 64; ++round) {
      auto p = params<CUpti_PmSampling_DecodeData_Params>(
          CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
      p.pPmSamplingObject = d.obj;
      p.pCounterDataImage = d.counter_data.data();
      p.counterDataImageSize = d.counter_data.size();
      const CUptiResult r = c.cuptiPmSamplingDecodeData(&p);
      ++d.decodes;
      if (r == CUPTI_ERROR_OUT_OF_MEMORY || (r == CUPTI_SUCCESS && p.overflow != 0)) ++d.overflows;
      if (r != CUPTI_SUCCESS) {
        ++d.errors;
        call(d, "cuptiPmSamplingDecodeData", r);
      }
      auto info = params<CUpti_PmSampling_GetCounterDataInfo_Params>(
          CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
      info.pCounterDataImage = d.counter_data.data();
      info.counterDataImageSize = d.counter_data.size();
      if (!call(d, "cuptiPmSamplingGetCounterDataInfo", c.cuptiPmSamplingGetCounterDataInfo(&info)))
        return;
      const uint64_t t0 = mono_ns();
      const size_t n = info.numCompletedSamples;
      // Evaluation is the costly part (tens of µs a sample): when it falls behind the GPU,
      // only every stride-th sample is evaluated (its value then holds over the ones between),
      // so the hardware buffer is drained in time instead of overflowing.
      for (size_t i = 0; i < n; ++i) take(d, i, i % d.stride == 0 || i + 1 == n);
      const uint64_t spent = mono_ns() - t0, covered = n * interval_ns_;
      if (n > 0 && spent > covered / 2 && d.stride < kMaxStride)
        d.stride *= 2;
      else if (n > 0 && spent < covered / 8 && d.stride > 1)
        d.stride /= 2;
      if (info.numPopulatedSamples > 0 && !reset(d)) return;
      if (r != CUPTI_SUCCESS ||
          p.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
        return;
      ++d.full;
    }
  }

  void take(Device& d, size_t index, bool evaluate) {
    const CounterApi& c = api_->counters;
    auto si = params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
    si.pPmSamplingObject = d.obj;
    si.pCounterDataImage = d.counter_data.data();
    si.counterDataImageSize = d.counter_data.size();
    si.sampleIndex = index;
    if (!call(d, "cuptiPmSamplingCounterDataGetSampleInfo",
              c.cuptiPmSamplingCounterDataGetSampleInfo(&si))) {
      ++d.errors;
      return;
    }
    if (!offset_known_) {
      offset_ = clock_offset(si.startTimestamp, now_ns(), realtime_ns(), &clock_name_);
      offset_known_ = true;
    }
    const uint64_t start = si.startTimestamp + offset_, end = si.endTimestamp + offset_;
    // The first sample after a Start spans seconds (measured on an H200: from an earlier
    // reference): a value averaged over that is the GPU's at no moment.
    if (d.skip_next || end - start > 4 * interval_ns_) {
      d.skip_next = false;
      ++d.long_samples;
      return;
    }
    // Sampled as the pause began (or on through it): kept nowhere, ends no series, no gap.
    if (ctx_->paused()) {
      d.last_start = 0;
      return;
    }
    if (start > d.last_start && d.last_start != 0) {
      // Samples the hardware did not deliver (an overflow, a stall): the gap in periods.
      const uint64_t periods = (start - d.last_start + interval_ns_ / 2) / interval_ns_;
      if (periods > 1) d.missing += periods - 1;
      ++d.steps;
      d.stepped_ns += start - d.last_start;
    }
    ++d.samples;
    d.last_start = start;
    d.last_end = end;
    if (!evaluate) {
      ++d.thinned;
      return;
    }
    std::string why;
    if (!d.host->evaluate(d.counter_data, index, d.names, d.values.data(), &why)) {
      ++d.errors;
      d.last_error = why;
      return;
    }
    for (size_t m = 0; m < d.series.size(); ++m) out_.emit(d.series[m], start, d.values[m]);
  }

  // Pause: stop (what was sampled since the last drain is not kept), end each series at its last
  // kept sample; resume: start again. A GPU that will not stop samples on; one that will not
  // start again is said.
  void halt(Device& d, bool pause) {
    if (pause) {
      decode(d);
      auto p = params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
      p.pPmSamplingObject = d.obj;
      if (!call(d, "cuptiPmSamplingStop", api_->counters.cuptiPmSamplingStop(&p))) {
        d.cannot_halt = true;
        return;
      }
      decode(d);
      for (Series& s : d.series) {
        out_.finish(s, d.last_end);
        s.stored = false;  // the first value after the pause is stored, whatever it is
      }
      d.last_start = 0;
      d.halted = true;
      ++d.halts;
      return;
    }
    auto p = params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
    p.pPmSamplingObject = d.obj;
    if (call(d, "cuptiPmSamplingStart", api_->counters.cuptiPmSamplingStart(&p))) {
      d.halted = false;
      d.skip_next = true;
    } else {
      d.cannot_resume = true;
      std::fprintf(stderr,
                   "rocprof: --gpu-metrics: GPU %u: sampling did not start again after "
                   "a pause (%s); no metrics from this GPU after it\n",
                   d.ordinal, d.last_error.c_str());
    }
  }

  void finish(Device& d) {
    if (!d.started) return;
    if (d.halted) {
      d.started = false;
      return;
    }
    auto p = params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    p.pPmSamplingObject = d.obj;
    call(d, "cuptiPmSamplingStop", api_->counters.cuptiPmSamplingStop(&p));
    decode(d);
    d.started = false;
    // Each series ends where its last sample did, so its last value has a length.
    for (Series& s : d.series) out_.finish(s, d.last_end);
  }

  void report(CaptureContext& c) {
    if (*clock_name_ != 0) c.info(MetadataInfo{"rocprof.gpu_metrics.clock", clock_name_});
    c.info(MetadataInfo{"rocprof.gpu_metrics.interval_ns", std::to_string(interval_ns_)});
    c.info(MetadataInfo{"rocprof.gpu_metrics.values_stored", std::to_string(out_.stored)});
    c.info(MetadataInfo{"rocprof.gpu_metrics.values_unchanged", std::to_string(out_.unchanged)});
    if (devices_.empty())
      c.info(
          MetadataInfo{"rocprof.gpu_metrics.status", "no GPU: the program made no CUDA context"});
    for (const Device& d : devices_) {
      const std::string g = ".gpu" + std::to_string(d.ordinal);
      c.info(MetadataInfo{"rocprof.gpu_metrics.status" + g, d.status});
      if (!d.chip.empty()) c.info(MetadataInfo{"rocprof.gpu_metrics.chip" + g, d.chip});
      std::string names, left;
      for (const Chosen& m : d.metrics)
        names += (names.empty() ? "" : ",") + m.key + "=" + m.cupti_name;
      for (const std::string& l : d.left_out) left += (left.empty() ? "" : "; ") + l;
      c.info(MetadataInfo{"rocprof.gpu_metrics.metrics" + g, names});
      c.info(MetadataInfo{"rocprof.gpu_metrics.left_out" + g, left});
      if (d.status != "on") continue;
      const double hz = d.stepped_ns > 0 ? static_cast<double>(d.steps) /
                                               (static_cast<double>(d.stepped_ns) / 1e9)
                                         : 0.0;
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.1f", hz);
      c.info(MetadataInfo{"rocprof.gpu_metrics.samples" + g, std::to_string(d.samples)});
      c.info(MetadataInfo{"rocprof.gpu_metrics.achieved_hz" + g, rate});
      c.info(MetadataInfo{"rocprof.gpu_metrics.overflows" + g, std::to_string(d.overflows)});
      c.info(MetadataInfo{"rocprof.gpu_metrics.missing_samples" + g, std::to_string(d.missing)});
      c.info(MetadataInfo{"rocprof.gpu_metrics.decodes" + g, std::to_string(d.decodes)});
      c.info(MetadataInfo{"rocprof.gpu_metrics.image_full" + g, std::to_string(d.full)});
      c.info(MetadataInfo{"rocprof.gpu_metrics.errors" + g, std::to_string(d.errors)});
      c.info(MetadataInfo{"rocprof.gpu_metrics.long_samples" + g, std::to_string(d.long_samples)});
      c.info(MetadataInfo{"rocprof.gpu_metrics.thinned_samples" + g, std::to_string(d.thinned)});
      c.info(MetadataInfo{"rocprof.gpu_metrics.pauses" + g, std::to_string(d.halts)});
      if (d.cannot_halt || d.cannot_resume)
        c.info(
            MetadataInfo{"rocprof.gpu_metrics.pause_failed" + g, d.cannot_halt ? "stop" : "start"});
      if (!d.last_error.empty())
        c.info(MetadataInfo{"rocprof.gpu_metrics.last_error" + g, d.last_error});
      if (d.missing > 0) c.drops("GPU metric samples lost (hardware buffer)", d.missing);
      std::fprintf(
          stderr,
          "rocprof: GPU metrics: GPU %u (%s): %zu metrics, %llu samples at %s Hz "
          "(asked %u), %llu overflows, %llu samples missing, %llu not evaluated\n",
          d.ordinal, d.chip.c_str(), d.metrics.size(), static_cast<unsigned long long>(d.samples),
          rate, settings_.hz, static_cast<unsigned long long>(d.overflows),
          static_cast<unsigned long long>(d.missing), static_cast<unsigned long long>(d.thinned));
    }
  }

  CaptureContext* ctx_ = nullptr;
  const Api* api_ = nullptr;
  GpuMetricsSettings settings_;
  uint64_t interval_ns_ = 100000;
  std::atomic<bool> running_{false};
  bool forked_ = false;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<uint32_t> pending_, seen_;
  std::deque<Device> devices_;  // the thread's while it runs (stable addresses: CUPTI keeps some)
  MetricSeriesWriter out_;      // the thread's counter samples (tid: the thread's)
  bool offset_known_ = false;
  int64_t offset_ = 0;
  const char* clock_name_ = "";
};

std::atomic<uint32_t> Sampler::generation_{0};
Sampler* g_sampler = new Sampler();  // never destroyed: exit handlers may stop it late
thread_local CUcontext t_last = nullptr;
thread_local uint32_t t_generation = 0;

// `rocprof info`: whether PM sampling can run here (the CUPTI backend does the sampling).
void probe_pm_sampling(bool* live, std::string* reason) {
  int gpus = 0;
  std::string why;
  *live = false;
  if (!driver_present(&gpus, &why)) {
    *reason = why;
    return;
  }
  const Api* a = load("", &why);
  if (a == nullptr) {
    *reason = why;
    return;
  }
  if (!a->counters_missing.empty()) {
    *reason = a->path + " lacks " + a->counters_missing + " (PM sampling needs CUDA 12.6+)";
    return;
  }
  *live = true;
  *reason = "CUPTI PM sampling (no replay) on " + std::to_string(gpus) +
            " NVIDIA GPU(s), Turing or later; " + a->path;
}

const capture::Registered<ProbeOnly> g_registered{"cupti-pm-sampling", probe_pm_sampling};

}  // namespace

bool start(CaptureContext& c, const GpuMetricsSettings& s, const Api& a, std::string* why) {
  return g_sampler->start(c, s, a, why);
}
bool active() noexcept { return g_sampler->running(); }
void on_context_created(CUcontext ctx) noexcept {
  if (g_sampler->running()) g_sampler->post(ctx);
}
void on_api_enter(CUcontext ctx) noexcept {
  const uint32_t gen = Sampler::generation_.load(std::memory_order_relaxed);
  if (ctx == nullptr || (ctx == t_last && gen == t_generation) || !g_sampler->running()) return;
  t_last = ctx;
  t_generation = gen;
  g_sampler->post(ctx);
}
void stop(CaptureContext& c) noexcept { g_sampler->stop(c); }
void disable_all() noexcept { g_sampler->disable_all(); }
void fork_child() noexcept { g_sampler->fork_child(); }

}  // namespace rocprof::cupti::pm
