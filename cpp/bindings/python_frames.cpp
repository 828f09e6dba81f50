// Test hooks of the Python-frames module (capture/python/): the one fault guard, exercised the
// way its users walk — on the calling thread with the GIL released (a GPU launch) or inside a
// signal handler (a sampler tick) — from a deliberately bad frame pointer.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "bindings/registry.hpp"
#include "capture/python/guard.hpp"

namespace py = pybind11;

namespace {

const void* volatile g_first = nullptr;
volatile int g_result = 0;

void walk_in_handler(int, siginfo_t*, void*) {
  uint64_t out[8 * 3];
  g_result = rocprof::python::walk(out, 8, g_first);
}

// A frame pointer whose first read faults: an inaccessible page (SIGSEGV) or a shared mapping
// past the end of an empty file (SIGBUS).
void* bad_frame(const std::string& kind, int* fd) {
  *fd = -1;
  void* p = MAP_FAILED;
  if (kind == "segv") {
    p = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  } else if (kind == "bus") {
    *fd = memfd_create("rocprof-guard-test", 0);
    if (*fd >= 0) p = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, *fd, 0);
  } else {
    throw std::invalid_argument("kind must be 'segv' or 'bus'");
  }
  if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
  return p;
}

int walk_bad(const std::string& kind, bool in_signal) {
  if (!rocprof::python::guard_installed())
    throw std::runtime_error("the fault guard is not installed (start a user of it first)");
  int fd = -1;
  void* p = bad_frame(kind, &fd);
  int result = 0;
  {
    py::gil_scoped_release nogil;
    if (in_signal) {
      const int sig = SIGRTMIN + 5;
      struct sigaction sa{}, old{};
      sa.sa_sigaction = walk_in_handler;
      sa.sa_flags = SA_SIGINFO;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, &old);
      g_first = p;
      g_result = 1;
      raise(sig);  // delivered to this thread before raise returns
      result = g_result;
      sigaction(sig, &old, nullptr);
    } else {
      uint64_t out[8 * 3];
      result = rocprof::python::walk(out, 8, p);
    }
  }
  munmap(p, 4096);
  if (fd >= 0) close(fd);
  return result;
}

void bind(py::module_& m) {
  m.def("_pyframes_guard_installed", &rocprof::python::guard_installed,
        "internal (tests): whether the frame walks' SIGSEGV/SIGBUS guard is installed");
  m.def("_pyframes_walk_bad", &walk_bad, py::arg("kind"), py::arg("in_signal") = false,
        "internal (tests): walks a frame pointer that faults ('segv' or 'bus'), on this thread "
        "with the GIL released or inside a signal handler; returns the walk's result "
        "(-2: the fault was caught)");
  m.attr("_PYFRAMES_WALK_FAULT") = rocprof::python::kWalkFault;
}

rocprof::bindings::Register g_register(bind);

}  // namespace
