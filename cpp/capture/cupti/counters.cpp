// Per-kernel hardware counters: the range-profiler half (counters.hpp says how and why). Every
// CUPTI call's status is checked; a failure turns counters off for that context with one line
// on stderr and in the database's metadata, and the program runs on.
#include "counters.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/context.hpp"
#include "capture/kernel_names.hpp"
#include "capture/settings.hpp"
#include "counters_host.hpp"
#include "rocprof/clock.hpp"
#include "rocprof/exit_safe_tls.hpp"
#include "rocprof/json.hpp"

namespace rocprof::cupti::counters {
namespace {

struct ContextState {
  explicit ContextState(const Api& a) : host(a) {}
  CUcontext ctx = nullptr;
  uint32_t device = 0;
  bool broken = false;
  MetricHost host;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::vector<uint8_t> config, data;
  // Kept as long as the host object that was initialised with it.
  std::vector<uint8_t> availability;
  size_t passes = 0;
  // The metrics this device collects: the asked ones less optional ones its chip lacks.
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
  std::vector<uint32_t> keys;  // names[j]'s PmcInfo key, interned once when configured
  // names[duration] is gpu__time_duration.sum (-1: the chip has none); collected to time the
  // kernels, and stored as a value only when it was asked for.
  int duration = -1;
  bool duration_asked = false;
  bool stored(size_t j) const { return duration_asked || static_cast<int>(j) != duration; }
};

constexpr const char* kDuration = "gpu__time_duration.sum";

struct Asked {
  std::string name;
  bool optional;  // "?name": left out where the chip has no such metric (--sol's sets)
};

const Api* g_a = nullptr;
std::atomic<bool> g_active{false};
std::atomic<CaptureContext*> g_ctx{nullptr};
// Held from a launch's ENTER to its EXIT: launches of all threads run one at a time. Also
// guards everything below (contexts are created and destroyed under it).
std::mutex g_mu;
std::vector<Asked> g_asked;
std::string g_origin;
std::vector<ContextState*> g_contexts;
std::set<uint32_t> g_described;  // devices whose PmcInfo rows were sent
std::string g_status = "on";
std::vector<std::string> g_passes;  // "GPU<n>=<passes>"
bool g_profiler_initialized = false;
uint64_t g_launches = 0, g_ranges_dropped = 0, g_incomplete = 0, g_values = 0;
// --kernel-include/exclude-regex: as rocprofv3's, they pick the kernels whose counters are read
// (the trace keeps every kernel); matched on the demangled name, as the trace's own filters.
kernel_names::Filter g_filter;
std::atomic<uint64_t> g_unselected{0};

// Kernel replay: first-seen check of activity records, direct-mapped by correlation id.
constexpr uint32_t kSeenSlots = 1u << 16;
std::atomic<uint32_t> g_seen[kSeenSlots];
std::atomic<bool> g_dedupe{false};
std::atomic<uint64_t> g_replayed{0};

// Profiled kernels' times by correlation id, direct-mapped: written by the launching thread
// (one at a time, under g_mu), read by CUPTI's buffer thread when the kernel's record arrives.
// corr is cleared while start/end change, so a reader sees a matching corr only around a
// complete pair.
struct KernelTime {
  std::atomic<uint32_t> corr{0};
  std::atomic<uint64_t> start{0}, end{0};
};
KernelTime g_times[kSeenSlots];

thread_local bool t_holding = false;  // this thread holds g_mu (between ENTER and EXIT)
thread_local int t_nested = 0;        // launches inside the held one (not profiled)
thread_local ContextState* t_state = nullptr;
thread_local uint32_t t_corr = 0, t_alt = 0;
thread_local uint64_t t_enter = 0;  // when the profiled launch began (its kernel's start)

uint32_t os_tid() noexcept { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// Whether a launch of `symbol` (the mangled name CUPTI gives a launch callback) is profiled.
// Decided once per kernel name and thread: launches of unselected kernels run unserialised.
bool selected(const char* symbol) {
  if (!g_filter.any()) return true;
  if (symbol == nullptr) return !g_filter.has_include();
  // Not a plain thread_local: launches can come from exit handlers (exit_safe_tls.hpp).
  thread_local std::unordered_map<std::string, bool>* t_verdicts = nullptr;
  auto& verdicts = exit_safe_tls::get(t_verdicts);
  const auto [it, is_new] = verdicts.emplace(symbol, false);
  if (!is_new) return it->second;
  it->second = g_filter.keeps(kernel_names::demangle(symbol).c_str());
  return it->second;
}

void note(const std::string& tag, const std::string& value) {
  if (CaptureContext* c = g_ctx.load(std::memory_order_acquire))
    c->info(MetadataInfo{"rocprof.counters." + tag, value});
}

// One line on stderr and the reason in the metadata; the context collects nothing more.
void fail(ContextState& st, const std::string& why) {
  st.broken = true;
  std::fprintf(stderr, "rocprof: hardware counters off for GPU %u: %s\n", st.device, why.c_str());
  g_status = "off for GPU " + std::to_string(st.device) + ": " + why;
  note("status", g_status);
  if (st.profiler != nullptr) {
    auto d =
        params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    d.pRangeProfilerObject = st.profiler;
    g_a->counters.cuptiRangeProfilerDisable(&d);
    st.profiler = nullptr;
  }
}

bool checked(ContextState& st, const char* what, CUptiResult r) {
  if (r == CUPTI_SUCCESS) return true;
  std::string why = call_error(*g_a, what, r);
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    why +=
        " (GPU performance counters are restricted to administrators on this host: run as "
        "root, or load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0)";
  fail(st, why);
  return false;
}

const char* support_problem(const CUpti_Profiler_DeviceSupported_Params& p) {
  if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "the GPU architecture has no range profiler (compute capability 7.0+ needed)";
  if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) return "profiling is disabled on this vGPU";
  if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "vGPU without profiling support";
  if (p.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "confidential computing is on";
  if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "a crypto-mining processor";
  if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "SLI is on";
  if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "WSL without profiling support";
  return "CUPTI says the device does not support profiling";
}

// The keys of a context's counters (one per device and metric, as the writer's rocpd_info_pmc
// ids are), and their rocpd_info_pmc rows, once per session and device.
void describe(ContextState& st) {
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) return;
  st.keys.clear();
  for (size_t j = 0; j < st.names.size(); ++j)
    st.keys.push_back(
        st.stored(j) ? c->intern("pmc:cupti:" + std::to_string(st.device) + ":" + st.names[j]) : 0);
  if (!g_described.insert(st.device).second) return;
  for (size_t j = 0; j < st.names.size(); ++j) {
    if (!st.stored(j)) continue;
    const std::string& name = st.names[j];
    MetricProps props;
    st.host.properties(name, &props);
    PmcInfo p;
    p.key = st.keys[j];
    p.agent_id = gpu_agent_id(st.device);
    p.name = p.symbol = name;
    p.description = props.description;
    p.units = props.dim_unit;
    p.block = props.hw_unit;
    p.component = "cupti";
    const bool peak =
        name.size() > 15 && name.compare(name.size() - 15, 15, ".peak_sustained") == 0;
    p.is_constant = peak;  // the hardware's own per-cycle peak: the same for every dispatch
    p.is_derived = props.type != CUPTI_METRIC_TYPE_COUNTER ||
                   name.find(".pct_of_") != std::string::npos ||
                   name.find(".per_") != std::string::npos;
    std::string ext = "{\"metric_type\":";
    json_escape_into(ext, metric_type_name(props.type));
    ext += ",\"chip\":";
    json_escape_into(ext, st.host.chip());
    ext += ",\"passes\":" + std::to_string(st.passes) +
           ",\"replay\":\"kernel\",\"range\":\"auto\",\"origin\":";
    json_escape_into(ext, g_origin);
    ext += "}";
    p.extdata = ext;
    c->info(std::move(p));
  }
}

bool configure(ContextState& st) {
  const CounterApi& f = g_a->counters;
  uint32_t device = 0;
  if (!checked(st, "cuptiGetDeviceId", f.cuptiGetDeviceId(st.ctx, &device))) return false;
  st.device = device;
  if (!g_profiler_initialized) {
    auto init =
        params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if (!checked(st, "cuptiProfilerInitialize", f.cuptiProfilerInitialize(&init))) return false;
    g_profiler_initialized = true;
  }
  auto sup = params<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  sup.cuDevice = static_cast<CUdevice>(device);
  sup.api = CUPTI_PROFILER_RANGE_PROFILING;
  // A failed query is no verdict (the calls below say what is wrong); an answer of "no" is.
  const CUptiResult sr = f.cuptiProfilerDeviceSupported(&sup);
  if (sr != CUPTI_SUCCESS)
    note("device_supported_query", call_error(*g_a, "cuptiProfilerDeviceSupported", sr));
  else if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    fail(st, support_problem(sup));
    return false;
  }
  auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = device;
  if (!checked(st, "cuptiDeviceGetChipName", f.cuptiDeviceGetChipName(&chip))) return false;
  const std::string chip_name = chip.pChipName ? chip.pChipName : "";
  auto av = params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  av.ctx = st.ctx;
  if (!checked(st, "cuptiProfilerGetCounterAvailability (size)",
               f.cuptiProfilerGetCounterAvailability(&av)))
    return false;
  st.availability.assign(av.counterAvailabilityImageSize, 0);
  av.pCounterAvailabilityImage = st.availability.data();
  if (!checked(st, "cuptiProfilerGetCounterAvailability",
               f.cuptiProfilerGetCounterAvailability(&av)))
    return false;
  // Each name judged on its own first, so that a bad one is named (CUPTI's configuration call
  // only says that one of them is bad) and an optional one the chip lacks is left out.
  std::string bad, skipped;
  for (const Asked& a : g_asked) {
    const std::string problem = check_metric(*g_a, chip_name, a.name);
    if (problem.empty())
      st.names.push_back(a.name);
    else if (a.optional)
      skipped += (skipped.empty() ? "" : " ") + a.name;
    else
      bad += (bad.empty() ? "" : "; ") + a.name + ": " + problem;
  }
  if (!skipped.empty())
    note("skipped_on_gpu" + std::to_string(device),
         skipped + " (not metrics of " + chip_name + ")");
  if (!bad.empty()) {
    fail(st, "not collectable on " + chip_name + ": " + bad + " (rocprof avail --chip " +
                 chip_name + " lists what is)");
    return false;
  }
  if (st.names.empty()) {
    fail(st, "none of the counters asked for exists on " + chip_name);
    return false;
  }
  for (size_t j = 0; j < st.names.size(); ++j)
    if (st.names[j] == kDuration) st.duration = static_cast<int>(j), st.duration_asked = true;
  if (st.duration < 0 && check_metric(*g_a, chip_name, kDuration).empty()) {
    st.duration = static_cast<int>(st.names.size());
    st.names.push_back(kDuration);
  }
  for (const std::string& n : st.names) st.name_ptrs.push_back(n.c_str());
  std::string why;
  if (!st.host.init(chip_name, &st.availability, &why)) {
    fail(st, why + " (check the names with: rocprof avail --chip " + chip_name + ")");
    return false;
  }
  if (!st.host.config_image(st.name_ptrs, &st.config, &st.passes, &why) && !st.duration_asked &&
      st.duration >= 0) {
    // The asked set may fit where it does not with the duration added: collected without it.
    st.names.pop_back();
    st.name_ptrs.pop_back();
    st.duration = -1;
    why.clear();
    st.host.config_image(st.name_ptrs, &st.config, &st.passes, &why);
  }
  if (!why.empty()) {
    fail(st, why + " (check the names with: rocprof avail --chip " + chip_name + ")");
    return false;
  }
  if (st.duration < 0)
    note("kernel_times_gpu" + std::to_string(device),
         "none: " + chip_name + " has no " + kDuration + ", so its profiled kernels are stored " +
             "untimed (start = end = 0)");
  g_passes.push_back("GPU" + std::to_string(device) + "=" + std::to_string(st.passes));
  note("passes", [] {
    std::string s;
    for (const auto& p : g_passes) s += (s.empty() ? "" : ",") + p;
    return s;
  }());
  auto en =
      params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  en.ctx = st.ctx;
  if (!checked(st, "cuptiRangeProfilerEnable", f.cuptiRangeProfilerEnable(&en))) return false;
  st.profiler = en.pRangeProfilerObject;
  auto sz = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  sz.pRangeProfilerObject = st.profiler;
  sz.pMetricNames = st.name_ptrs.data();
  sz.numMetrics = st.name_ptrs.size();
  sz.maxNumOfRanges = 1;  // one launch per start/stop
  sz.maxNumRangeTreeNodes = 1;
  if (!checked(st, "cuptiRangeProfilerGetCounterDataSize",
               f.cuptiRangeProfilerGetCounterDataSize(&sz)))
    return false;
  st.data.assign(sz.counterDataSize, 0);
  auto ci = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  ci.pRangeProfilerObject = st.profiler;
  ci.counterDataSize = st.data.size();
  ci.pCounterData = st.data.data();
  if (!checked(st, "cuptiRangeProfilerCounterDataImageInitialize",
               f.cuptiRangeProfilerCounterDataImageInitialize(&ci)))
    return false;
  auto sc = params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  sc.pRangeProfilerObject = st.profiler;
  sc.configSize = st.config.size();
  sc.pConfig = st.config.data();
  sc.counterDataImageSize = st.data.size();
  sc.pCounterDataImage = st.data.data();
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = 1;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  if (!checked(st, "cuptiRangeProfilerSetConfig", f.cuptiRangeProfilerSetConfig(&sc))) return false;
  describe(st);
  return true;
}

ContextState* state_for(CUcontext ctx) {
  for (ContextState* s : g_contexts)
    if (s->ctx == ctx) return s;
  auto* st = new ContextState(*g_a);
  st->ctx = ctx;
  g_contexts.push_back(st);
  configure(*st);  // on failure the state stays, broken, so the next launch does not retry
  return st;
}

// After the launch returned: its one range decoded and evaluated, values out as records.
void collect(ContextState& st) {
  const CounterApi& f = g_a->counters;
  auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = st.profiler;
  if (!checked(st, "cuptiRangeProfilerStop", f.cuptiRangeProfilerStop(&stop))) return;
  if (!stop.isAllPassSubmitted) ++g_incomplete;
  auto dec = params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  dec.pRangeProfilerObject = st.profiler;
  if (!checked(st, "cuptiRangeProfilerDecodeData", f.cuptiRangeProfilerDecodeData(&dec))) return;
  g_ranges_dropped += dec.numOfRangeDropped;
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = st.data.data();
  info.counterDataImageSize = st.data.size();
  if (!checked(st, "cuptiRangeProfilerGetCounterDataInfo",
               f.cuptiRangeProfilerGetCounterDataInfo(&info)))
    return;
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  std::vector<double> values(st.names.size());
  const bool keyed = st.keys.size() == values.size();
  for (size_t range = 0; range < info.numTotalRanges && c != nullptr && keyed; ++range) {
    std::string why;
    if (!st.host.evaluate(st.data, range, st.name_ptrs, values.data(), &why)) {
      fail(st, why);
      return;
    }
    ++g_launches;
    const uint32_t tid = os_tid();
    const uint64_t now = now_ns();
    if (st.duration >= 0) {
      const double ns = values[static_cast<size_t>(st.duration)];
      if (ns > 0 && ns < 1e15)
        remember_kernel_time(t_corr, t_enter, t_enter + static_cast<uint64_t>(std::llround(ns)));
    }
    for (size_t j = 0; j < values.size(); ++j) {
      if (!st.stored(j)) continue;
      Record r = make_record(RecordKind::kPmcValue, now, now, tid, 0, t_corr);
      r.pmc.pmc_key = st.keys[j];
      r.pmc.agent_id = gpu_agent_id(st.device);
      r.pmc.value = values[j];
      r.pmc.alt_correlation_id = t_alt != t_corr ? t_alt : 0;
      if (c->emit(r)) ++g_values;
    }
  }
  auto ci = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  ci.pRangeProfilerObject = st.profiler;
  ci.counterDataSize = st.data.size();
  ci.pCounterData = st.data.data();
  checked(st, "cuptiRangeProfilerCounterDataImageInitialize",
          f.cuptiRangeProfilerCounterDataImageInitialize(&ci));
}

void disable(ContextState* st) {
  if (st->profiler != nullptr) {
    auto d =
        params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    d.pRangeProfilerObject = st->profiler;
    g_a->counters.cuptiRangeProfilerDisable(&d);
    st->profiler = nullptr;
  }
  delete st;
}

}  // namespace

bool start(CaptureContext& c, const CounterSettings& s, const Api& a, std::string* why) {
  std::lock_guard<std::mutex> g(g_mu);
  if (!a.counters_missing.empty()) {
    *why = a.path + " lacks " + a.counters_missing +
           " (per-kernel counters need CUPTI's range profiler, CUDA 12.6 or newer)";
    return false;
  }
  g_asked.clear();
  for (size_t at = 0; at < s.metrics.size();) {
    const size_t end = std::min(s.metrics.find(' ', at), s.metrics.size());
    if (end > at) {
      const bool optional = s.metrics[at] == '?';
      const std::string name =
          s.metrics.substr(at + (optional ? 1 : 0), end - at - (optional ? 1 : 0));
      if (!name.empty()) g_asked.push_back(Asked{name, optional});
    }
    at = end + 1;
  }
  if (g_asked.empty()) {
    *why = "no counter names given";
    return false;
  }
  if (!g_filter.compile(s.kernel_include, s.kernel_exclude, "--kernel-include-regex",
                        "--kernel-exclude-regex", why))
    return false;
  g_unselected.store(0);
  g_a = &a;
  g_origin = s.origin;
  g_described.clear();
  g_passes.clear();
  g_status = "on";
  g_launches = g_ranges_dropped = g_incomplete = g_values = 0;
  begin_dedupe();
  g_ctx.store(&c, std::memory_order_release);
  c.info(MetadataInfo{"rocprof.counters.metrics", s.metrics});
  c.info(MetadataInfo{"rocprof.counters.origin", g_origin});
  c.info(MetadataInfo{"rocprof.counters.method",
                      "CUPTI range profiler: one auto range per kernel launch, kernel replay"});
  c.info(MetadataInfo{"rocprof.counters.serialized",
                      "1: kernels ran one at a time, each replayed once per counter pass; their "
                      "durations are not those of an unprofiled run"});
  c.info(MetadataInfo{"rocprof.counters.status", g_status});
  c.info(MetadataInfo{"rocprof.counters.kernel_times",
                      std::string("profiled kernels: start = their launch call's start, end = "
                                  "start + ") +
                          kDuration +
                          " (CUPTI gives kernels no times under kernel replay); kernels not "
                          "profiled keep CUPTI's times"});
  if (g_filter.any())
    c.info(MetadataInfo{"rocprof.counters.kernel_regex",
                        "include '" + s.kernel_include + "', exclude '" + s.kernel_exclude + "'"});
  g_active.store(true, std::memory_order_release);
  return true;
}

bool active() noexcept { return g_active.load(std::memory_order_acquire); }

bool is_launch(CUpti_CallbackId id) noexcept {
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return true;
    default:
      return false;
  }
}

void on_launch(const CUpti_CallbackData* cb, uint32_t kernel_correlation) noexcept {
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (!active()) return;
    if (t_holding) {  // a launch made while one is being profiled (replay internals)
      ++t_nested;
      return;
    }
    // Paused (roctxProfilerPause, --selected-regions): its kernel record is not kept, so its
    // counters would have nowhere to go; the launch runs as usual, unserialised.
    if (CaptureContext* c = g_ctx.load(std::memory_order_acquire); c != nullptr && c->paused())
      return;
    if (!selected(cb->symbolName)) {
      g_unselected.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    g_mu.lock();
    t_holding = true;
    t_state = nullptr;
    t_corr = kernel_correlation;
    t_alt = cb->correlationId;
    if (!active()) return;  // stopped while this thread waited: EXIT only unlocks
    ContextState* st = state_for(cb->context);
    if (st->broken) return;
    t_enter = now_ns();
    auto sp =
        params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    sp.pRangeProfilerObject = st->profiler;
    if (checked(*st, "cuptiRangeProfilerStart", g_a->counters.cuptiRangeProfilerStart(&sp)))
      t_state = st;
    return;
  }
  if (!t_holding) return;
  if (t_nested > 0) {
    --t_nested;
    return;
  }
  if (t_state != nullptr && !t_state->broken) collect(*t_state);
  t_state = nullptr;
  t_holding = false;
  g_mu.unlock();
}

void on_context_destroy(CUcontext ctx) noexcept {
  if (g_a == nullptr || t_holding) return;
  std::lock_guard<std::mutex> g(g_mu);
  for (size_t i = 0; i < g_contexts.size(); ++i)
    if (g_contexts[i]->ctx == ctx) {
      disable(g_contexts[i]);
      g_contexts.erase(g_contexts.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

void stop(CaptureContext& c) noexcept {
  if (g_a == nullptr || !active()) return;
  g_active.store(false, std::memory_order_release);
  // Waits for a launch being profiled, unless this very thread is inside one (an exit path
  // taken from within a launch): then nothing else can be.
  std::unique_lock<std::mutex> g(g_mu, std::defer_lock);
  if (!t_holding) g.lock();
  for (ContextState* st : g_contexts) disable(st);
  g_contexts.clear();
  c.info(MetadataInfo{"rocprof.counters.status", g_status});
  c.info(MetadataInfo{"rocprof.counters.launches_profiled", std::to_string(g_launches)});
  c.info(MetadataInfo{"rocprof.counters.values", std::to_string(g_values)});
  c.info(MetadataInfo{"rocprof.counters.ranges_dropped", std::to_string(g_ranges_dropped)});
  c.info(
      MetadataInfo{"rocprof.counters.launches_not_selected", std::to_string(g_unselected.load())});
  if (g_incomplete != 0)
    c.info(MetadataInfo{"rocprof.counters.incomplete_replays", std::to_string(g_incomplete)});
  if (g_ranges_dropped != 0) c.drops("counter_ranges", g_ranges_dropped);
  g_ctx.store(nullptr, std::memory_order_release);
}

uint64_t replayed_kernel_records() noexcept { return g_replayed.load(); }

void fork_child() noexcept {
  // The parent's lock and range profilers mean nothing in the child: forget them unseen.
  g_active.store(false);
  g_dedupe.store(false);
  g_ctx.store(nullptr);
  g_a = nullptr;  // g_mu may be held by a parent thread that does not exist here: never taken
  t_holding = false;
}

bool first_kernel_record(uint32_t correlation_id) noexcept {
  if (!g_dedupe.load(std::memory_order_relaxed) || correlation_id == 0) return true;
  const uint32_t before =
      g_seen[correlation_id & (kSeenSlots - 1)].exchange(correlation_id, std::memory_order_relaxed);
  if (before != correlation_id) return true;
  g_replayed.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void begin_dedupe() noexcept {
  for (auto& slot : g_seen) slot.store(0, std::memory_order_relaxed);
  for (auto& t : g_times) t.corr.store(0, std::memory_order_relaxed);
  g_replayed.store(0);
  g_dedupe.store(true);
}

void end_dedupe() noexcept { g_dedupe.store(false); }

bool replaying() noexcept { return g_dedupe.load(std::memory_order_relaxed); }

void remember_kernel_time(uint32_t correlation_id, uint64_t start, uint64_t end) noexcept {
  if (correlation_id == 0) return;
  KernelTime& t = g_times[correlation_id & (kSeenSlots - 1)];
  t.corr.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  t.start.store(start, std::memory_order_relaxed);
  t.end.store(end, std::memory_order_relaxed);
  t.corr.store(correlation_id, std::memory_order_release);
}

bool kernel_time(uint32_t correlation_id, uint64_t* start, uint64_t* end) noexcept {
  if (correlation_id == 0) return false;
  const KernelTime& t = g_times[correlation_id & (kSeenSlots - 1)];
  if (t.corr.load(std::memory_order_acquire) != correlation_id) return false;
  *start = t.start.load(std::memory_order_relaxed);
  *end = t.end.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return t.corr.load(std::memory_order_relaxed) == correlation_id && *end > *start;
}

}  // namespace rocprof::cupti::counters
