// NVIDIA GPU tracing through CUPTI: session lifecycle, `rocprof info` probe, and the API
// ENTER callback that runs on the application's launching thread.
//
// The Activity API does the recording (CONCURRENT_KERNEL, MEMCPY, MEMSET, MEMORY2, RUNTIME,
// DRIVER, SYNCHRONIZATION, DEVICE); cupti_records.cpp turns its buffers into records. The
// callback API is enabled only for launches, copies, sets, allocations and synchronisations:
// there, on the launching thread, we note the innermost ROCTx range, the Python frame chain
// (callsite.hpp; resolved when the GPU record is processed) and the pause state under the call's
// correlation id (g_launch), which the GPU record with the same correlation id picks up later. No
// locks, no allocation on that path.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <thread>

#include "callsite.hpp"
#include "capture/context.hpp"
#include "capture/launch_site_stats.hpp"
#include "capture/markers/markers.hpp"
#include "capture/settings.hpp"
#include "counters.hpp"
#include "cupti_state.hpp"
#include "graphs.hpp"
#include "pc_sampling.hpp"
#include "pm_sampling.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::cupti {

LaunchInfo g_launch[kLaunchSlots];
Settings g_settings;
kernel_names::Naming g_names;
const Api* g_api = nullptr;
std::atomic<CaptureContext*> g_ctx{nullptr};

namespace {

std::atomic<const CallsiteHooks*> g_hooks{nullptr};
std::atomic<const CallsiteHooks*> g_session_hooks{nullptr};  // the hooks started with this session
CUpti_SubscriberHandle g_subscriber = nullptr;
bool g_active = false;        // this process subscribed and enabled activity kinds
bool g_forked_child = false;  // CUDA cannot be used in a fork child of a CUDA parent
std::vector<CUpti_ActivityKind> g_enabled;

// Pause intervals [start, end) in CLOCK_BOOTTIME ns, written by the poller thread only and
// read by the buffer thread; a fixed array so the reader never sees a reallocation.
constexpr int kMaxPauses = 1024;
std::atomic<uint64_t> g_pause_start[kMaxPauses];
std::atomic<uint64_t> g_pause_end[kMaxPauses];
std::atomic<int> g_pause_count{0};

std::thread* g_poller = nullptr;
std::mutex g_poll_mu;
std::condition_variable g_poll_cv;
bool g_poll_stop = false;

thread_local uint32_t t_tid = 0;
thread_local int t_runtime_depth = 0;  // inside a runtime API call on this thread
thread_local uint32_t t_outer_region = 0, t_outer_callsite = 0;
thread_local uint32_t t_outer_corr = 0;  // the runtime call's id: its kernels carry it
thread_local uint64_t t_outer_key = 0, t_outer_range = 0;

inline uint32_t os_tid() noexcept {
  if (t_tid == 0) t_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_tid;
}

void warn(const char* what, CUptiResult r) {
  std::fprintf(stderr, "rocprof: CUPTI %s failed: %s\n", what, result_string(*g_api, r));
}

// A graph node created (on the capturing thread, inside the captured call: its Python frames
// and ROCTx range are the node's) or cloned into an executable graph (the clone's are its
// original's). Kernel records of replays carry the executable graph's node ids.
void graph_node(CUpti_CallbackId cbid, const CUpti_ResourceData* rd) {
  const auto* g = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
  if (g == nullptr || g->node == nullptr) return;
  uint64_t id = 0;
  if (g_api->cuptiGetGraphNodeId(g->node, &id) != CUPTI_SUCCESS) return;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    uint64_t original = 0;
    if (g->originalNode != nullptr &&
        g_api->cuptiGetGraphNodeId(g->originalNode, &original) == CUPTI_SUCCESS)
      graphs::node_cloned(original, id);
    return;
  }
  graphs::NodeSite site;
  if (g_settings.region) site.region = markers::current_range(&site.range_corr);
  if (const CallsiteHooks* h = g_session_hooks.load(std::memory_order_acquire))
    site.key = h->capture(&site.callsite);
  graphs::node_created(id, site);
}

// The calling thread's current context (the driver's cuCtxGetCurrent, looked up in the libcuda
// the program loaded: this library links no CUDA), or null.
CUcontext current_context() noexcept {
  using Fn = CUresult (*)(CUcontext*);
  static const Fn fn = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    return lib != nullptr ? reinterpret_cast<Fn>(dlsym(lib, "cuCtxGetCurrent")) : nullptr;
  }();
  CUcontext ctx = nullptr;
  return fn != nullptr && fn(&ctx) == CUDA_SUCCESS ? ctx : nullptr;
}

// capture::stream_id for libraries that name streams by handle (PyTorch's caching allocator):
// CUPTI's id of the stream, the one its kernel and copy records carry. Stream 0, the legacy
// default stream, is one per context: CUPTI names it only given the context (measured on an
// H200: without one it answers CUPTI_ERROR_INVALID_STREAM), the calling thread's current one.
uint32_t stream_id_of(uint64_t handle) noexcept {
  const Api* a = g_api;
  if (a == nullptr) return 0;
  CUcontext ctx = handle == 0 ? current_context() : nullptr;
  if (handle == 0 && ctx == nullptr) return 0;
  uint32_t id = 0;
  if (a->cuptiGetStreamIdEx(ctx, reinterpret_cast<CUstream>(handle), 0, &id) != CUPTI_SUCCESS)
    return 0;
  return id;
}

// The callback API: ENTER of a selected runtime/driver function, on the calling thread (and
// EXIT, for the runtime-call depth and the counters' launches).
void CUPTIAPI api_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                           const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {  // counters, PC sampling and graph nodes
    const auto* res = static_cast<const CUpti_ResourceData*>(data);
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      if (counters::active()) counters::on_context_destroy(res->context);
      pc::on_context_destroy(res->context);
    } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      pc::on_context_created(res->context);
      pm::on_context_created(res->context);
    } else if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED && res->resourceDescriptor != nullptr) {
      const auto* m = static_cast<const CUpti_ModuleResourceData*>(res->resourceDescriptor);
      pc::on_module_loaded(res->context, m->pCubin, m->cubinSize);
    } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED ||
               cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
      graph_node(cbid, res);
    }
    return;
  }
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (!runtime && cb->callbackSite == CUPTI_API_ENTER) {
    pc::on_api_enter(cb->context);
    pm::on_api_enter(cb->context);
  }
  if (!runtime && counters::active() && counters::is_launch(cbid))
    counters::on_launch(cb, t_runtime_depth > 0 ? t_outer_corr : cb->correlationId);
  if (cb->callbackSite == CUPTI_API_EXIT) {
    if (runtime && t_runtime_depth > 0) --t_runtime_depth;
    return;
  }
  uint32_t region = 0, callsite = 0;
  uint64_t key = 0, range = 0;
  if (!runtime && t_runtime_depth > 0) {
    // A driver call made by the runtime call just seen: same launch, same attribution.
    region = t_outer_region;
    callsite = t_outer_callsite;
    key = t_outer_key;
    range = t_outer_range;
  } else {
    if (g_settings.region) region = markers::current_range(&range);
    if (const CallsiteHooks* h = g_session_hooks.load(std::memory_order_acquire))
      key = h->capture(&callsite);
    if (runtime) {
      ++t_runtime_depth;
      t_outer_corr = cb->correlationId;
      t_outer_region = region;
      t_outer_callsite = callsite;
      t_outer_key = key;
      t_outer_range = range;
    }
  }
  LaunchInfo& s = g_launch[cb->correlationId & (kLaunchSlots - 1)];
  s.corr.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.tid = os_tid();
  s.region_name_id = region;
  s.callsite_id = callsite;
  s.site_key = key;
  s.range_corr = range;
  CaptureContext* ctx = g_ctx.load(std::memory_order_acquire);
  s.paused = ctx != nullptr && ctx->paused() ? 1 : 0;
  s.corr.store(cb->correlationId, std::memory_order_release);
}

// Functions worth an ENTER callback: those that cause GPU work or wait for it. Picked by
// name so the list follows the CUPTI version in use.
bool wanted(const char* name, int level) {
  static const char* kGpuWork[] = {"Launch", "Memcpy", "Memset"};
  static const char* kWaits[] = {"Synchronize", "WaitEvent", "Malloc",
                                 "Free",        "MemAlloc",  "MemFree"};
  if (name == nullptr || level <= 0) return false;
  for (const char* k : kGpuWork)
    if (std::strstr(name, k) != nullptr) return true;
  if (level >= 2)
    for (const char* k : kWaits)
      if (std::strstr(name, k) != nullptr) return true;
  return false;
}

uint64_t CUPTIAPI boottime_ns() { return now_ns(); }

// Calls that only read or set state, made many times per kernel: by PyTorch (cudaGetDevice ~13
// per kernel of a transformer step), and inside the runtime and CUPTI themselves
// (cuDevicePrimaryCtxGetState ~4, cuKernelGetName ~1 per launch). torch.profiler drops the
// first group after CUPTI made them; CUPTI 12.6+ can leave them out at the source
// (cuptiActivityEnable{Runtime,Driver}Api), so they cost nothing. Matched by name (with or
// without a _vNNNN suffix) so that the list follows the CUPTI in use.
constexpr const char* kRuntimeQueries[] = {
    "cudaGetDevice",   "cudaSetDevice",    "cudaGetLastError",         "cudaPeekAtLastError",
    "cudaEventCreate", "cudaEventDestroy", "cudaEventCreateWithFlags", "cudaGetErrorString",
    "cudaGetErrorName"};
constexpr const char* kDriverQueries[] = {"cuDevicePrimaryCtxGetState",
                                          "cuKernelGetName",
                                          "cuKernelGetAttribute",
                                          "cuFuncGetAttribute",
                                          "cuFuncGetName",
                                          "cuCtxGetCurrent",
                                          "cuCtxSetCurrent",
                                          "cuCtxGetDevice",
                                          "cuCtxGetLimit",
                                          "cuGetErrorString",
                                          "cuGetErrorName",
                                          "cuDriverGetVersion",
                                          "cuDeviceGet",
                                          "cuDeviceGetCount",
                                          "cuDeviceGetAttribute",
                                          "cuGetProcAddress",
                                          "cuStreamGetCtx",
                                          "cuPointerGetAttribute"};

bool same_api(const char* name, const char* base) {
  const size_t n = std::strlen(base);
  return std::strncmp(name, base, n) == 0 &&
         (name[n] == '\0' || std::strncmp(name + n, "_v", 2) == 0);
}

// Sets the queries' activity records off (or back on: the switch outlives a session inside
// CUPTI) for the API kinds enabled; returns what the database's metadata says was left out.
std::string leave_out_queries() {
  const Api& a = *g_api;
  const uint8_t on = g_settings.runtime_queries ? 1 : 0;
  const struct {
    bool kind_on;
    CUpti_CallbackDomain domain;
    uint32_t size;
    CUptiResult(CUPTIAPI* enable)(CUpti_CallbackId, uint8_t);
    const char* const* names;
    size_t count;
  } sets[] = {{g_settings.activities.has(Activity::runtime_api), CUPTI_CB_DOMAIN_RUNTIME_API,
               CUPTI_RUNTIME_TRACE_CBID_SIZE, a.activity_enable_runtime_api, kRuntimeQueries,
               std::size(kRuntimeQueries)},
              {g_settings.activities.has(Activity::driver_api), CUPTI_CB_DOMAIN_DRIVER_API,
               CUPTI_DRIVER_TRACE_CBID_SIZE, a.activity_enable_driver_api, kDriverQueries,
               std::size(kDriverQueries)}};
  std::string out;
  bool missing = false;
  for (const auto& set : sets) {
    if (!set.kind_on) continue;
    if (set.enable == nullptr) {
      missing = true;
      continue;
    }
    for (uint32_t id = 1; id < set.size; ++id) {
      const char* name = nullptr;
      if (a.cuptiGetCallbackName(set.domain, id, &name) != CUPTI_SUCCESS || name == nullptr)
        continue;
      for (size_t k = 0; k < set.count; ++k)
        if (same_api(name, set.names[k]) && set.enable(id, on) == CUPTI_SUCCESS && !on)
          out += (out.empty() ? "" : ",") + std::string(name);
    }
  }
  if (on) return "none (--runtime-trace-all)";
  if (out.empty())
    return missing ? "none (this CUPTI cannot leave single API functions out)" : "none";
  return out;
}

void poll_loop() {
  // Pause/resume are plain stores in the ROCTx path; the poller turns them into intervals at
  // 1 ms resolution for records that have no ENTER callback (API records).
  // It also delivers buffers every flush_ms: CUPTI's own periodic flush returns only *full*
  // buffers (cupti_activity.h), so a partly filled 4 MB buffer could wait seconds, while each
  // record's launch information lives in a slot that newer launches reuse (kLaunchSlots
  // correlation ids later: ~0.7 s of a --sys-trace PyTorch step, where every API call takes an
  // id). A default flush (flag 0) returns every buffer whose records are complete.
  bool was_paused = false;
  bool interval_open = false;  // only a pause that got a slot is closed by its resume
  auto next_flush = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lk(g_poll_mu);
  while (!g_poll_stop) {
    g_poll_cv.wait_for(lk, std::chrono::milliseconds(2));
    if (g_settings.flush_ms > 0 && std::chrono::steady_clock::now() >= next_flush) {
      next_flush =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(g_settings.flush_ms);
      lk.unlock();  // buffer_completed runs on this thread, inside the flush
      g_api->cuptiActivityFlushAll(0);
      lk.lock();
      if (g_poll_stop) break;
    }
    CaptureContext* ctx = g_ctx.load(std::memory_order_acquire);
    const bool p = ctx != nullptr && ctx->paused();
    const int n = g_pause_count.load(std::memory_order_relaxed);
    if (p && !was_paused) {
      interval_open = n < kMaxPauses;
      if (interval_open) {
        g_pause_start[n].store(now_ns(), std::memory_order_relaxed);
        g_pause_end[n].store(UINT64_MAX, std::memory_order_relaxed);
        g_pause_count.store(n + 1, std::memory_order_release);
      } else if (ctx != nullptr) {
        ctx->drops("cupti_pause_intervals", 1);  // API records of this pause are kept
      }
    } else if (!p && was_paused && interval_open) {
      g_pause_end[n - 1].store(now_ns(), std::memory_order_release);
      interval_open = false;
    }
    was_paused = p;
  }
}

// The one place the activity vocabulary becomes CUPTI's activity kinds (CuptiSettings::kSupported
// lists the same activities).
constexpr struct {
  Activity activity;
  CUpti_ActivityKind kind;
} kActivityKinds[] = {
    {Activity::kernels, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},  // never KIND_KERNEL
    {Activity::copies, CUPTI_ACTIVITY_KIND_MEMCPY},
    {Activity::sets, CUPTI_ACTIVITY_KIND_MEMSET},
    {Activity::allocations, CUPTI_ACTIVITY_KIND_MEMORY2},
    {Activity::runtime_api, CUPTI_ACTIVITY_KIND_RUNTIME},
    {Activity::driver_api, CUPTI_ACTIVITY_KIND_DRIVER},
    {Activity::sync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
};

// The backend's own compiled form of its typed settings (the kernel filter compiled once).
bool compile_settings(const CuptiSettings& in, const KernelNameSettings& names, std::string* why) {
  Settings s;
  s.activities = in.activities;
  s.callsite = in.launch_sites;
  s.region = in.region;
  // Synchronisation and allocation records get their thread from an ENTER callback.
  const std::string cb =
      !in.callbacks.empty()                                                           ? in.callbacks
      : (s.activities.has(Activity::sync) || s.activities.has(Activity::allocations)) ? "all"
                                                                                      : "launch";
  s.callbacks = cb == "none" ? 0 : cb == "launch" ? 1 : 2;
  s.timestamp = in.timestamp;
  s.process = in.process;
  s.runtime_queries = in.runtime_queries;
  s.graph_spans = in.graph_trace == "graph";
  if (!g_names.configure(names, why)) return false;
  s.flush_ms = in.flush_ms;
  s.buffer_bytes = static_cast<size_t>(in.buffer_mb) << 20;
  g_settings = s;
  return true;
}

void note(CaptureContext& c, const std::string& status) {
  c.info(MetadataInfo{"rocprof.cupti.status", status});
}

// A sampler asked for beside hardware counters (--pmc/--sol) is off: true, said in one line and
// in its status metadata.
bool off_for_counters(CaptureContext& c, bool counters, const char* what, const char* status_tag) {
  if (!counters) return false;
  std::fprintf(stderr,
               "rocprof: %s off: it cannot run with hardware counters (--pmc/--sol) in one run; "
               "profile twice\n",
               what);
  c.info(MetadataInfo{status_tag, "off: cannot run with --pmc/--sol"});
  return true;
}

void on_start(CaptureContext& c, const CuptiSettings& asked, const KernelNameSettings& names,
              const CounterSettings& counting, const PcSamplingSettings& pc_asked,
              const GpuMetricsSettings& pm_asked) {
  if (g_forked_child) return;
  // The one variable for measurement experiments (benchmarks/gpu_b2_b5.py), read into the
  // same settings: ROCPROF_CUPTI_OPTIONS="kernels=1,runtime_api=0,callbacks=none,flush_ms=1000".
  CaptureSettings settings;
  settings.cupti = asked;
  settings.kernel_names = names;
  std::string why;
  const char* env = std::getenv("ROCPROF_CUPTI_OPTIONS");
  if (env != nullptr && asked.enabled &&
      (!capture::parse_text(env, ',', "cupti.", &settings, &why) ||
       !capture::validate(settings, &why))) {
    std::fprintf(stderr, "rocprof: ROCPROF_CUPTI_OPTIONS: %s; GPU tracing off\n", why.c_str());
    return note(c, "off: " + why);
  }
  if (!settings.cupti.enabled) return;
  if (!compile_settings(settings.cupti, settings.kernel_names, &why)) {
    std::fprintf(stderr, "rocprof: %s; GPU tracing off\n", why.c_str());
    return note(c, "off: " + why);
  }
  const bool want_counters = !counting.metrics.empty();
  // CUPTI's PC sampling and its range profiler cannot share a context (both program the SMs'
  // performance monitors), and PM sampling reads the monitors the range profiler replays:
  // counters win, the sampler says why it is off.
  const bool want_pc = pc_asked.enabled && !off_for_counters(c, want_counters, "PC sampling",
                                                             "rocprof.pc_sampling.status");
  const bool want_pm = pm_asked.hz > 0 && !off_for_counters(c, want_counters, "--gpu-metrics",
                                                            "rocprof.gpu_metrics.status");
  // Both see contexts at launch.
  if ((want_pc || want_pm) && g_settings.callbacks == 0) g_settings.callbacks = 1;
  // A kernel's correlation id is its runtime call's when there is one: counter values need the
  // launch callbacks (the launcher asks for the kernel records with them: option_table.py).
  if (want_counters && g_settings.callbacks == 0) g_settings.callbacks = 1;
  g_api = load(settings.cupti.library_candidates, &why);
  if (g_api == nullptr) {
    std::fprintf(stderr, "rocprof: %s; GPU tracing off, CPU-side profiling continues\n",
                 why.c_str());
    return note(c, "off: " + why);
  }
  const Api& a = *g_api;
  CUptiResult r = a.cuptiSubscribe(&g_subscriber, api_callback, nullptr);
  if (r != CUPTI_SUCCESS) {
    g_subscriber = nullptr;
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      std::fprintf(stderr,
                   "rocprof: CUPTI is held by another tool (torch.profiler/Kineto, nsys or "
                   "ncu): GPU tracing off for this run, CPU-side profiling continues\n");
      return note(c, "off: CUPTI held by another tool");
    }
    warn("subscribe", r);
    return note(c, std::string("off: cuptiSubscribe: ") + result_string(a, r));
  }
  records_reset(&c);
  g_ctx.store(&c, std::memory_order_release);
  // The clock first: records stamped before it would be in CLOCK_REALTIME.
  if (g_settings.timestamp &&
      (r = a.cuptiActivityRegisterTimestampCallback(boottime_ns)) != CUPTI_SUCCESS)
    warn("timestamp callback", r);
  if ((r = a.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
    warn("buffer callbacks", r);
    a.cuptiUnsubscribe(g_subscriber);
    g_subscriber = nullptr;
    return note(c, "off: cuptiActivityRegisterCallbacks failed");
  }
  // Python launch sites: the resolver starts before the first ENTER callback is enabled.
  if (const CallsiteHooks* h =
          g_settings.callsite ? g_hooks.load(std::memory_order_acquire) : nullptr) {
    h->start(&c);
    g_session_hooks.store(h, std::memory_order_release);
  }
  const Settings& s = g_settings;
  g_enabled.clear();
  g_enabled.push_back(CUPTI_ACTIVITY_KIND_DEVICE);
  for (const auto& [activity, kind] : kActivityKinds)
    if (s.activities.has(activity)) g_enabled.push_back(kind);
  // One span per graph replay; CUPTI then leaves out the kernel records of graph launches.
  if (s.activities.has(Activity::kernels) && s.graph_spans)
    g_enabled.push_back(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  std::string kinds;
  for (CUpti_ActivityKind k : g_enabled)
    if ((r = a.cuptiActivityEnable(k)) != CUPTI_SUCCESS) warn("activity enable", r);
  if (s.activities.has(Activity::runtime_api) || s.activities.has(Activity::driver_api))
    c.info(MetadataInfo{"rocprof.cupti.api_left_out", leave_out_queries()});
  // ENTER callbacks only where GPU work starts or is waited for.
  const struct {
    CUpti_CallbackDomain d;
    uint32_t n;
  } domains[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
                 {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
  int callbacks = 0;
  for (const auto& d : domains)
    for (uint32_t id = 1; id < d.n; ++id) {
      const char* name = nullptr;
      if (a.cuptiGetCallbackName(d.d, id, &name) == CUPTI_SUCCESS && wanted(name, s.callbacks) &&
          a.cuptiEnableCallback(1, g_subscriber, d.d, id) == CUPTI_SUCCESS)
        ++callbacks;
    }
  graphs::reset();  // node ids of the last session name sites of its string table
  if (s.activities.has(Activity::kernels) && !s.graph_spans && (s.callsite || s.region))
    for (CUpti_CallbackId id :
         {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED})
      if ((r = a.cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, id)) !=
          CUPTI_SUCCESS)
        warn("graph node callback", r);
  if (s.flush_ms > 0 && (r = a.cuptiActivityFlushPeriod(s.flush_ms)) != CUPTI_SUCCESS)
    warn("flush period", r);
  if (want_counters) {
    if (!counters::start(c, counting, a, &why)) {
      std::fprintf(stderr, "rocprof: hardware counters off: %s; tracing continues\n", why.c_str());
      c.info(MetadataInfo{"rocprof.counters.status", "off: " + why});
    } else if ((r = a.cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                          CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)) !=
               CUPTI_SUCCESS) {
      warn("context-destroy callback (counters)", r);
    }
  }
  if (want_pc) {
    if (!pc::start(c, pc_asked, a, &why)) {
      std::fprintf(stderr, "rocprof: PC sampling off: %s; tracing continues\n", why.c_str());
      c.info(MetadataInfo{"rocprof.pc_sampling.status", "off: " + why});
    } else {
      for (CUpti_CallbackId id :
           {CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
            CUPTI_CBID_RESOURCE_MODULE_LOADED})
        if ((r = a.cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, id)) !=
            CUPTI_SUCCESS)
          warn("resource callback (PC sampling)", r);
    }
  }
  if (want_pm) {
    if (!pm::start(c, pm_asked, a, &why)) {
      std::fprintf(stderr, "rocprof: --gpu-metrics off: %s; tracing continues\n", why.c_str());
      c.info(MetadataInfo{"rocprof.gpu_metrics.status", "off: " + why});
    } else if ((r = a.cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                          CUPTI_CBID_RESOURCE_CONTEXT_CREATED)) != CUPTI_SUCCESS) {
      warn("context-created callback (GPU metrics)", r);
    }
  }
  g_pause_count.store(0);
  g_poll_stop = false;
  g_poller = new std::thread(poll_loop);
  g_active = true;
  capture::set_stream_id_fn(&stream_id_of);
  uint32_t version = 0;
  a.cuptiGetVersion(&version);
  note(c, "on");
  c.info(MetadataInfo{"rocprof.cupti.library", a.path});
  c.info(MetadataInfo{"rocprof.cupti.api_version", std::to_string(version)});
  c.info(MetadataInfo{"rocprof.cupti.enter_callbacks", std::to_string(callbacks)});
  c.info(MetadataInfo{"rocprof.cupti.activity_kinds", std::to_string(g_enabled.size())});
}

void on_stop(CaptureContext& c) {
  if (!g_active) return;
  const Api& a = *g_api;
  const bool counting = counters::active();
  // No range profiler or PC sampler may outlive the subscription that drives it.
  counters::stop(c);
  pc::stop(c);
  pm::stop(c);
  // Launch sites still queued are resolved before the flush below reads their ids.
  const CallsiteHooks* hooks = g_session_hooks.load(std::memory_order_acquire);
  if (hooks != nullptr) hooks->stop();
  // Everything the GPU finished is delivered now, while the collector still drains.
  CUptiResult r = a.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) warn("flush", r);
  for (CUpti_ActivityKind k : g_enabled) a.cuptiActivityDisable(k);
  a.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  a.cuptiActivityFlushPeriod(0);
  capture::set_stream_id_fn(nullptr);
  if (g_subscriber != nullptr) a.cuptiUnsubscribe(g_subscriber);
  g_subscriber = nullptr;
  // Last: disabling PM sampling may finalise CUPTI state the flushes above still need.
  pm::disable_all();
  {
    std::lock_guard<std::mutex> g(g_poll_mu);
    g_poll_stop = true;
  }
  g_poll_cv.notify_all();
  if (g_poller) g_poller->join();
  delete g_poller;
  g_poller = nullptr;
  if (g_settings.callbacks > 0) {
    const uint64_t lost = records_unattributed();
    c.info(MetadataInfo{"rocprof.cupti.unattributed_records", std::to_string(lost)});
    if (lost > 0)
      std::fprintf(stderr,
                   "rocprof: %llu GPU records came after their launch information was reused: "
                   "kept, without thread, ROCTx range or Python line "
                   "(metadata rocprof.cupti.unattributed_records)\n",
                   static_cast<unsigned long long>(lost));
  }
  graphs::report(c, counting);
  if (const uint64_t n = counters::replayed_kernel_records())
    c.info(MetadataInfo{"rocprof.counters.replayed_kernel_records", std::to_string(n)});
  counters::end_dedupe();
  records_reset(nullptr);
  // Every buffer came back with the forced flushes above and no kind is enabled: the pooled
  // ones are memory this process no longer needs (a later session allocates afresh).
  records_free_pool();
  if (hooks != nullptr && hooks->stats != nullptr) {
    uint64_t v[kLaunchSiteStats] = {};
    hooks->stats(v);
    c.info(MetadataInfo{"rocprof.cupti.launch_sites", launch_site_stats_entry("cupti", v)});
  }
  g_session_hooks.store(nullptr, std::memory_order_release);
  g_ctx.store(nullptr, std::memory_order_release);
  g_active = false;
}

void on_fork_child() {
  // The child inherits CUPTI's memory but no working driver: never call CUPTI here.
  g_forked_child = true;
  g_active = false;
  capture::set_stream_id_fn(nullptr);
  counters::fork_child();
  pc::fork_child();
  pm::fork_child();
  g_poller = nullptr;  // the parent's thread does not exist in the child
}

void probe(bool* live, std::string* reason) {
  int gpus = 0;
  std::string why;
  if (!driver_present(&gpus, &why)) {
    *live = false;
    *reason = why;
    return;
  }
  const Api* a = load("", &why);  // the launcher's candidates arrive in ROCPROF_CUPTI_LIBRARY_PATH
  if (a == nullptr) {
    *live = false;
    *reason = why;
    return;
  }
  *live = true;
  *reason = std::to_string(gpus) + " NVIDIA GPU(s); " + a->path;
}

class CuptiBackend final : public Backend {
 public:
  const char* name() const override { return "cupti"; }
  bool start(CaptureContext& ctx, const CaptureSettings& s, std::string*) override {
    // Says itself, in one line and in metadata, why it is off.
    on_start(ctx, s.cupti, s.kernel_names, s.counters, s.pc_sampling, s.gpu_metrics);
    return true;
  }
  void stop(CaptureContext& ctx) override { on_stop(ctx); }
  void fork_child() override { on_fork_child(); }
  void probe(bool* live, std::string* reason) override { cupti::probe(live, reason); }
};

const capture::Registered<CuptiBackend> g_registered;  // lives as long as the process

}  // namespace

bool paused_at(uint64_t ts) noexcept {
  const int n = g_pause_count.load(std::memory_order_acquire);
  for (int i = n - 1; i >= 0; --i) {
    if (ts >= g_pause_start[i].load(std::memory_order_relaxed) &&
        ts < g_pause_end[i].load(std::memory_order_acquire))
      return true;
  }
  return false;
}

void set_callsite_hooks(const CallsiteHooks* hooks) noexcept {
  g_hooks.store(hooks, std::memory_order_release);
}

uint32_t resolve_site(uint64_t key) {
  const CallsiteHooks* h = g_session_hooks.load(std::memory_order_acquire);
  return h != nullptr && key != 0 ? h->resolve(key) : 0;
}

}  // namespace rocprof::cupti
