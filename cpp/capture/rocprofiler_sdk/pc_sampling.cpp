// PC sampling through rocprofiler-sdk: the tool's configure/initialize/finalize, the services it
// sets up, the session's start and stop, and the `rocprof info` probe (pc_sampling.hpp says how
// and why). Every SDK call's status is checked; a failure turns PC sampling off (for that GPU,
// or altogether) with one line on stderr and in the metadata, and the program runs on.
#include "pc_sampling.hpp"

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capture/amd_layers.hpp"
#include "capture/context.hpp"
#include "capture/settings.hpp"
#if ROCPROF_SDK_DEVICE_COUNTING
#include "device_counting.hpp"
#endif
#include "rocprof/info.hpp"
#include "sdk_api.hpp"

namespace rocprof::sdk {

bool resolve(const void* caller, SdkApi* api, std::string* why) {
  void* h = nullptr;
  Dl_info info{};
  if (caller != nullptr && dladdr(caller, &info) != 0 && info.dli_fname != nullptr) {
    h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    api->library = info.dli_fname;
  }
  if (h == nullptr) {
    h = RTLD_DEFAULT;
    api->library = "(global symbols)";
  }
  const char* missing = nullptr;
#define ROCPROF_SDK_FN(name)                                          \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(h, #name)); \
  if (api->name == nullptr && missing == nullptr) missing = #name;
  ROCPROF_SDK_FUNCTIONS(ROCPROF_SDK_FN)
#undef ROCPROF_SDK_FN
#define ROCPROF_SDK_FN(name) api->name = reinterpret_cast<decltype(api->name)>(dlsym(h, #name));
  ROCPROF_SDK_OPTIONAL_FUNCTIONS(ROCPROF_SDK_FN)
#undef ROCPROF_SDK_FN
  if (missing != nullptr) {
    *why = api->library + " lacks " + missing + " (rocprofiler-sdk's PC sampling needs ROCm 6.2+)";
    return false;
  }
  return true;
}

std::string status_text(const SdkApi& api, rocprofiler_status_t status) {
  const char* s =
      api.rocprofiler_get_status_string ? api.rocprofiler_get_status_string(status) : nullptr;
  return s != nullptr ? s : "rocprofiler-sdk status " + std::to_string(static_cast<int>(status));
}

namespace {

constexpr size_t kBufferBytes = 1u << 20, kWatermark = kBufferBytes / 16 * 15;

// One GPU the SDK offered. Lives as long as the process: its address is the buffer's
// callback data.
struct Gpu {
  uint64_t handle = 0;    // rocprofiler_agent_id_t
  uint32_t agent_id = 0;  // rocpd_info_agent id
  int32_t ordinal = 0;    // among GPUs
  rocprofiler_buffer_id_t buffer{};
  bool on = false;
  std::string period;                   // what it samples at, for the metadata
  std::atomic<uint64_t> drops_seen{0};  // the buffer's drop count (cumulative in the SDK)
  uint64_t drops_at_start = 0;
};

SdkApi g_api;
std::mutex g_mu;  // everything below except what the buffer callback reads
bool g_client = false, g_initialized = false, g_forked = false;
bool g_session = false, g_configured = false, g_running = false, g_sdk_finalized = false;
PcSamplingSettings g_asked;
CaptureContext* g_session_ctx = nullptr;  // the running session's (it asked for PC sampling)
std::string g_status = "rocprofiler-sdk has not started in this process";
std::vector<std::unique_ptr<Gpu>> g_gpus;
rocprofiler_context_id_t g_names_ctx{}, g_sampling_ctx{};
rocprofiler_pc_sampling_method_t g_method = ROCPROFILER_PC_SAMPLING_METHOD_NONE;

// Read by the SDK's threads (callbacks) without g_mu. g_ctx: where samples go, set while
// sampling runs.
std::atomic<CaptureContext*> g_ctx{nullptr};
Kernels g_kernels;
DispatchRing* g_ring = nullptr;  // made when the service is configured; never freed
Vocabulary g_names;
uint32_t g_category = 0;
std::mutex g_totals_mu;  // the buffer callbacks' (one SDK thread per buffer)
Totals g_totals;
uint64_t g_callback_ns = 0, g_outside_session = 0;

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// ---- callbacks (the SDK's threads, or the application's for dispatches) ----

void on_code_object(rocprofiler_callback_tracing_record_t record, rocprofiler_user_data_t*, void*) {
  if (record.kind != ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT ||
      record.phase != ROCPROFILER_CALLBACK_PHASE_LOAD || record.payload == nullptr)
    return;
  if (record.operation == ROCPROFILER_CODE_OBJECT_LOAD) {
    const auto* d =
        static_cast<const rocprofiler_callback_tracing_code_object_load_data_t*>(record.payload);
    g_kernels.code_object(d->code_object_id, d->load_base, d->load_size);
  } else if (record.operation == ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER) {
    const auto* d =
        static_cast<const rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t*>(
            record.payload);
    const uint64_t entry =
        d->kernel_object + static_cast<uint64_t>(d->kernel_code_entry_byte_offset);
    g_kernels.kernel(d->kernel_id, d->code_object_id, d->kernel_name ? d->kernel_name : "", entry);
  }
}

// Hot path: the submitting thread, once per kernel dispatch. Plain stores, no lock.
void on_dispatch(rocprofiler_callback_tracing_record_t record, rocprofiler_user_data_t*, void*) {
  if (record.kind != ROCPROFILER_CALLBACK_TRACING_KERNEL_DISPATCH ||
      record.operation != ROCPROFILER_KERNEL_DISPATCH_ENQUEUE ||
      record.phase == ROCPROFILER_CALLBACK_PHASE_EXIT || record.payload == nullptr ||
      g_ring == nullptr)
    return;
  const auto& info =
      static_cast<const rocprofiler_callback_tracing_kernel_dispatch_data_t*>(record.payload)
          ->dispatch_info;
  DispatchInfo d;
  d.kernel_id = info.kernel_id;
  d.agent = info.agent_id.handle;
  amd_layers::Handoff& h = amd_layers::t_handoff;
  if (h.taken < h.count) {
    d.dispatch_id = h.dispatch[h.taken];
    d.correlation_id = h.correlation[h.taken];
    ++h.taken;
  }
  g_ring->put(info.dispatch_id, d);
}

void on_buffer(rocprofiler_context_id_t, rocprofiler_buffer_id_t,
               rocprofiler_record_header_t** headers, size_t count, void* data,
               uint64_t drop_count) {
  auto* gpu = static_cast<Gpu*>(data);
  gpu->drops_seen.store(drop_count, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(g_totals_mu);
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) {  // delivered after the session ended: nowhere to store it
    g_outside_session += count;
    return;
  }
  const uint64_t cpu0 = thread_cpu_ns();
  const Source src{gpu->agent_id, &g_kernels, g_ring, &g_names, g_category};
  emit_records(*c, src, headers, count, &g_totals);
  g_callback_ns += thread_cpu_ns() - cpu0;
}

// ---- configuration (inside the SDK's initialize call) ----

bool check(rocprofiler_status_t st, const char* what, std::string* why) {
  if (st == ROCPROFILER_STATUS_SUCCESS) return true;
  *why = std::string(what) + ": " + status_text(g_api, st);
  return false;
}

rocprofiler_status_t collect_agents(rocprofiler_agent_version_t, const void** agents, size_t n,
                                    void*) {
  for (size_t i = 0; i < n; ++i) {
    const auto* a = static_cast<const rocprofiler_agent_v0_t*>(agents[i]);
    if (a == nullptr || a->type != ROCPROFILER_AGENT_TYPE_GPU) continue;
    auto gpu = std::make_unique<Gpu>();
    gpu->handle = a->id.handle;
    gpu->ordinal = a->logical_node_type_id >= 0 ? a->logical_node_type_id
                                                : static_cast<int32_t>(g_gpus.size());
    gpu->agent_id = gpu_agent_id(static_cast<uint32_t>(gpu->ordinal));
    g_gpus.push_back(std::move(gpu));
  }
  return ROCPROFILER_STATUS_SUCCESS;
}

rocprofiler_status_t collect_configs(const rocprofiler_pc_sampling_configuration_t* configs,
                                     size_t n, void* out) {
  auto* v = static_cast<std::vector<rocprofiler_pc_sampling_configuration_t>*>(out);
  v->assign(configs, configs + n);
  return ROCPROFILER_STATUS_SUCCESS;
}

// Under g_mu. One GPU's service; false with *why.
bool configure_gpu(Gpu& gpu, rocprofiler_pc_sampling_unit_t unit, std::string* why) {
  std::vector<rocprofiler_pc_sampling_configuration_t> configs;
  if (!check(g_api.rocprofiler_query_pc_sampling_agent_configurations(
                 rocprofiler_agent_id_t{gpu.handle}, collect_configs, &configs),
             "its PC sampling configurations", why))
    return false;
  uint64_t interval = 0;
  if (!choose_interval(configs, g_method, unit, g_asked.interval, &interval, why)) return false;
  if (!check(g_api.rocprofiler_create_buffer(g_sampling_ctx, kBufferBytes, kWatermark,
                                             ROCPROFILER_BUFFER_POLICY_DISCARD, on_buffer, &gpu,
                                             &gpu.buffer),
             "rocprofiler_create_buffer", why) ||
      !check(g_api.rocprofiler_configure_pc_sampling_service(
                 g_sampling_ctx, rocprofiler_agent_id_t{gpu.handle}, g_method, unit, interval,
                 gpu.buffer, 0),
             "rocprofiler_configure_pc_sampling_service", why))
    return false;
  gpu.on = true;
  gpu.period =
      "GPU" + std::to_string(gpu.ordinal) + "=" + method_name(g_method) + " every " +
      std::to_string(interval) +
      (unit == ROCPROFILER_PC_SAMPLING_UNIT_TIME ? " us" : std::string(" ") + unit_name(unit));
  return true;
}

// Under g_mu, inside the SDK's initialize: both contexts and their services. Sets g_status.
void configure_services() {
  rocprofiler_pc_sampling_unit_t unit = ROCPROFILER_PC_SAMPLING_UNIT_NONE;
  if (!parse_method(g_asked.method, &g_method) || !parse_unit(g_asked.unit, &unit)) {
    g_status = "off: unknown method or unit (" + g_asked.method + ", " + g_asked.unit + ")";
    return;
  }
  std::string why;
  const rocprofiler_tracing_operation_t code_ops[] = {
      ROCPROFILER_CODE_OBJECT_LOAD, ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER};
  if (!check(g_api.rocprofiler_create_context(&g_names_ctx), "rocprofiler_create_context", &why) ||
      !check(g_api.rocprofiler_configure_callback_tracing_service(
                 g_names_ctx, ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT, code_ops, 2, on_code_object,
                 nullptr),
             "code object tracing", &why) ||
      !check(g_api.rocprofiler_create_context(&g_sampling_ctx), "rocprofiler_create_context",
             &why) ||
      !check(
          g_api.rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, collect_agents,
                                                   sizeof(rocprofiler_agent_v0_t), nullptr),
          "rocprofiler_query_available_agents", &why)) {
    g_status = "off: " + why;
    return;
  }
  std::string refused;
  for (auto& gpu : g_gpus) {
    if (configure_gpu(*gpu, unit, &why)) continue;
    refused += (refused.empty() ? "" : "; ") + std::string("GPU") + std::to_string(gpu->ordinal) +
               ": " + why;
  }
  size_t on = 0;
  for (const auto& gpu : g_gpus) on += gpu->on ? 1 : 0;
  if (on == 0) {
    g_status = "off: " + (g_gpus.empty() ? std::string("rocprofiler-sdk lists no GPU") : refused);
    return;
  }
  const rocprofiler_tracing_operation_t dispatch_ops[] = {ROCPROFILER_KERNEL_DISPATCH_ENQUEUE};
  g_ring = new DispatchRing();
  if (!check(g_api.rocprofiler_configure_callback_tracing_service(
                 g_sampling_ctx, ROCPROFILER_CALLBACK_TRACING_KERNEL_DISPATCH, dispatch_ops, 1,
                 on_dispatch, nullptr),
             "kernel dispatch tracing", &why) ||
      !check(g_api.rocprofiler_start_context(g_names_ctx), "rocprofiler_start_context", &why)) {
    g_status = "off: " + why;
    return;
  }
  g_configured = true;
  g_status = refused.empty() ? "on" : "on, except " + refused;
  amd_layers::g_sdk_makes_queues.store(true, std::memory_order_release);
}

// ---- the session's part ----

void say_off(const std::string& why) {
  std::fprintf(stderr, "rocprof: PC sampling (rocprofiler-sdk) off: %s\n", why.c_str());
}

// Under g_mu: sampling on for the session whose context is `c`.
void start_sampling(CaptureContext& c) {
  if (!g_configured || g_running) return;
  g_names = make_vocabulary(c, g_api.rocprofiler_get_pc_sampling_instruction_type_name,
                            g_api.rocprofiler_get_pc_sampling_instruction_not_issued_reason_name);
  g_category = c.intern("PC_SAMPLING");
  {
    std::lock_guard<std::mutex> g(g_totals_mu);
    g_totals = Totals{};
    g_callback_ns = g_outside_session = 0;
  }
  for (auto& gpu : g_gpus) gpu->drops_at_start = gpu->drops_seen.load();
  g_ctx.store(&c, std::memory_order_release);
  std::string why;
  if (!check(g_api.rocprofiler_start_context(g_sampling_ctx), "rocprofiler_start_context", &why)) {
    g_status = "off: " + why;
    say_off(why);
    g_ctx.store(nullptr, std::memory_order_release);
    return;
  }
  g_running = true;
}

// Under g_mu: sampling stopped and every sample delivered. From the SDK's finalize call
// (`finalizing`), or before the SDK began its teardown.
void drain(bool finalizing) {
  if (!g_running || g_sdk_finalized) return;
  int finalized = 0;
  g_api.rocprofiler_is_finalized(&finalized);
  if (finalized != 0 && !finalizing) return;
  std::string why;
  if (!check(g_api.rocprofiler_stop_context(g_sampling_ctx), "rocprofiler_stop_context", &why))
    g_status = "on; at stop: " + why;
  for (auto& gpu : g_gpus)
    if (gpu->on &&
        !check(g_api.rocprofiler_flush_buffer(gpu->buffer), "rocprofiler_flush_buffer", &why))
      g_status = "on; at stop: " + why;
}

void write_metadata(CaptureContext& c) {
  auto meta = [&c](const std::string& tag, const std::string& v) {
    c.info(MetadataInfo{"rocprof.pc_sampling." + tag, v});
  };
  Totals t;
  uint64_t callback_ns, outside;
  {
    std::lock_guard<std::mutex> g(g_totals_mu);
    t = g_totals;
    callback_ns = g_callback_ns;
    outside = g_outside_session;
  }
  uint64_t dropped = 0;
  std::string periods;
  for (const auto& gpu : g_gpus) {
    if (!gpu->on) continue;
    dropped += gpu->drops_seen.load() - gpu->drops_at_start;
    periods += (periods.empty() ? "" : "; ") + gpu->period;
  }
  meta("status", g_status);
  meta("backend", "rocprofiler-sdk " + std::string(method_name(g_method)) + " (" + g_api.library +
                      "; not run on AMD hardware)");
  meta("method", g_asked.method);
  meta("unit", g_asked.unit);
  meta("interval", std::to_string(g_asked.interval));
  meta("period", periods.empty() ? "no GPU sampled" : periods);
  meta("samples", std::to_string(t.samples));
  meta("total_samples", std::to_string(t.samples + t.invalid + dropped));
  meta("dropped", std::to_string(dropped));
  meta("invalid_samples", std::to_string(t.invalid));
  meta("records", std::to_string(t.samples));
  meta("fetches", std::to_string(t.deliveries));
  meta("samples_without_line", std::to_string(t.samples));  // the SDK gives no source lines
  meta("samples_without_dispatch", std::to_string(t.without_dispatch));
  meta("samples_without_kernel", std::to_string(t.without_kernel));
  meta("collector_cpu_ns", std::to_string(callback_ns));
  if (dropped > 0) c.drops("pc_samples", dropped);
  if (t.invalid > 0) c.drops("pc_samples_invalid", t.invalid);
  if (outside > 0) c.drops("pc_samples_after_session", outside);
  if (dropped > 0 || t.invalid > 0)
    std::fprintf(stderr,
                 "rocprof: PC sampling: %llu samples dropped (rocprofiler-sdk's buffer full) and "
                 "%llu the SDK could not attribute; a larger --pc-sampling-interval samples less "
                 "often\n",
                 static_cast<unsigned long long>(dropped),
                 static_cast<unsigned long long>(t.invalid));
  std::fprintf(stderr,
               "rocprof: PC sampling (rocprofiler-sdk %s): %llu samples, %llu dropped; %s; "
               "collector CPU %.1f ms\n",
               method_name(g_method), static_cast<unsigned long long>(t.samples),
               static_cast<unsigned long long>(dropped),
               periods.empty() ? g_status.c_str() : periods.c_str(),
               static_cast<double>(callback_ns) / 1e6);
}

// ---- the SDK's view of the tool ----

int tool_initialize(rocprofiler_client_finalize_t, void*) {
  std::lock_guard<std::mutex> g(g_mu);
  g_initialized = true;
  if (g_forked) return 0;
#if ROCPROF_SDK_DEVICE_COUNTING
  dc::initialize(g_api.library);  // GPU metrics (device_counting.hpp), configured here too
#endif
  if (!g_session || !g_asked.enabled) {
    g_status =
        "off: rocprofiler-sdk started before PC sampling was asked (the session must "
        "start before the program's first GPU call)";
    return 0;
  }
  configure_services();
  if (!g_configured) {
    say_off(g_status.substr(5));
    return 0;
  }
  if (g_session_ctx != nullptr) start_sampling(*g_session_ctx);
  return 0;
}

// The SDK's teardown (its exit handler, or the process's end): the last samples are delivered
// while the SDK still can; the session's stop, whenever it comes, writes the metadata.
void tool_finalize(void*) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_forked) return;
#if ROCPROF_SDK_DEVICE_COUNTING
  dc::finalize();
#endif
  drain(true);
  g_sdk_finalized = true;
}

rocprofiler_tool_configure_result_t g_result{sizeof(rocprofiler_tool_configure_result_t),
                                             tool_initialize, tool_finalize, nullptr};

// ---- the backend the session starts ----

class SdkPcSampling final : public Backend {
 public:
  const char* name() const override { return "rocprofiler-sdk-pc-sampling"; }

  bool start(CaptureContext& c, const CaptureSettings& s, std::string*) override {
    std::lock_guard<std::mutex> g(g_mu);
    if (!s.pc_sampling.enabled || g_forked) return true;
    g_session = true;
    g_asked = s.pc_sampling;
    g_session_ctx = &c;  // where the SDK's initialize starts sampling, if it comes later
    if (!g_initialized) return true;
    if (g_configured)
      start_sampling(c);
    else if (g_status.rfind("off: rocprofiler-sdk started before", 0) == 0)
      say_off(g_status.substr(5));
    return true;
  }

  void stop(CaptureContext& c) override {
    std::lock_guard<std::mutex> g(g_mu);
    if (!g_session) return;
    g_session = false;
    drain(false);
    g_running = false;
    g_ctx.store(nullptr, std::memory_order_release);
    g_session_ctx = nullptr;
    // Nothing to say where rocprofiler-sdk never loaded us (no AMD GPU work in this process):
    // another PC sampler may have written these tags.
    if (g_initialized) write_metadata(c);
  }

  void fork_child() override {
    // The child has none of the SDK's threads: never call it from there.
    g_forked = true;
    g_running = false;
    g_session_ctx = nullptr;
    g_ctx.store(nullptr);
  }

  void probe(bool* live, std::string* reason) override {
    if (const char* standin = std::getenv("ROCPROF_SDK_STANDIN")) {
      // Test-only (tests/amd_standin): a software stand-in plays rocprofiler-sdk.
      *live = ::access(standin, R_OK) == 0;
      *reason = *live ? std::string("test-only stand-in for rocprofiler-sdk ") + standin +
                            " (not AMD hardware; not run on AMD hardware)"
                      : std::string("ROCPROF_SDK_STANDIN names a missing file: ") + standin;
      return;
    }
    *live = false;
    if (::access("/dev/kfd", R_OK | W_OK) != 0) {
      *reason =
          "rocprofiler-sdk's PC sampling needs an AMD GPU: no AMD GPU driver (/dev/kfd missing or "
          "not accessible); not run on AMD hardware";
      return;
    }
    const char* rocm = std::getenv("ROCM_PATH");
    for (const std::string& root :
         {std::string(rocm ? rocm : "/opt/rocm"), std::string("/opt/rocm")})
      for (const char* name : {"librocprofiler-sdk.so.1", "librocprofiler-sdk.so"}) {
        const std::string path = root + "/lib/" + name;
        if (::access(path.c_str(), R_OK) != 0) continue;
        *live = true;
        *reason = "rocprofiler-sdk " + path +
                  " (host_trap needs MI200 or newer, stochastic MI300 or newer); not run on AMD "
                  "hardware";
        return;
      }
    *reason =
        "librocprofiler-sdk.so not found (ROCm 6.2+ ships it; set ROCM_PATH); not run on AMD "
        "hardware";
  }
};

const capture::Registered<SdkPcSampling> g_registered;  // lives as long as the process

}  // namespace

rocprofiler_tool_configure_result_t* configure(uint32_t, const char*, uint32_t,
                                               rocprofiler_client_id_t* client,
                                               const void* caller) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_client || g_forked) return nullptr;  // one client per process
  std::string why;
  if (!resolve(caller, &g_api, &why)) {
    g_status = "off: " + why;
    say_off(why);
    return nullptr;
  }
  g_client = true;
  if (client != nullptr) client->name = "rocprof";
  return &g_result;
}

}  // namespace rocprof::sdk
