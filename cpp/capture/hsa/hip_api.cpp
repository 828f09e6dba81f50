// HIP API tracing (--hip-trace) through the callback registration of ROCm 5.x HIP
// (hipRegisterActivityCallback / hipRegisterApiCallback, hip_runtime_api.h), with the argument
// layouts and names of hip/amd_detail/hip_prof_str.h.
//
// The protocol (hipamd's hip_prof_api.h): inside each HIP call, the "activity" callback is asked
// first, with a null last argument, for the call's hip_api_data_t — the tool owns that storage
// and sets the correlation id and phase in it; HIP fills in the arguments and calls the API
// callback with phase ENTER; on return it sets phase EXIT, calls the API callback again, then
// the activity callback with the registered argument. HIP calls nothing unless an activity
// callback is registered. Our storage is a small per-thread stack (calls may nest), and the
// innermost call's correlation id is what GPU work submitted on this thread carries
// (current_hip_correlation), which is how a HIP launch and its kernel dispatch are tied.
//
// The library is whichever loaded object exports the registration functions (libamdhip64 of the
// application, or the test stand-in); nothing is linked. ROCm >= 6 HIP dropped these functions
// for rocprofiler-register: then HIP tracing says so and stays off.
#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <mutex>
#include <string>

#include "capture/context.hpp"
#include "capture/markers/markers.hpp"
#include "hsa_state.hpp"
#include "rocprof/clock.hpp"

#if ROCPROF_HSA_WITH_HIP
#include <hip/hip_runtime_api.h>
#include <hip/amd_detail/hip_prof_str.h>
#endif

namespace rocprof::hsa {

#if ROCPROF_HSA_WITH_HIP
namespace {

using RegisterFn = hipError_t (*)(uint32_t, void*, void*);
using RemoveFn = hipError_t (*)(uint32_t);
using NameFn = const char* (*)(uint32_t);

struct Hip {
  RegisterFn register_api = nullptr, register_activity = nullptr;
  RemoveFn remove_api = nullptr, remove_activity = nullptr;
  NameFn api_name = nullptr;
  std::string path;
};
Hip g_hip;
bool g_hip_found = false;

// Ids past the header's last one are tried too: a newer 5.x runtime has more.
constexpr uint32_t kMaxIds = 1024;
uint32_t g_name_ids[kMaxIds];
bool g_registered[kMaxIds];
uint32_t g_category = 0;
char g_marker;  // the non-null argument that tells HIP's EXIT call from its ENTER call

constexpr int kDepth = 8;
struct Frame {
  // Raw storage: hip_api_data_t's argument union holds dim3s, so it has no default constructor.
  alignas(hip_api_data_t) unsigned char raw[sizeof(hip_api_data_t)];
  uint64_t corr, start;
  hip_api_data_t* data() { return reinterpret_cast<hip_api_data_t*>(raw); }
};
thread_local Frame t_frames[kDepth];
thread_local int t_depth = 0;

int find_hip(dl_phdr_info* info, size_t, void*) {
  const char* name = info->dlpi_name;
  void* h = dlopen(name && *name ? name : nullptr, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return 0;
  auto reg = reinterpret_cast<RegisterFn>(dlsym(h, "hipRegisterApiCallback"));
  if (reg == nullptr) {
    dlclose(h);
    return 0;
  }
  g_hip.register_api = reg;
  g_hip.register_activity = reinterpret_cast<RegisterFn>(dlsym(h, "hipRegisterActivityCallback"));
  g_hip.remove_api = reinterpret_cast<RemoveFn>(dlsym(h, "hipRemoveApiCallback"));
  g_hip.remove_activity = reinterpret_cast<RemoveFn>(dlsym(h, "hipRemoveActivityCallback"));
  g_hip.api_name = reinterpret_cast<NameFn>(dlsym(h, "hipApiName"));
  Dl_info where{};
  g_hip.path = dladdr(reinterpret_cast<void*>(reg), &where) != 0 && where.dli_fname
                   ? where.dli_fname
                   : (name && *name ? name : "the program");
  return 1;  // the handle stays open: HIP calls back into us until the process ends
}

// HIP's activity callback: hands out the call's data (ENTER) and takes it back (EXIT).
void* on_activity(uint32_t, void*, const void*, void* arg) {
  if (arg == nullptr) {  // ENTER
    CaptureContext* c = g_ctx.load(std::memory_order_acquire);
    if (!g_on.hip_api.load(std::memory_order_relaxed) || c == nullptr || c->paused() ||
        t_depth >= kDepth)
      return nullptr;  // HIP then skips this call's callbacks
    Frame& f = t_frames[t_depth++];
    f.corr = next_correlation();
    f.data()->correlation_id = f.corr;
    f.data()->phase = 0;  // ACTIVITY_API_PHASE_ENTER
    f.start = now_ns();
    return f.data();
  }
  if (t_depth > 0) --t_depth;  // EXIT
  return nullptr;
}

// HIP's API callback: ENTER after the arguments are filled in, EXIT after the call.
void on_api(uint32_t, uint32_t cid, const void* data, void*) {
  const auto* d = static_cast<const hip_api_data_t*>(data);
  if (d == nullptr || t_depth == 0) return;
  Frame& f = t_frames[t_depth - 1];
  if (d->phase == 0) {
    f.start = now_ns();
    return;
  }
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) return;
  Record r =
      make_record(RecordKind::kRegion, f.start, now_ns(), os_tid(), g_category, d->correlation_id);
  r.name_id = cid < kMaxIds ? g_name_ids[cid] : 0;
  if (g_on.region.load(std::memory_order_relaxed))
    r.region.region_name_id = markers::current_range(&r.region.range_corr);
  c->emit(r);
}

}  // namespace

uint64_t current_hip_correlation() noexcept { return t_depth > 0 ? t_frames[t_depth - 1].corr : 0; }

bool hip_available(std::string* where) {
  if (!g_hip_found) {
    dl_iterate_phdr(find_hip, nullptr);
    g_hip_found = g_hip.register_api != nullptr && g_hip.register_activity != nullptr;
  }
  if (g_hip_found) {
    *where = g_hip.path;
    return true;
  }
  *where =
      "no loaded library exports hipRegisterApiCallback/hipRegisterActivityCallback (HIP "
      "of ROCm < 6 has them; ROCm >= 6 HIP is traced through rocprofiler-sdk, not compiled in)";
  return false;
}

bool hip_start(CaptureContext& c, std::string* why) {
  std::string where;
  if (!hip_available(&where)) {
    *why = where;
    return false;
  }
  g_category = c.intern("HIP_RUNTIME_API_EXT");
  uint32_t registered = 0;
  for (uint32_t id = HIP_API_ID_FIRST; id < kMaxIds; ++id) {
    const char* name = g_hip.api_name ? g_hip.api_name(id) : nullptr;
    if (name == nullptr || *name == '\0' || std::strcmp(name, "unknown") == 0)
      name = id <= HIP_API_ID_LAST ? hip_api_name(id) : nullptr;
    if (name == nullptr) continue;
    g_name_ids[id] = c.intern(name);
    g_registered[id] =
        g_hip.register_activity(id, reinterpret_cast<void*>(&on_activity), &g_marker) ==
            hipSuccess &&
        g_hip.register_api(id, reinterpret_cast<void*>(&on_api), &g_marker) == hipSuccess;
    registered += g_registered[id];
  }
  if (registered == 0) {
    *why = "HIP (" + where + ") accepted no API callback";
    return false;
  }
  g_on.hip_api.store(true, std::memory_order_release);
  c.info(MetadataInfo{"rocprof.hsa.hip_library", where});
  c.info(MetadataInfo{"rocprof.hsa.hip_api_callbacks", std::to_string(registered)});
  return true;
}

void hip_stop() {
  g_on.hip_api.store(false, std::memory_order_release);
  if (!g_hip_found) return;
  for (uint32_t id = 0; id < kMaxIds; ++id) {
    if (!g_registered[id]) continue;
    if (g_hip.remove_api) (void)g_hip.remove_api(id);
    if (g_hip.remove_activity) (void)g_hip.remove_activity(id);
    g_registered[id] = false;
  }
}

#else  // HIP headers absent at build time

uint64_t current_hip_correlation() noexcept { return 0; }
bool hip_available(std::string* where) {
  *where = "HIP API tracing not compiled (HIP headers absent at build time)";
  return false;
}
bool hip_start(CaptureContext&, std::string* why) { return hip_available(why); }
void hip_stop() {}

#endif

}  // namespace rocprof::hsa
