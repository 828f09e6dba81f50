// Benchmark-only bindings for B1 (benchmarks/b1_roctx.py and its regression guard): the native
// share of a recorded `with roctx.range(...)`, so the figure can be split into Python's `with`
// machinery, the native push/pop (stack, record into the ring, two stamps) and a clock read.
// They live in the test module (rocprof._core_testing), so that nothing shipped carries
// benchmark code.
//
// And a stand-in for torch.cuda.nvtx on a machine without CUDA (B1's yardstick is its push+pop):
// torch binds nvtxRangePushA / nvtxRangePop with pybind11 (torch._C._nvtx) behind one Python
// function each, and with no tool attached NVTX calls through a null function pointer and
// returns. The stand-in has the same three parts: a pybind11 function taking `const char*`, a
// load and test of a null function pointer, and (in the benchmark) the Python wrapper.
#include <stdexcept>
#include <string>

#include "bindings/registry.hpp"
#include "capture/markers/markers.hpp"
#include "rocprof/clock.hpp"
#include "session/session.hpp"

namespace py = pybind11;

namespace {

using namespace rocprof;

// ns for n push/pop pairs of one interned name on this thread, in C (no Python between them).
uint64_t native_ranges(uint64_t n, const std::string& name) {
  if (session::current() == nullptr) throw std::runtime_error("no session");
  py::gil_scoped_release nogil;
  const uint32_t id = markers::intern(name);
  const uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < n; ++i) {
    markers::push_id(id);
    markers::pop();
  }
  return now_ns() - t0;
}

// ns for n reads of the records' clock (CLOCK_BOOTTIME, as every record but ROCTx's where
// tsc_stamps()).
uint64_t clock_reads(uint64_t n) {
  py::gil_scoped_release nogil;
  uint64_t sink = 0;
  const uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < n; ++i) sink += now_ns();
  const uint64_t t1 = now_ns();
  return sink != 0 ? t1 - t0 : t1 - t0 + 1;  // uses sink so the loop is not optimised away
}

// NVTX's injection points once it has found no tool: null, read on every call.
int (*volatile g_nvtx_push)(const char*) = nullptr;
int (*volatile g_nvtx_pop)() = nullptr;
constexpr int kNvtxNoPushPopTracking = -2;  // what NVTX returns without a tool

int nvtx_stand_in_push(const char* message) {
  auto fn = g_nvtx_push;
  return fn != nullptr ? fn(message) : kNvtxNoPushPopTracking;
}

int nvtx_stand_in_pop() {
  auto fn = g_nvtx_pop;
  return fn != nullptr ? fn() : kNvtxNoPushPopTracking;
}

void bind(py::module_& m) {
  m.def("_bench_native_ranges", &native_ranges, py::arg("n"), py::arg("name") = "x",
        "benchmark B1 only: ns for n ROCTx push/pop pairs made in C");
  m.def("_bench_clock_reads", &clock_reads, py::arg("n"),
        "benchmark B1 only: ns for n reads of the record clock");
  m.def("_nvtx_stand_in_push", &nvtx_stand_in_push,
        "benchmark B1 only: torch._C._nvtx.rangePushA's shape with no NVTX tool attached");
  m.def("_nvtx_stand_in_pop", &nvtx_stand_in_pop,
        "benchmark B1 only: torch._C._nvtx.rangePop's shape with no NVTX tool attached");
  m.def("_tsc_stamps", &tsc_stamps,
        "whether ROCTx stamps are the CPU's counter (mapped to CLOCK_BOOTTIME by the writer)");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
