// librocprof_inject.so: GPU tracing of CUDA programs with no code change, as `nsys profile
// ./app` does. `rocprof run -- CMD` sets CUDA_INJECTION64_PATH to this library; the CUDA
// driver opens it inside the program's first cuInit and calls InitializeInjection, where the
// session starts (its CUPTI backend subscribes there, before any kernel can launch). A
// process whose session already runs (a profiled Python process, a program linked with
// libroctx64) is left as it is.
#include <cstdlib>

#include "session/session.hpp"

namespace {
// Registered after the session started, hence after libcupti was loaded: exit handlers run in
// reverse order, so the session flushes and unsubscribes before libcupti's own destructors
// and before the CUDA runtime's teardown (registered before cuInit) runs driver calls that
// would call back into a CUPTI already torn down. NVIDIA's injection samples do the same.
void stop_at_exit() { rocprof::session::stop(); }
}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  rocprof::session::autostart();
  // Also for a session that was already running: a program linked with libroctx64 starts its
  // own when the library loads, before libcupti, so that session's exit handler would run
  // after libcupti's teardown and its CUPTI calls there crash the program at exit. stop() is
  // idempotent: the later handlers find the session stopped.
  if (rocprof::session::current() != nullptr) std::atexit(stop_at_exit);
  return 1;  // the driver treats 0 as a failed injection and says so; ours never blocks CUDA
}
