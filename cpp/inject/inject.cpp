// librocprof_inject.so: GPU tracing of CUDA programs with no code change, as `nsys profile
// ./app` does. `rocprof run -- CMD` sets CUDA_INJECTION64_PATH to this library; the CUDA
// driver opens it inside the program's first cuInit and calls InitializeInjection, where the
// session starts (its CUPTI backend subscribes there, before any kernel can launch). A
// process whose session already runs (a profiled Python process, a program linked with
// libroctx64) is left as it is.
#include "session/session.hpp"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  rocprof::session::autostart();
  return 1;  // the driver treats 0 as a failed injection and says so; ours never blocks CUDA
}
