// libroctx64.so: ROCm's ROCTx C ABI over rocprof's marker capture. The library links the
// shared core (librocprof_core.so), so a program annotated with roctx and run inside a
// rocprof session — Python loading it with ctypes, or a native program started with
// ROCPROF_AUTOSTART_OUTPUT — records into that session.
#include "roctx.h"

#include <cstdint>
#include <cstring>
#include <string_view>

#include "capture/markers/markers.hpp"
#include "rocprof/record.hpp"
#include "session/session.hpp"

namespace m = rocprof::markers;

namespace {
std::string_view view(const char* s) { return s ? std::string_view(s) : std::string_view(); }
}  // namespace

extern "C" {

__attribute__((visibility("default"))) uint32_t roctx_version_major(void) { return 4; }
__attribute__((visibility("default"))) uint32_t roctx_version_minor(void) { return 1; }

__attribute__((visibility("default"))) void roctxMarkA(const char* message) {
  m::mark(view(message));
}

__attribute__((visibility("default"))) int roctxRangePushA(const char* message) {
  return m::push(view(message));
}

__attribute__((visibility("default"))) int roctxRangePop(void) { return m::pop(); }

__attribute__((visibility("default"))) roctx_range_id_t roctxRangeStartA(const char* message) {
  return m::start(view(message));
}

__attribute__((visibility("default"))) void roctxRangeStop(roctx_range_id_t id) { m::stop(id); }

// ROCm pauses collection process-wide; the thread argument is accepted for ABI compatibility.
__attribute__((visibility("default"))) int roctxProfilerPause(roctx_thread_id_t) {
  m::pause();
  return 0;
}

__attribute__((visibility("default"))) int roctxProfilerResume(roctx_thread_id_t) {
  m::resume();
  return 0;
}

__attribute__((visibility("default"))) int roctxNameOsThread(const char* name) {
  m::name_thread(view(name));
  return 0;
}

// ROCm passes the agent and stream by pointer: hsa_agent_t is a struct holding a 64-bit
// handle, a HIP stream is an opaque pointer; both are stored by their value.
__attribute__((visibility("default"))) int roctxNameHsaAgent(const char* name,
                                                             const struct hsa_agent_s* agent) {
  if (name == nullptr || agent == nullptr) return -1;
  uint64_t handle = 0;
  std::memcpy(&handle, agent, sizeof handle);
  m::name_object(rocprof::kNameHsaAgent, handle, view(name));
  return 0;
}

__attribute__((visibility("default"))) int roctxNameHipDevice(const char* name, int device_id) {
  if (name == nullptr || device_id < 0) return -1;
  m::name_object(rocprof::kNameHipDevice, static_cast<uint64_t>(device_id), view(name));
  return 0;
}

__attribute__((visibility("default"))) int roctxNameHipStream(const char* name,
                                                              const struct ihipStream_t* stream) {
  if (name == nullptr) return -1;
  m::name_object(rocprof::kNameHipStream, reinterpret_cast<uintptr_t>(stream), view(name));
  return 0;
}

__attribute__((visibility("default"))) int roctxGetThreadId(roctx_thread_id_t* tid) {
  if (tid == nullptr) return -1;
  *tid = m::thread_id();
  return 0;
}

}  // extern "C"

namespace {
// A native program started by `rocprof run -- CMD` (or with ROCPROF_AUTOSTART_OUTPUT set by
// hand) records from the moment this library loads, whether it was linked (-lroctx64) or
// opened by name (dlopen("libroctx64.so"), Julia's @ccall "libroctx64").
__attribute__((constructor)) void roctx_autostart() { rocprof::session::autostart(); }
}  // namespace
