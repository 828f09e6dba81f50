// librocprof_sdk.so: the library `rocprof run` names in ROCP_TOOL_LIBRARIES. rocprofiler-sdk
// loads it when the GPU runtime starts and calls rocprofiler_configure. A program with no
// session yet (a native HIP program) starts one here from the launcher's ROCPROF_AUTOSTART_*
// variables, as the HSA tool library does; the rest is the backend in librocprof_core
// (pc_sampling.cpp).
#include "capture/context.hpp"
#include "pc_sampling.hpp"

extern "C" __attribute__((visibility("default"))) rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* runtime_version, uint32_t priority,
                      rocprofiler_client_id_t* client) {
  rocprof::capture::start_session_on_load();
  return rocprof::sdk::configure(version, runtime_version, priority, client,
                                 __builtin_return_address(0));
}
