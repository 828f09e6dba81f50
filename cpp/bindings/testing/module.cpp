// rocprof._core_testing: benchmark bindings and test-only backends, built with the tests
// (ROCPROF_BUILD_TESTS) and never shipped, so the installed rocprof._core carries none of them.
// Each file of this folder registers its functions (bindings/registry.hpp); this one defines the
// module and the B4 load generator.
#include <pybind11/pybind11.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "bindings/registry.hpp"
#include "capture/markers/markers.hpp"
#include "rocprof/record.hpp"
#include "session/session.hpp"

namespace py = pybind11;
namespace m = rocprof::markers;
namespace s = rocprof::session;

namespace {

// Synthetic load for benchmark B4: `n` ROCTx-shaped regions from the calling thread.
// wait=true: when the buffer budget is spent the producer waits for the drain instead of
// dropping, so the figure is the sink's sustained rate; returns how many times it waited.
// wait=false: an application's burst (B4 burst), drops counted as usual; returns 0.
uint64_t bench_emit(uint64_t n, const std::string& name, bool wait) {
  py::gil_scoped_release nogil;
  rocprof::Collector* c = s::current();
  if (c == nullptr) throw std::runtime_error("no session");
  rocprof::Record r{};
  r.kind = rocprof::RecordKind::kRegion;
  r.flags = rocprof::kFlagMessage;
  r.tid = m::thread_id();
  r.category_id = s::category_id(m::kCategory);
  r.name_id = m::intern(name);
  uint64_t waits = 0;
  rocprof::ThreadBuffer* b = c->thread_buffer();
  for (uint64_t i = 0; i < n; ++i) {
    r.start = 1000 + 2 * i;
    r.end = r.start + 1;
    if (!wait) {
      b->ring.push(r);
      continue;
    }
    while (!b->ring.try_push(r)) {
      // Sleep rather than spin: a spinning producer can share a physical core (SMT sibling)
      // with the drain thread and slow the very writer being measured.
      ++waits;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  return waits;
}

}  // namespace

PYBIND11_MODULE(_core_testing, mod) {
  mod.doc() = "rocprof test and benchmark hooks (built with the tests, never shipped)";
  py::module_::import("rocprof._core");  // the session these functions drive lives there
  for (rocprof::bindings::BindFn fn : rocprof::bindings::registered()) fn(mod);
  mod.def("_bench_emit", &bench_emit, py::arg("n"), py::arg("name") = "bench",
          py::arg("wait") = true);
}
