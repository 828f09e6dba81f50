// The null backend: records nothing. It shows the whole of what a backend is (the capture
// context's Backend interface, its one registration line, the activities it serves: none) and
// lets tests see the session start and stop a registered backend. Loaded with
// rocprof._core_testing, whose bindings/testing/null_backend.cpp reads its counts.
#include "capture/null/null_backend.hpp"

#include <atomic>
#include <string>

#include "capture/context.hpp"

namespace rocprof::null_backend {
namespace {

std::atomic<int> g_starts{0}, g_stops{0};

class NullBackend final : public Backend {
 public:
  const char* name() const override { return "null"; }
  bool start(CaptureContext&, const CaptureSettings&, std::string*) override {
    g_starts.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void stop(CaptureContext&) override { g_stops.fetch_add(1, std::memory_order_relaxed); }
  void probe(bool* live, std::string* reason) override {
    *live = true;
    reason->clear();
  }
};

const capture::Registered<NullBackend> g_registered;

}  // namespace

Calls calls() noexcept { return {g_starts.load(), g_stops.load()}; }

}  // namespace rocprof::null_backend
