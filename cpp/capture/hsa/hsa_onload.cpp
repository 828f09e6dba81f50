// librocprof_hsa.so: the library `rocprof run` names in HSA_TOOLS_LIB. The HSA runtime opens it
// inside the program's first hsa_init and calls OnLoad with its API table. A program with no
// session yet (a native HIP program that never loads libroctx64) starts one here from the
// launcher's ROCPROF_AUTOSTART_* variables, as the CUDA injection library does; the table then
// goes to the backend in librocprof_core (capture/hsa/hsa_backend.cpp).
#include <cstdint>

#include "capture/context.hpp"
#include "capture/hsa/callsite.hpp"

extern "C" __attribute__((visibility("default"))) bool OnLoad(
    void* table, uint64_t runtime_version, uint64_t failed_tool_count,
    const char* const* failed_tool_names) {
  rocprof::capture::start_session_on_load();
  return rocprof::hsa::on_load({table, runtime_version, failed_tool_count, failed_tool_names});
}

// May never be called (ROCr does not always unload tools); the session ends at exit anyway.
extern "C" __attribute__((visibility("default"))) void OnUnload() {}
