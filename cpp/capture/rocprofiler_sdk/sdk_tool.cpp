// librocprof_sdk.so: the library `rocprof run` names in ROCP_TOOL_LIBRARIES. rocprofiler-sdk
// loads it when the GPU runtime starts and calls rocprofiler_configure. A program with no
// session yet (a native HIP program) starts one here from the launcher's ROCPROF_AUTOSTART_*
// variables, as the HSA tool library does; the rest is the backend in librocprof_core
// (pc_sampling.cpp).
#include <cstdlib>

#include "pc_sampling.hpp"
#include "session/session.hpp"

namespace {
void stop_at_exit() { rocprof::session::stop(); }
}  // namespace

extern "C" __attribute__((visibility("default"))) rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* runtime_version, uint32_t priority,
                      rocprofiler_client_id_t* client) {
  if (rocprof::session::current() == nullptr && rocprof::session::autostart())
    std::atexit(stop_at_exit);
  return rocprof::sdk::configure(version, runtime_version, priority, client,
                                 __builtin_return_address(0));
}
