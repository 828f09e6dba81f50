// PC sampling through CUPTI: per-context configuration, the collector thread, source lines
// from the cubins (pc_sampling.hpp says how and why). Every CUPTI call's status is checked; a
// failure turns PC sampling off for that context with one line on stderr and in the metadata,
// and the program and its tracing run on.
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
#include "rocprof/info.hpp"

namespace rocprof::cupti::pc {
namespace {

// The PC-sampling entry points, resolved from the libcupti the backend opened (optional:
// an old CUPTI without them still traces).
struct PcApi {
#define ROCPROF_PC_FN(name) decltype(&::name) name = nullptr;
  ROCPROF_PC_FN(cuptiPCSamplingEnable)
  ROCPROF_PC_FN(cuptiPCSamplingDisable)
  ROCPROF_PC_FN(cuptiPCSamplingSetConfigurationAttribute)
  ROCPROF_PC_FN(cuptiPCSamplingGetConfigurationAttribute)
  ROCPROF_PC_FN(cuptiPCSamplingGetData)
  ROCPROF_PC_FN(cuptiPCSamplingGetNumStallReasons)
  ROCPROF_PC_FN(cuptiPCSamplingGetStallReasons)
  ROCPROF_PC_FN(cuptiGetSassToSourceCorrelation)
  ROCPROF_PC_FN(cuptiGetCubinCrc)
  ROCPROF_PC_FN(cuptiGetDeviceId)
#undef ROCPROF_PC_FN
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
};

// How many PCs one fetch takes; more wait for the next fetch of the same poll.
constexpr size_t kPcsPerFetch = 4096;

// A CUpti_PCSamplingData with room for kPcsPerFetch PCs of `reasons` stall reasons each.
struct Buffer {
  CUpti_PCSamplingData data{};
  std::vector<CUpti_PCSamplingPCData> pcs;
  std::vector<CUpti_PCSamplingStallReason> reasons;
  void init(size_t n_reasons) {
    pcs.assign(kPcsPerFetch, CUpti_PCSamplingPCData{});
    reasons.assign(kPcsPerFetch * n_reasons, CUpti_PCSamplingStallReason{});
    for (size_t i = 0; i < kPcsPerFetch; ++i) {
      pcs[i].size = sizeof(CUpti_PCSamplingPCData);
      pcs[i].stallReason = reasons.data() + i * n_reasons;
    }
    std::memset(&data, 0, sizeof data);
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = kPcsPerFetch;
    data.pPcData = pcs.data();
  }
};

struct ContextState {
  CUcontext ctx = nullptr;
  uint32_t device = 0, agent = 0;
  bool broken = false;
  StallNames stalls;
  Buffer fetch, config;  // GetData's, and the one CUPTI fills at disable
  uint64_t window_start = 0;
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
std::vector<std::unique_ptr<ContextState>> g_contexts;
std::set<CUcontext> g_seen;                                // contexts enabled or given up on
std::unordered_map<uint64_t, std::vector<char>> g_cubins;  // CRC -> the module's cubin
std::unordered_map<std::string, SourceLine> g_lines;       // "crc:function:pc" -> line
Totals g_totals;
uint64_t g_collector_ns = 0;  // CPU time of the collector thread
uint64_t g_lines_missing_cubin = 0;

std::thread* g_thread = nullptr;
std::condition_variable g_cv;
bool g_stop = false;

thread_local CUcontext t_last = nullptr;

template <class P>
P params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof p);
  p.size = size;
  return p;
}

const char* err(CUptiResult r) { return g_a != nullptr ? result_string(*g_a, r) : "error"; }

void fail(ContextState& st, const char* what, CUptiResult r) {
  st.broken = true;
  std::string why = std::string(what) + ": " + err(r);
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    why +=
        " (GPU profiling is restricted to administrators on this host: run as root, or load "
        "the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0)";
  std::fprintf(stderr, "rocprof: PC sampling off for GPU %u: %s\n", st.device, why.c_str());
  g_status = "off for GPU " + std::to_string(st.device) + ": " + why;
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
    if (g_pc.cuptiGetSassToSourceCorrelation(&p) == CUPTI_SUCCESS) {
      std::string path;
      if (p.dirName != nullptr && p.dirName[0] != '\0' && p.fileName != nullptr &&
          p.fileName[0] != '/')
        path = std::string(p.dirName) + "/";
      if (p.fileName != nullptr) path += p.fileName;
      if (!path.empty() && p.lineNumber != 0) out = SourceLine{c.intern(path), p.lineNumber};
    }
    std::free(p.fileName);
    std::free(p.dirName);
  }
  g_lines.emplace(std::move(key), out);
  return out;
}

// Under g_mu: emits what `d` holds. CUPTI's function-name strings are left alone: the header
// says they may be shared with its other records of the same function, so freeing one could
// pull a name from under CUPTI itself (a few bytes per kernel stay allocated instead).
void emit(CaptureContext& c, ContextState& st, const CUpti_PCSamplingData& d, uint64_t now) {
  const SourceLookup source = [&c](uint64_t crc, const char* fn, uint64_t pc) {
    return lookup(c, crc, fn, pc);
  };
  emit_buffer(c, d, st.stalls, source, st.agent, g_category, st.window_start, now, &g_totals);
  if (d.hardwareBufferFull && g_totals.buffer_full == 1)
    std::fprintf(stderr,
                 "rocprof: PC sampling: the GPU's sample buffer filled up, samples were lost "
                 "(raise --pc-sampling-interval); counted in rocprof.pc_sampling.dropped\n");
}

// Under g_mu: every PC CUPTI holds for this context now.
void fetch(CaptureContext& c, ContextState& st) {
  if (st.broken) return;
  for (int round = 0; round < 64; ++round) {
    st.fetch.init(st.stalls.by_index.empty() ? 1 : st.stalls.by_index.size());
    auto p = params<CUpti_PCSamplingGetDataParams>(CUpti_PCSamplingGetDataParamsSize);
    p.ctx = st.ctx;
    p.pcSamplingData = &st.fetch.data;
    const CUptiResult r = g_pc.cuptiPCSamplingGetData(&p);
    const uint64_t now = now_ns();
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) return fail(st, "GetData", r);
    emit(c, st, st.fetch.data, now);
    st.window_start = now;
    if (st.fetch.data.remainingNumPcs == 0 || st.fetch.data.totalNumPcs == 0) return;
  }
}

void collector() {
  const uint64_t cpu0 = thread_cpu_ns();
  std::unique_lock<std::mutex> lk(g_mu);
  while (!g_stop) {
    g_cv.wait_for(lk, std::chrono::milliseconds(g_asked.poll_ms));
    if (g_stop) break;
    if (CaptureContext* c = g_ctx.load(std::memory_order_acquire))
      for (auto& st : g_contexts) fetch(*c, *st);
  }
  g_collector_ns += thread_cpu_ns() - cpu0;
}

bool set_attr(ContextState& st, CUpti_PCSamplingConfigurationInfo* info, size_t n) {
  auto p =
      params<CUpti_PCSamplingConfigurationInfoParams>(CUpti_PCSamplingConfigurationInfoParamsSize);
  p.ctx = st.ctx;
  p.numAttributes = n;
  p.pPCSamplingConfigurationInfo = info;
  const CUptiResult r = g_pc.cuptiPCSamplingSetConfigurationAttribute(&p);
  if (r != CUPTI_SUCCESS) fail(st, "SetConfigurationAttribute", r);
  return r == CUPTI_SUCCESS;
}

// Under g_mu, on the thread that created or first used the context.
void enable(CUcontext ctx) {
  if (!g_seen.insert(ctx).second) return;
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) return;
  auto st = std::make_unique<ContextState>();
  st->ctx = ctx;
  CUptiResult r = g_pc.cuptiGetDeviceId(ctx, &st->device);
  if (r != CUPTI_SUCCESS) return fail(*st, "GetDeviceId", r);
  st->agent = gpu_agent_id(st->device);
  int clock_khz = 0;
  if (g_pc.cuDeviceGetAttribute != nullptr)
    g_pc.cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
                              static_cast<CUdevice>(st->device));
  uint32_t exponent = 0;
  std::string why;
  if (!period_exponent(g_asked.unit, g_asked.interval, static_cast<uint32_t>(clock_khz), &exponent,
                       &why)) {
    st->broken = true;
    std::fprintf(stderr, "rocprof: PC sampling off: %s\n", why.c_str());
    g_status = "off: " + why;
    return;
  }
  auto en = params<CUpti_PCSamplingEnableParams>(CUpti_PCSamplingEnableParamsSize);
  en.ctx = ctx;
  if ((r = g_pc.cuptiPCSamplingEnable(&en)) != CUPTI_SUCCESS) return fail(*st, "Enable", r);
  // The stall reasons this GPU reports, by CUPTI's index.
  size_t n = 0;
  auto nr = params<CUpti_PCSamplingGetNumStallReasonsParams>(
      CUpti_PCSamplingGetNumStallReasonsParamsSize);
  nr.ctx = ctx;
  nr.numStallReasons = &n;
  if ((r = g_pc.cuptiPCSamplingGetNumStallReasons(&nr)) != CUPTI_SUCCESS)
    return fail(*st, "GetNumStallReasons", r);
  std::vector<uint32_t> index(n);
  std::vector<std::vector<char>> text(n, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE));
  std::vector<char*> names(n);
  for (size_t i = 0; i < n; ++i) names[i] = text[i].data();
  auto gr =
      params<CUpti_PCSamplingGetStallReasonsParams>(CUpti_PCSamplingGetStallReasonsParamsSize);
  gr.ctx = ctx;
  gr.numStallReasons = n;
  gr.stallReasonIndex = index.data();
  gr.stallReasons = names.data();
  if ((r = g_pc.cuptiPCSamplingGetStallReasons(&gr)) != CUPTI_SUCCESS)
    return fail(*st, "GetStallReasons", r);
  for (size_t i = 0; i < n; ++i) {
    bool not_issued = false;
    const std::string name = short_stall_name(names[i], &not_issued);
    st->stalls.by_index[index[i]] = {c->intern(name), not_issued};
  }
  st->fetch.init(n == 0 ? 1 : n);
  st->config.init(n == 0 ? 1 : n);
  std::vector<CUpti_PCSamplingConfigurationInfo> info;
  auto add = [&info](CUpti_PCSamplingConfigurationAttributeType t) -> auto& {
    CUpti_PCSamplingConfigurationInfo i;
    std::memset(&i, 0, sizeof i);
    i.attributeType = t;
    info.push_back(i);
    return info.back().attributeData;
  };
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE).collectionModeData.collectionMode =
      CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT)
      .outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER)
      .samplingDataBufferData.samplingDataBuffer = &st->config.data;
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL)
      .enableStartStopControlData.enableStartStopControl = 0;
  if (exponent != 0)
    add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD)
        .samplingPeriodData.samplingPeriod = exponent;
  if (!set_attr(*st, info.data(), info.size())) return;
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
  std::string period = "GPU" + std::to_string(st->device) + "=2^" + std::to_string(exponent);
  if (clock_khz > 0 && exponent > 0)
    period += " cycles (" + std::to_string(static_cast<uint64_t>(clock_khz) * 1000ull >> exponent) +
              " samples/s per SM at " + std::to_string(clock_khz / 1000) + " MHz)";
  else
    period += " cycles";
  g_periods += (g_periods.empty() ? "" : "; ") + period;
  st->window_start = now_ns();
  g_contexts.push_back(std::move(st));
}

void disable(CaptureContext& c, ContextState& st) {
  if (st.broken) return;
  fetch(c, st);
  auto d = params<CUpti_PCSamplingDisableParams>(CUpti_PCSamplingDisableParamsSize);
  d.ctx = st.ctx;
  const CUptiResult r = g_pc.cuptiPCSamplingDisable(&d);
  if (r != CUPTI_SUCCESS) return fail(st, "Disable", r);
  // What CUPTI still held went into the configured buffer.
  if (st.config.data.totalNumPcs > 0) emit(c, st, st.config.data, now_ns());
  st.broken = true;  // nothing more from this context
}

template <class F>
bool resolve(void* h, F* fn, const char* name) {
  *fn = reinterpret_cast<F>(dlsym(h, name));
  return *fn != nullptr;
}

}  // namespace

bool start(CaptureContext& c, const PcSamplingSettings& s, const Api& a, std::string* why) {
  if (!s.enabled) return false;
  g_a = &a;
  uint32_t e = 0;
  if (!period_exponent(s.unit, s.interval, 1, &e, why)) return false;  // the unit, early
  void* h = dlopen(a.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr) h = dlopen(a.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const char* missing = nullptr;
#define ROCPROF_PC_FN(name) \
  if (missing == nullptr && !resolve(h, &g_pc.name, #name)) missing = #name;
  ROCPROF_PC_FN(cuptiPCSamplingEnable)
  ROCPROF_PC_FN(cuptiPCSamplingDisable)
  ROCPROF_PC_FN(cuptiPCSamplingSetConfigurationAttribute)
  ROCPROF_PC_FN(cuptiPCSamplingGetConfigurationAttribute)
  ROCPROF_PC_FN(cuptiPCSamplingGetData)
  ROCPROF_PC_FN(cuptiPCSamplingGetNumStallReasons)
  ROCPROF_PC_FN(cuptiPCSamplingGetStallReasons)
  ROCPROF_PC_FN(cuptiGetSassToSourceCorrelation)
  ROCPROF_PC_FN(cuptiGetCubinCrc)
  ROCPROF_PC_FN(cuptiGetDeviceId)
#undef ROCPROF_PC_FN
  if (missing != nullptr) {
    *why = a.path + " lacks " + missing + " (CUPTI's PC sampling API needs CUDA 11.3+)";
    return false;
  }
  if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD))
    resolve(cuda, &g_pc.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  std::lock_guard<std::mutex> g(g_mu);
  g_asked = s;
  g_category = c.intern("PC_SAMPLING");
  g_status = "on";
  g_periods.clear();
  g_contexts.clear();
  g_seen.clear();
  g_lines.clear();
  g_totals = Totals{};
  g_collector_ns = 0;
  g_lines_missing_cubin = 0;
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
  enable(ctx);
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
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> g(g_mu);
  for (auto& st : g_contexts)
    if (st->ctx == ctx && c != nullptr) disable(*c, *st);
  g_seen.erase(ctx);  // the handle may be reused by a new context
}

void stop(CaptureContext& c) noexcept {
  if (!g_active.exchange(false)) return;
  {
    std::lock_guard<std::mutex> g(g_mu);
    g_stop = true;
  }
  g_cv.notify_all();
  if (g_thread != nullptr) g_thread->join();
  delete g_thread;
  g_thread = nullptr;
  std::lock_guard<std::mutex> g(g_mu);
  const uint64_t cpu0 = thread_cpu_ns();
  for (auto& st : g_contexts) disable(c, *st);
  g_collector_ns += thread_cpu_ns() - cpu0;
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
  g_contexts.clear();
  g_cubins.clear();
  g_lines.clear();
  g_ctx.store(nullptr, std::memory_order_release);
}

void fork_child() noexcept {
  // The child has no collector thread and no usable CUDA: forget, never call CUPTI.
  g_active.store(false);
  g_thread = nullptr;
}

}  // namespace rocprof::cupti::pc

namespace rocprof::cupti::pc {
namespace {

// `rocprof info`: whether PC sampling can run here. The CUPTI backend does the sampling (one
// subscriber per process); this entry only answers the probe.
class PcSamplingProbe final : public Backend {
 public:
  const char* name() const override { return "cupti-pc-sampling"; }
  bool start(CaptureContext&, const CaptureSettings&, std::string*) override { return true; }
  void stop(CaptureContext&) override {}
  void probe(bool* live, std::string* reason) override {
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
    // Kept off until it is fixed: its first run on a GPU host (H100, CUDA 13) corrupted the
    // profiled program's heap ("malloc(): unsorted double linked list corrupted"), and a
    // profiler must never bring the program down. The capture code stays built and its CPU
    // tests run; tests/gpu/test_gpu_pc_sampling.py is the check that turns it back on.
    *reason =
        "turned off in this version: its first GPU run (H100) crashed the profiled "
        "program; not yet fixed (" +
        std::to_string(gpus) + " NVIDIA GPU(s), " + a->path + ")";
  }
};

struct Registrar {
  Registrar() { capture::register_backend(new PcSamplingProbe()); }
} g_registrar;

}  // namespace
}  // namespace rocprof::cupti::pc
