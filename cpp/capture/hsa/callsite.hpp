// The seam between the AMD backend and the Python side, free of vendor and Python headers (the
// same shape as capture/cupti/callsite.hpp): rocprof._core installs these hooks over the shared
// launch-sites module (capture/python/launch_sites.hpp; adapted in callsite_python.cpp,
// installed by cpp/bindings/hsa.cpp); librocprof_core never links libpython.
//  capture: in the queue-interception handler, on the submitting thread: the frame chain's key
//           and, when already resolved, its call site id. No Python API, locks or allocation.
//  resolve: on the backend's completion thread: the call site id of a key (may wait briefly).
//  stats: counters for the session's metadata (capture/launch_site_stats.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "capture/launch_site_stats.hpp"

namespace rocprof {
class CaptureContext;
}

namespace rocprof::hsa {

struct CallsiteHooks {
  uint64_t (*capture)(uint32_t* id) noexcept;
  uint32_t (*resolve)(uint64_t key);
  void (*start)(CaptureContext* ctx);
  void (*stop)();
  void (*stats)(uint64_t out[kLaunchSiteStats]);
};
void set_callsite_hooks(const CallsiteHooks* hooks) noexcept;
// Defined in rocprof._core only (callsite_python.cpp): library path prefixes ('\n'-separated)
// whose frames are never launch sites; then installs the hooks above.
void install_python_callsite_hooks(const std::string& library_prefixes);

// OnLoad's work (hsa_onload.cpp forwards the HSA tools interface's call here). Returns true:
// the tool stays loaded whether or not the table was accepted.
struct OnLoadArgs {
  void* table;  // HsaApiTable*
  uint64_t runtime_version, failed_tool_count;
  const char* const* failed_tool_names;
};
bool on_load(const OnLoadArgs& args);

// What this build holds and why (rocprof info, metadata): ';'-separated "path: state" items.
const char* build_summary() noexcept;

}  // namespace rocprof::hsa
