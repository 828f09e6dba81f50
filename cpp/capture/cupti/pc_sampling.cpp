// PC sampling through CUPTI: the sampled contexts, the collector thread, the exit hook, source
// lines from the cubins (pc_sampling.hpp says how and why; pc_contexts.cpp is the per-context
// CUPTI protocol). Every CUPTI call's status is checked; a failure turns PC sampling off for
// that context with one line on stderr and in the metadata, and the program and its tracing
// run on.
#include "pc_sampling.hpp"

#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capture/context.hpp"
#include "capture/settings.hpp"
#include "rocprof/clock.hpp"
#include "pc_contexts.hpp"
#include "rocprof/info.hpp"

namespace rocprof::cupti::pc {
namespace {

// One sampled context: the CUPTI protocol's state and the names of its stall reasons.
struct Sampled {
  ContextState st;
  StallNames stalls;
  bool said = false;               // its failure was said on stderr and in the metadata
  bool hooked_after_data = false;  // exit_hook registered again after its first samples
};

PcApi g_pc;
const Api* g_a = nullptr;
std::atomic<bool> g_active{false};
std::atomic<CaptureContext*> g_ctx{nullptr};
PcSamplingSettings g_asked;
uint32_t g_category = 0;
std::string g_status = "on";
std::string g_periods;  // "GPU<n>=2^<e>" per device

// Guards everything below; the collector thread holds it while fetching.
std::mutex g_mu;
std::vector<std::unique_ptr<Sampled>> g_contexts;
// Contexts whose Disable failed: CUPTI may still write into their buffers (at the context's
// teardown), so their memory stays for the life of the process. Leaked on purpose.
auto* g_kept = new std::vector<std::unique_ptr<Sampled>>();
std::set<CUcontext> g_seen;                                // contexts enabled or given up on
std::unordered_map<uint64_t, std::vector<char>> g_cubins;  // CRC -> the module's cubin
std::unordered_map<std::string, SourceLine> g_lines;       // "crc:function:pc" -> line
Totals g_totals;
uint64_t g_collector_ns = 0;  // CPU time of the collector thread
uint64_t g_lines_missing_cubin = 0;
bool g_exiting = false;  // the exit hook ran: no context is enabled any more

std::thread* g_thread = nullptr;
std::condition_variable g_cv;
bool g_stop = false;

thread_local CUcontext t_last = nullptr;

std::string err(CUptiResult r) {
  if (g_a != nullptr) return result_string(*g_a, r);
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

// Under g_mu: one line on stderr and the status, once per context.
void report(Sampled& s, const Failure& f) {
  if (s.said || f.call == nullptr) return;
  s.said = true;
  std::string why = std::string(f.call) + ": " + err(f.result);
  if (f.result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    why +=
        " (GPU profiling is restricted to administrators on this host: run as root, or load "
        "the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0)";
  if (cupti_holds(s.st))
    why += " (PC sampling could not be disabled: its buffers are kept for CUPTI)";
  std::fprintf(stderr, "rocprof: PC sampling off for GPU %u: %s\n", s.st.device, why.c_str());
  g_status = "off for GPU " + std::to_string(s.st.device) + ": " + why;
}

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Under g_mu. The source line of a PC, from its module's cubin (cached per PC).
SourceLine lookup(CaptureContext& c, uint64_t crc, const char* function, uint64_t pc) {
  if (function == nullptr) return {};
  std::string key = std::to_string(crc) + ":" + function + ":" + std::to_string(pc);
  const auto hit = g_lines.find(key);
  if (hit != g_lines.end()) return hit->second;
  SourceLine out;
  const auto cubin = g_cubins.find(crc);
  if (cubin == g_cubins.end()) {
    ++g_lines_missing_cubin;  // a module loaded before the session started
  } else if (g_pc.cuptiGetSassToSourceCorrelation != nullptr) {
    auto p =
        params<CUpti_GetSassToSourceCorrelationParams>(CUpti_GetSassToSourceCorrelationParamsSize);
    p.cubin = cubin->second.data();
    p.cubinSize = cubin->second.size();
    p.functionName = function;
    p.pcOffset = pc;
    // The names are the caller's to free after a success only (NVIDIA's samples do the same):
    // after a failure the fields are not promised to hold anything of ours.
    if (g_pc.cuptiGetSassToSourceCorrelation(&p) == CUPTI_SUCCESS) {
      std::string path;
      if (p.dirName != nullptr && p.dirName[0] != '\0' && p.fileName != nullptr &&
          p.fileName[0] != '/')
        path = std::string(p.dirName) + "/";
      if (p.fileName != nullptr) path += p.fileName;
      if (!path.empty() && p.lineNumber != 0) out = SourceLine{c.intern(path), p.lineNumber};
      std::free(p.fileName);
      std::free(p.dirName);
    }
  }
  g_lines.emplace(std::move(key), out);
  return out;
}

void exit_hook();

// Under g_mu: what to do with each buffer CUPTI fills for `s`. CUPTI's function-name strings
// are left alone: the header says they may be shared with its other records of the same
// function, so freeing one could pull a name from under CUPTI itself (a few bytes per kernel
// stay allocated instead).
Sink sink_for(CaptureContext& c, Sampled& s) {
  return [&c, &s](const CUpti_PCSamplingData& d) {
    const uint64_t now = now_ns();
    const SourceLookup source = [&c](uint64_t crc, const char* fn, uint64_t pc) {
      return lookup(c, crc, fn, pc);
    };
    emit_buffer(c, d, s.stalls, source, s.st.agent, g_category, s.st.window_start, now, &g_totals);
    s.st.window_start = now;
    // CUPTI may set up its decoding when the first samples arrive: once more, after that.
    if (!s.hooked_after_data && d.totalNumPcs > 0) {
      s.hooked_after_data = true;
      std::atexit(exit_hook);
    }
    if (d.hardwareBufferFull && g_totals.buffer_full == 1)
      std::fprintf(stderr,
                   "rocprof: PC sampling: the GPU's sample buffer filled up, samples were lost "
                   "(raise --pc-sampling-interval); counted in rocprof.pc_sampling.dropped\n");
  };
}

// Under g_mu: the last fetch and Disable of one context.
void disable_one(CaptureContext& c, Sampled& s) {
  Failure f;
  if (!disable(g_pc, s.st, sink_for(c, s), &f)) report(s, f);
}

void collector() {
  const uint64_t cpu0 = thread_cpu_ns();
  std::unique_lock<std::mutex> lk(g_mu);
  while (!g_stop) {
    g_cv.wait_for(lk, std::chrono::milliseconds(g_asked.poll_ms));
    if (g_stop) break;
    if (CaptureContext* c = g_ctx.load(std::memory_order_acquire))
      for (auto& s : g_contexts) {
        Failure f;
        if (!fetch(g_pc, s->st, sink_for(*c, *s), &f)) report(*s, f);
      }
  }
  g_collector_ns += thread_cpu_ns() - cpu0;
}

// Ends the collector thread (idempotent). Not under g_mu.
void stop_collector() {
  std::thread* t = nullptr;
  {
    std::lock_guard<std::mutex> g(g_mu);
    g_stop = true;
    t = g_thread;
    g_thread = nullptr;
  }
  g_cv.notify_all();
  if (t != nullptr) {
    t->join();
    delete t;
  }
}

// At process exit, before every exit handler registered before it. CUPTI and the CUDA driver
// set up PC sampling's machinery when a context is enabled, and what they register for their
// own teardown then runs before a session exit handler registered earlier (exit handlers run
// last-in first-out): the collector thread would go on calling GetData, and the session's stop
// would call GetData and Disable, on state already torn down. This hook is registered after
// each context's Enable, so it runs before those: the collector ends and every context is
// fetched and disabled while CUPTI is whole; the session's own stop later writes the metadata.
// A no-op when the session stopped first (a Python process stops it before exit).
void exit_hook() {
  if (!g_active.load(std::memory_order_acquire)) return;
  stop_collector();
  std::lock_guard<std::mutex> g(g_mu);
  g_exiting = true;
  if (CaptureContext* c = g_ctx.load(std::memory_order_acquire))
    for (auto& s : g_contexts) disable_one(*c, *s);
}

// Under g_mu, on the thread that created or first used the context.
void start_context(CUcontext ctx) {
  if (g_exiting || !g_seen.insert(ctx).second) return;
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) return;
  auto s = std::make_unique<Sampled>();
  ContextState& st = s->st;
  st.ctx = ctx;
  CUptiResult r = g_pc.cuptiGetDeviceId(ctx, &st.device);
  if (r != CUPTI_SUCCESS) return report(*s, Failure{"GetDeviceId", r});
  st.agent = gpu_agent_id(st.device);
  int clock_khz = 0;
  if (g_pc.cuDeviceGetAttribute != nullptr)
    g_pc.cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
                              static_cast<CUdevice>(st.device));
  uint32_t exponent = 0;
  std::string why;
  if (!period_exponent(g_asked.unit, g_asked.interval, static_cast<uint32_t>(clock_khz), &exponent,
                       &why)) {
    std::fprintf(stderr, "rocprof: PC sampling off: %s\n", why.c_str());
    g_status = "off: " + why;
    return;
  }
  Failure f;
  const bool on = enable(g_pc, ctx, exponent, st, &f);
  // Registered after the Enable, whatever came of it (exit_hook says why).
  std::atexit(exit_hook);
  if (!on) {
    report(*s, f);
    // Kept where stop() finds it: a context still enabled is disabled there, or kept for CUPTI.
    g_contexts.push_back(std::move(s));
    return;
  }
  for (const auto& [index, name] : st.reasons) {
    bool not_issued = false;
    const std::string short_name = short_stall_name(name, &not_issued);
    s->stalls.by_index[index] = {c->intern(short_name), not_issued};
  }
  // What the hardware actually does (CUPTI's default when none was asked for).
  CUpti_PCSamplingConfigurationInfo q;
  std::memset(&q, 0, sizeof q);
  q.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  auto gp =
      params<CUpti_PCSamplingConfigurationInfoParams>(CUpti_PCSamplingConfigurationInfoParamsSize);
  gp.ctx = ctx;
  gp.numAttributes = 1;
  gp.pPCSamplingConfigurationInfo = &q;
  if (g_pc.cuptiPCSamplingGetConfigurationAttribute(&gp) == CUPTI_SUCCESS)
    exponent = q.attributeData.samplingPeriodData.samplingPeriod;
  std::string period = "GPU" + std::to_string(st.device) + "=2^" + std::to_string(exponent);
  if (clock_khz > 0 && exponent > 0)
    period += " cycles (" + std::to_string(static_cast<uint64_t>(clock_khz) * 1000ull >> exponent) +
              " samples/s per SM at " + std::to_string(clock_khz / 1000) + " MHz)";
  else
    period += " cycles";
  g_periods += (g_periods.empty() ? "" : "; ") + period;
  st.window_start = now_ns();
  g_contexts.push_back(std::move(s));
}

template <class F>
bool resolve(void* h, F* fn, const char* name) {
  *fn = reinterpret_cast<F>(dlsym(h, name));
  return *fn != nullptr;
}

}  // namespace

bool start(CaptureContext& c, const PcSamplingSettings& s, const Api& a, std::string* why) {
  if (!s.enabled) return false;
  uint32_t e = 0;
  if (!period_exponent(s.unit, s.interval, 1, &e, why)) return false;  // the unit, early
  void* h = dlopen(a.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr) h = dlopen(a.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  PcApi api;
  const char* missing = nullptr;
#define ROCPROF_PC_FN(name) \
  if (missing == nullptr && !resolve(h, &api.name, #name)) missing = #name;
  ROCPROF_PC_FUNCTIONS(ROCPROF_PC_FN)
#undef ROCPROF_PC_FN
  if (missing != nullptr) {
    *why = a.path + " lacks " + missing + " (CUPTI's PC sampling API needs CUDA 11.3+)";
    return false;
  }
  if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD))
    resolve(cuda, &api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  const char* trace = std::getenv("ROCPROF_PC_SAMPLING_TRACE");
  api.trace = trace != nullptr && *trace != '\0' && *trace != '0';
  g_a = &a;
  return start_with(c, s, api, why);
}

bool start_with(CaptureContext& c, const PcSamplingSettings& s, const PcApi& api,
                std::string* why) {
  uint32_t e = 0;
  if (!s.enabled || !period_exponent(s.unit, s.interval, 1, &e, why)) return false;
  if (g_active.load()) {
    *why = "PC sampling is already running in this process";
    return false;
  }
  std::lock_guard<std::mutex> g(g_mu);
  g_pc = api;
  g_asked = s;
  g_category = c.intern("PC_SAMPLING");
  g_status = "on";
  g_periods.clear();
  g_contexts.clear();  // the last session's: each was disabled, or moved to g_kept
  g_seen.clear();
  g_lines.clear();
  g_totals = Totals{};
  g_collector_ns = 0;
  g_lines_missing_cubin = 0;
  g_exiting = false;
  g_ctx.store(&c, std::memory_order_release);
  g_stop = false;
  g_thread = new std::thread(collector);
  g_active.store(true, std::memory_order_release);
  return true;
}

bool active() noexcept { return g_active.load(std::memory_order_relaxed); }

void on_context_created(CUcontext ctx) noexcept {
  if (!active()) return;
  std::lock_guard<std::mutex> g(g_mu);
  if (g_pc.cuDeviceGetAttribute == nullptr)  // libcuda is loaded by now
    if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD))
      resolve(cuda, &g_pc.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  start_context(ctx);
}

void on_api_enter(CUcontext ctx) noexcept {
  if (ctx == nullptr || ctx == t_last || !active()) return;
  t_last = ctx;
  on_context_created(ctx);
}

void on_module_loaded(CUcontext, const void* cubin, size_t size) noexcept {
  if (!active() || cubin == nullptr || size == 0) return;
  auto p = params<CUpti_GetCubinCrcParams>(CUpti_GetCubinCrcParamsSize);
  p.cubin = cubin;
  p.cubinSize = size;
  if (g_pc.cuptiGetCubinCrc(&p) != CUPTI_SUCCESS) return;
  std::lock_guard<std::mutex> g(g_mu);
  auto& keep = g_cubins[p.cubinCrc];
  if (keep.empty())
    keep.assign(static_cast<const char*>(cubin), static_cast<const char*>(cubin) + size);
}

void on_context_destroy(CUcontext ctx) noexcept {
  if (!active()) return;
  std::lock_guard<std::mutex> g(g_mu);
  // The last GetData and the Disable come before the context goes (NVIDIA's samples do the
  // same): no CUPTI call names it afterwards.
  if (CaptureContext* c = g_ctx.load(std::memory_order_acquire))
    for (auto& s : g_contexts)
      if (s->st.ctx == ctx) disable_one(*c, *s);
  g_seen.erase(ctx);  // the handle may be reused by a new context
}

void stop(CaptureContext& c) noexcept {
  if (!g_active.load()) return;
  stop_collector();
  std::lock_guard<std::mutex> g(g_mu);
  g_active.store(false);
  const uint64_t cpu0 = thread_cpu_ns();
  for (auto& s : g_contexts) disable_one(c, *s);
  g_collector_ns += thread_cpu_ns() - cpu0;
  size_t kept = 0;
  for (auto& s : g_contexts)
    if (s && cupti_holds(s->st)) {
      g_kept->push_back(std::move(s));
      ++kept;
    }
  g_contexts.clear();
  const Totals& t = g_totals;
  auto meta = [&c](const std::string& tag, const std::string& v) {
    c.info(MetadataInfo{"rocprof.pc_sampling." + tag, v});
  };
  meta("status", g_status);
  meta("backend", "cupti (continuous mode, kernels not serialised)");
  meta("method", g_asked.method);
  meta("unit", g_asked.unit);
  meta("interval", std::to_string(g_asked.interval));
  meta("period", g_periods.empty() ? "no CUDA context sampled" : g_periods);
  meta("samples", std::to_string(t.samples));
  meta("total_samples", std::to_string(t.total_samples));
  meta("dropped", std::to_string(t.dropped));
  meta("non_user_samples", std::to_string(t.non_user));
  meta("hardware_buffer_full", std::to_string(t.buffer_full));
  meta("records", std::to_string(t.records));
  meta("fetches", std::to_string(t.fetches));
  meta("samples_without_line", std::to_string(t.no_line));
  meta("collector_cpu_ns", std::to_string(g_collector_ns));
  if (kept > 0) meta("buffers_kept_for_cupti", std::to_string(kept));
  if (t.dropped > 0) {
    c.drops("pc_samples", t.dropped);
    std::fprintf(stderr,
                 "rocprof: PC sampling: %llu of %llu samples dropped by the GPU (back-pressure); "
                 "a larger --pc-sampling-interval samples less often\n",
                 static_cast<unsigned long long>(t.dropped),
                 static_cast<unsigned long long>(t.total_samples));
  }
  std::fprintf(stderr,
               "rocprof: PC sampling: %llu samples on %llu instruction/stall rows, %llu dropped; "
               "%s; collector CPU %.1f ms\n",
               static_cast<unsigned long long>(t.samples),
               static_cast<unsigned long long>(t.records),
               static_cast<unsigned long long>(t.dropped),
               g_periods.empty() ? "no CUDA context sampled" : g_periods.c_str(),
               static_cast<double>(g_collector_ns) / 1e6);
  g_cubins.clear();
  g_lines.clear();
  g_ctx.store(nullptr, std::memory_order_release);
}

void fork_child() noexcept {
  // The child has no collector thread and no usable CUDA: forget, never call CUPTI (the exit
  // hook it inherited finds PC sampling inactive).
  g_active.store(false);
  g_thread = nullptr;
}

bool holds_configured_buffer(const void* buffer) {
  std::lock_guard<std::mutex> g(g_mu);
  for (const auto* list : {&g_contexts, g_kept})
    for (const auto& s : *list)
      if (s && static_cast<const void*>(&s->st.config.data()) == buffer) return true;
  return false;
}

}  // namespace rocprof::cupti::pc

namespace rocprof::cupti::pc {
namespace {

// `rocprof info`: whether PC sampling can run here. The CUPTI backend does the sampling (one
// subscriber per process); this entry only answers the probe.
void probe_pc_sampling(bool* live, std::string* reason) {
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
  void* h = dlopen(a->path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr || dlsym(h, "cuptiPCSamplingEnable") == nullptr) {
    *reason = a->path + " has no PC sampling API (CUDA 11.3+ needed)";
    return;
  }
  *live = true;
  *reason =
      "CUPTI PC sampling (continuous) on " + std::to_string(gpus) + " NVIDIA GPU(s); " + a->path;
}

const capture::Registered<ProbeOnly> g_registered{"cupti-pc-sampling", probe_pc_sampling};

}  // namespace
}  // namespace rocprof::cupti::pc
