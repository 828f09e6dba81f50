// AMD GPU tracing through the HSA tools interface (and HIP's API callbacks): the backend's
// lifecycle, OnLoad, agents, the `rocprof info` probe and the session's metadata.
//
// Two events must both have happened before anything is traced, in either order: the HSA
// runtime calls OnLoad (inside the program's first hsa_init, because `rocprof run` names our
// tool library in HSA_TOOLS_LIB), and a session starts with settings that ask for AMD tracing.
// OnLoad installs the interceptors (queue creation, copies, allocations, executable freeze) at
// once, so that queues and kernels created before a session are known; they do nothing while no
// session traces. Nothing here has run on AMD hardware yet: only on the software stand-in
// runtime of tests/amd_standin/.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

#include "callsite.hpp"
#include "capture/context.hpp"
#include "capture/launch_site_stats.hpp"
#include "hsa_state.hpp"
#include "rocprof/clock.hpp"
#include "rocprof/info.hpp"

namespace rocprof::hsa {

Runtime g_rt;
std::atomic<bool> g_loaded{false};
Active g_on;
std::atomic<CaptureContext*> g_ctx{nullptr};
kernel_names::Naming g_names;

namespace {

thread_local uint32_t t_tid = 0;
std::atomic<uint64_t> g_next_corr{1};

// ---- agents: filled once at OnLoad, read lock-free afterwards ----
struct AgentEntry {
  uint64_t handle = 0;
  uint32_t id = 0;
  bool gpu = false;
  AgentInfo info;
};
constexpr int kMaxAgents = 64, kMaxPools = 512;
AgentEntry g_agents[kMaxAgents];
int g_agent_count = 0;
uint32_t g_gpu_ordinal = 0, g_cpu_ordinal = 0;
struct PoolEntry {
  uint64_t handle;
  uint32_t agent_id;
};
PoolEntry g_pools[kMaxPools];
int g_pool_count = 0;

std::atomic<const CallsiteHooks*> g_hooks{nullptr};
std::atomic<const CallsiteHooks*> g_session_hooks{nullptr};

std::mutex g_mu;  // session start/stop against OnLoad
bool g_session = false;
HsaSettings g_settings;
KernelNameSettings g_name_settings;
bool g_forked_child = false;

std::string text_info(hsa_agent_t a, hsa_agent_info_t attr, size_t size) {
  std::string s(size, '\0');
  if (g_rt.core.hsa_agent_get_info_fn(a, attr, s.data()) != HSA_STATUS_SUCCESS) return "";
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <class T>
T value_info(hsa_agent_t a, int attr) {
  T v{};
  g_rt.core.hsa_agent_get_info_fn(a, static_cast<hsa_agent_info_t>(attr), &v);
  return v;
}

hsa_status_t each_pool(hsa_amd_memory_pool_t pool, void* data) {
  if (g_pool_count < kMaxPools)
    g_pools[g_pool_count++] = {pool.handle, *static_cast<uint32_t*>(data)};
  return HSA_STATUS_SUCCESS;
}

hsa_status_t each_agent(hsa_agent_t a, void*) {
  if (g_agent_count >= kMaxAgents) return HSA_STATUS_SUCCESS;
  hsa_device_type_t type = HSA_DEVICE_TYPE_CPU;
  g_rt.core.hsa_agent_get_info_fn(a, HSA_AGENT_INFO_DEVICE, &type);
  AgentEntry& e = g_agents[g_agent_count++];
  e.handle = a.handle;
  e.gpu = type == HSA_DEVICE_TYPE_GPU;
  // The project's agent ids: the CPU first (one row for all CPU agents), then GPU ordinals.
  const uint32_t ordinal = e.gpu ? g_gpu_ordinal++ : g_cpu_ordinal++;
  e.id = e.gpu ? gpu_agent_id(ordinal) : kCpuAgentId;
  AgentInfo& i = e.info;
  i.id = e.id;
  i.type = e.gpu ? "GPU" : "CPU";
  i.absolute_index = value_info<uint32_t>(a, HSA_AGENT_INFO_NODE);
  i.logical_index = static_cast<uint32_t>(g_agent_count - 1);
  i.type_index = ordinal;
  i.name = text_info(a, HSA_AGENT_INFO_NAME, 64);  // gfx90a, or the CPU's name
  i.model_name = i.name;
  i.vendor_name = text_info(a, HSA_AGENT_INFO_VENDOR_NAME, 64);
  i.product_name = text_info(a, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_PRODUCT_NAME), 64);
  i.uuid = text_info(a, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_UUID), 64);
  char ext[512];
  std::snprintf(ext, sizeof ext,
                "{\"vendor\":\"AMD\",\"node_id\":%u,\"compute_units\":%u,\"wavefront_size\":%u,"
                "\"max_clock_mhz\":%u,\"simds_per_cu\":%u,\"max_waves_per_cu\":%u,"
                "\"chip_id\":%u,\"handle\":%llu,\"cu_count\":%u,\"wave_front_size\":%u,"
                "\"source\":\"HSA tools interface\"}",
                i.absolute_index, value_info<uint32_t>(a, HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT),
                value_info<uint32_t>(a, HSA_AGENT_INFO_WAVEFRONT_SIZE),
                value_info<uint32_t>(a, HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY),
                value_info<uint32_t>(a, HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU),
                value_info<uint32_t>(a, HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU),
                value_info<uint32_t>(a, HSA_AMD_AGENT_INFO_CHIP_ID),
                // roctxNameHsaAgent names the row by this handle; ROCm's agent-info keys too.
                static_cast<unsigned long long>(a.handle),
                value_info<uint32_t>(a, HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT),
                value_info<uint32_t>(a, HSA_AGENT_INFO_WAVEFRONT_SIZE));
  i.extdata = ext;
  if (g_rt.amd.hsa_amd_agent_iterate_memory_pools_fn != nullptr)
    g_rt.amd.hsa_amd_agent_iterate_memory_pools_fn(a, each_pool, &e.id);
  return HSA_STATUS_SUCCESS;
}

// ROCr's system clock is CLOCK_BOOTTIME at 1 GHz; measured, not assumed: a runtime with
// another frequency is scaled, one with another clock is shifted by the measured offset.
void calibrate_clock() {
  uint64_t hz = 0, ticks = 0;
  if (g_rt.core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &hz) !=
          HSA_STATUS_SUCCESS ||
      hz == 0)
    hz = 1000000000ull;
  g_rt.ns_per_tick = 1e9 / static_cast<double>(hz);
  const uint64_t before = now_ns();
  g_rt.core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP, &ticks);
  const uint64_t after = now_ns();
  const int64_t offset = static_cast<int64_t>(before / 2 + after / 2) -
                         static_cast<int64_t>(static_cast<double>(ticks) * g_rt.ns_per_tick);
  // Within a millisecond: the same clock read a little later, not another domain.
  g_rt.offset_ns = (offset > 1000000 || offset < -1000000) ? offset : 0;
}

std::string runtime_library() {
  Dl_info info{};
  if (g_rt.core.hsa_init_fn != nullptr &&
      dladdr(reinterpret_cast<void*>(g_rt.core.hsa_init_fn), &info) != 0 && info.dli_fname)
    return info.dli_fname;
  return "unknown";
}

void note(CaptureContext& c, const std::string& tag, const std::string& value) {
  c.info(MetadataInfo{"rocprof.hsa." + tag, value});
}

// Both OnLoad and the session are there: switch tracing on. Under g_mu.
void activate(CaptureContext& c) {
  const HsaSettings& s = g_settings;
  // The one place the activity vocabulary becomes this backend's switches.
  const bool kernels = s.activities.has(Activity::kernels);
  const bool copies = s.activities.has(Activity::copies);
  const bool allocations = s.activities.has(Activity::allocations);
  const bool hsa_api = s.activities.has(Activity::hsa_api);
  // The GPU runtime's API is HIP's here (rocprofv3's --runtime-trace: HIP runtime API).
  const bool hip_api =
      s.activities.has(Activity::hip_api) || s.activities.has(Activity::runtime_api);
  std::string why;  // validated by capture::validate before the session started
  if (!g_names.configure(g_name_settings, &why))
    std::fprintf(stderr, "rocprof: %s; AMD kernels traced unfiltered\n", why.c_str());
  note(c, "runtime_library", runtime_library());
  note(c, "runtime_version", std::to_string(g_rt.version));
  note(c, "clock",
       "system ticks x " + std::to_string(g_rt.ns_per_tick) + " ns + " +
           std::to_string(g_rt.offset_ns) + " ns = CLOCK_BOOTTIME");
  write_agents(c);
  if (hsa_api) {
    install_api_tracing();
    api_tracing_names(c);
  }
  if (const CallsiteHooks* h = s.launch_sites ? g_hooks.load(std::memory_order_acquire) : nullptr) {
    h->start(&c);
    g_session_hooks.store(h, std::memory_order_release);
  }
  dispatch_session_start(c);
  std::string active = "hsa_tools";
  if (kernels) active += ",kernel_trace";
  if (copies) active += ",memory_copy_trace";
  if (allocations) active += ",memory_allocation_trace";
  if (hsa_api) active += ",hsa_trace";
  g_on.region.store(s.region, std::memory_order_relaxed);
  g_on.kernels.store(kernels, std::memory_order_relaxed);
  g_on.copies.store(copies, std::memory_order_relaxed);
  g_on.allocations.store(allocations, std::memory_order_relaxed);
  g_on.hsa_api.store(hsa_api, std::memory_order_release);
  if (hip_api) {
    std::string why;
    if (hip_start(c, &why)) {
      active += ",hip_trace";
    } else {
      std::fprintf(stderr, "rocprof: HIP API tracing off: %s\n", why.c_str());
      note(c, "hip_status", "off: " + why);
    }
  }
  note(c, "status", "on");
  note(c, "active", active);
}

void on_start(CaptureContext& c, const HsaSettings& s, const KernelNameSettings& names) {
  if (g_forked_child || !s.enabled) return;
  std::lock_guard<std::mutex> g(g_mu);
  g_settings = s;
  g_name_settings = names;
  g_session = true;
  g_ctx.store(&c, std::memory_order_release);
  note(c, "compiled", build_summary());
  note(c, "hardware", "not yet run on AMD hardware (tested on the software stand-in runtime only)");
  if (!g_rt.refused.empty()) {
    note(c, "status", "off: " + g_rt.refused);
    return;
  }
  if (!g_loaded.load(std::memory_order_acquire)) {
    // OnLoad comes later (the program's first hsa_init) or never (no AMD GPU program ran).
    note(c, "status", "waiting: the HSA runtime has not loaded rocprof's tool (HSA_TOOLS_LIB)");
    return;
  }
  activate(c);
}

void on_stop(CaptureContext& c) {
  std::lock_guard<std::mutex> g(g_mu);
  if (!g_session) return;
  g_session = false;
  g_on.hsa_api.store(false, std::memory_order_relaxed);
  g_on.kernels.store(false, std::memory_order_relaxed);
  g_on.copies.store(false, std::memory_order_relaxed);
  g_on.allocations.store(false, std::memory_order_relaxed);
  if (g_loaded.load(std::memory_order_acquire) && g_rt.refused.empty()) {
    hip_stop();
    const CallsiteHooks* h = g_session_hooks.load(std::memory_order_acquire);
    if (h != nullptr) h->stop();
    dispatch_session_stop(c);  // waits for GPU work in flight, then writes what it finished
    if (h != nullptr && h->stats != nullptr) {
      uint64_t v[kLaunchSiteStats] = {};
      h->stats(v);
      c.info(MetadataInfo{"rocprof.hsa.launch_sites", launch_site_stats_entry("hsa", v)});
    }
    g_session_hooks.store(nullptr, std::memory_order_release);
  }
  g_ctx.store(nullptr, std::memory_order_release);
}

bool gpu_nodes(int* count, std::string* why) {
  *count = 0;
  if (::access("/dev/kfd", R_OK | W_OK) != 0) {
    *why = "no AMD GPU driver (/dev/kfd missing or not accessible)";
    return false;
  }
  const char* root = "/sys/class/kfd/kfd/topology/nodes";
  if (DIR* d = opendir(root)) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream f(std::string(root) + "/" + e->d_name + "/properties");
      std::string key;
      uint64_t v = 0;
      while (f >> key >> v)
        if (key == "simd_count" && v > 0) ++*count;
    }
    closedir(d);
  }
  if (*count == 0) *why = "the AMD GPU driver is loaded but lists no GPU";
  return *count > 0;
}

void probe(bool* live, std::string* reason) {
  if (const char* standin = std::getenv("ROCPROF_HSA_STANDIN")) {
    // Test-only (tests/amd_standin): a software HSA runtime plays the GPU.
    *live = ::access(standin, R_OK) == 0;
    *reason = *live
                  ? std::string("test-only software HSA runtime ") + standin + " (not AMD hardware)"
                  : std::string("ROCPROF_HSA_STANDIN names a missing file: ") + standin;
    return;
  }
  int gpus = 0;
  std::string why;
  if (!gpu_nodes(&gpus, &why)) {
    *live = false;
    *reason = why;
    return;
  }
  void* h = nullptr;
  std::string tried;
  std::string rocm = std::getenv("ROCM_PATH") ? std::getenv("ROCM_PATH") : "/opt/rocm";
  for (const std::string& p :
       {std::string("libhsa-runtime64.so.1"), rocm + "/lib/libhsa-runtime64.so.1"}) {
    if ((h = dlopen(p.c_str(), RTLD_LAZY | RTLD_LOCAL)) != nullptr) {
      tried = p;
      break;
    }
  }
  *live = h != nullptr;
  *reason = h != nullptr ? std::to_string(gpus) + " AMD GPU(s); HSA runtime " + tried +
                               "; not yet run on AMD hardware"
                         : "libhsa-runtime64.so.1 not found (install ROCm or set ROCM_PATH)";
}

class HsaBackend final : public Backend {
 public:
  const char* name() const override { return "hsa"; }
  bool start(CaptureContext& ctx, const CaptureSettings& s, std::string*) override {
    on_start(ctx, s.hsa, s.kernel_names);  // says itself, in metadata, why it is off or waiting
    return true;
  }
  void stop(CaptureContext& ctx) override { on_stop(ctx); }
  void fork_child() override {
    // The child has no usable HSA runtime state of its parent's: never call it from here.
    g_forked_child = true;
    g_session = false;
    g_ctx.store(nullptr);
  }
  void probe(bool* live, std::string* reason) override { hsa::probe(live, reason); }
};

const capture::Registered<HsaBackend> g_registered;  // lives as long as the process

}  // namespace

uint32_t os_tid() noexcept {
  if (t_tid == 0) t_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_tid;
}

uint64_t next_correlation() noexcept { return g_next_corr.fetch_add(1, std::memory_order_relaxed); }

uint32_t agent_id(hsa_agent_t agent) noexcept {
  for (int i = 0; i < g_agent_count; ++i)
    if (g_agents[i].handle == agent.handle) return g_agents[i].id;
  return 0;
}

bool agent_is_gpu(hsa_agent_t agent) noexcept {
  for (int i = 0; i < g_agent_count; ++i)
    if (g_agents[i].handle == agent.handle) return g_agents[i].gpu;
  return false;
}

uint32_t pool_agent_id(hsa_amd_memory_pool_t pool) noexcept {
  for (int i = 0; i < g_pool_count; ++i)
    if (g_pools[i].handle == pool.handle) return g_pools[i].agent_id;
  return 0;
}

void discover_agents() {
  g_agent_count = g_pool_count = 0;
  g_gpu_ordinal = g_cpu_ordinal = 0;
  g_rt.core.hsa_iterate_agents_fn(each_agent, nullptr);
}

void write_agents(CaptureContext& c) {
  // GPU rows only: the CPU row (kCpuAgentId) is the session's own, from the OS.
  for (int i = 0; i < g_agent_count; ++i)
    if (g_agents[i].gpu) c.info(g_agents[i].info);
}

uint64_t capture_site(uint32_t* id) noexcept {
  const CallsiteHooks* h = g_session_hooks.load(std::memory_order_acquire);
  return h != nullptr ? h->capture(id) : 0;
}

uint32_t resolve_site(uint64_t key) {
  const CallsiteHooks* h = g_session_hooks.load(std::memory_order_acquire);
  return h != nullptr && key != 0 ? h->resolve(key) : 0;
}

void set_callsite_hooks(const CallsiteHooks* hooks) noexcept {
  g_hooks.store(hooks, std::memory_order_release);
}

const char* build_summary() noexcept {
  return "hsa_tools: compiled (HSA tools interface, " ROCPROF_HSA_HEADERS_DESC
         "); hip_api: " ROCPROF_HIP_STATE "; rocprofiler_sdk: " ROCPROF_SDK_STATE;
}

bool on_load(const OnLoadArgs& args) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_loaded.load(std::memory_order_acquire) || !g_rt.refused.empty()) return true;  // once
  auto* table = static_cast<HsaApiTable*>(args.table);
  std::string why;
  if (!check_layout(table, &why)) {
    g_rt.refused = why;
    std::fprintf(stderr, "rocprof: %s\n", why.c_str());
    if (CaptureContext* c = g_ctx.load(std::memory_order_acquire))
      note(*c, "status", "off: " + why);
    return true;
  }
  g_rt.table = table;
  g_rt.core = *table->core_;
  g_rt.amd = *table->amd_ext_;
  g_rt.version = args.runtime_version;
  calibrate_clock();
  discover_agents();
  install_interceptors();
  g_loaded.store(true, std::memory_order_release);
  if (g_session) {
    if (CaptureContext* c = g_ctx.load(std::memory_order_acquire)) activate(*c);
  }
  return true;
}

}  // namespace rocprof::hsa
