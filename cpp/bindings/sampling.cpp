// Python-facing helpers of the sampling backend (capture/sampling/sampler.cpp).
#include <cstdint>
#include <tuple>

#include "bindings/registry.hpp"
#include "capture/sampling/native.hpp"

namespace rocprof::sampling {
void counters(uint64_t* taken, uint64_t* missed);
int register_current_thread();
int unregister_current_thread();
int resume_after_fork();
}  // namespace rocprof::sampling

namespace {
void bind(pybind11::module_& m) {
  m.def(
      "sampling_counters",
      [] {
        uint64_t taken = 0, missed = 0;
        rocprof::sampling::counters(&taken, &missed);
        return std::make_tuple(taken, missed);
      },
      "(samples taken, samples missed) by the running sampling session");
  m.def("sampling_register_thread", &rocprof::sampling::register_current_thread,
        "sample the calling thread from now on: 1 armed, 0 already sampled, -1 no sampling "
        "session (called by the thread-start hook of rocprof.capture.sampling)");
  m.def("sampling_unregister_thread", &rocprof::sampling::unregister_current_thread,
        "the calling thread's Python code has ended: --sampling-method thread stops reading "
        "its frames before its state is freed (1 when it was read; called by the same hook)");
  m.def("sampling_after_fork_child", &rocprof::sampling::resume_after_fork,
        "Python's after-fork hook in a child: starts the sampling the forked session deferred");
  m.def("sampling_native_available", &rocprof::sampling::native_available,
        "whether --native-stacks is compiled in (libunwind)");
  m.def("sampling_native_reason", &rocprof::sampling::native_unavailable_reason,
        "why --native-stacks is unavailable and what to install ('' when available)");
}
rocprof::bindings::Register r(bind);
}  // namespace
