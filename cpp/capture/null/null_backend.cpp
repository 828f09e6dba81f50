// The null backend: records nothing. It shows the whole of what a backend is (the capture
// context's Backend interface, a static registrar, the activities it serves: none) and lets
// tests see the session start and stop a registered backend. Loaded with rocprof._core_testing.
#include <pybind11/pybind11.h>

#include <atomic>
#include <string>

#include "bindings/registry.hpp"
#include "capture/context.hpp"

namespace {

std::atomic<int> g_starts{0}, g_stops{0};

class NullBackend final : public rocprof::Backend {
 public:
  const char* name() const override { return "null"; }
  bool start(rocprof::CaptureContext&, const rocprof::CaptureSettings&, std::string*) override {
    g_starts.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void stop(rocprof::CaptureContext&) override { g_stops.fetch_add(1, std::memory_order_relaxed); }
  void probe(bool* live, std::string* reason) override {
    *live = true;
    reason->clear();
  }
};

struct Registrar {
  Registrar() {
    static NullBackend backend;
    rocprof::capture::register_backend(&backend);
  }
} g_registrar;

void bind(pybind11::module_& m) {
  m.def(
      "_null_backend_calls", [] { return pybind11::make_tuple(g_starts.load(), g_stops.load()); },
      "(starts, stops) of the null backend in this process");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
