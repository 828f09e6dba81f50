// Python half of GPU-launch attribution: installs the launch-site hooks
// (capture/python/launch_sites.hpp, adapted in capture/cupti/callsite_python.cpp) that the
// CUPTI backend calls through capture/cupti/callsite.hpp. The ENTER callback copies the
// launching thread's Python frames whether or not it holds the GIL (PyTorch releases it before
// launching); names and lines are resolved later under the GIL, and library frames
// (site-packages, the standard library, rocprof itself; the prefixes come from
// python/rocprof/capture/cupti.py) are skipped there.
#include "bindings/registry.hpp"

#ifdef ROCPROF_HAVE_CUPTI
#include <chrono>
#include <string>
#include <thread>

#include "capture/cupti/callsite_python.hpp"
#include "capture/context.hpp"
#include "capture/markers/markers.hpp"
#include "capture/python/launch_sites.hpp"
#include "session/session.hpp"

namespace py = pybind11;
namespace ls = rocprof::launch_sites;

namespace {

// Tests start launch sites without a session: strings are interned into the process's string
// table (what a session's context does too), nothing else is kept (launch_sites keeps each
// call site's JSON for site_json).
class StringsOnly final : public rocprof::CaptureContext {
 public:
  bool emit(const rocprof::Record&) noexcept override { return false; }
  void emit_waiting(const rocprof::Record&) override {}
  uint32_t intern(std::string_view s) override { return rocprof::session::strings().intern(s); }
  void info(rocprof::InfoRow) override {}
  void drops(const std::string&, uint64_t) override {}
  bool paused() const noexcept override { return false; }
  void flush() override {}
  void closed_at_exit(const rocprof::Record&) override {}
};

void bind(py::module_& m) {
  m.def("_cupti_set_callsite_prefixes", &rocprof::cupti::install_python_callsite_hooks,
        "internal: library path prefixes whose frames are not call sites; installs the hooks");
  // Tests: what the ENTER callback would record for the caller's stack, captured with the GIL
  // released (as inside a PyTorch launch), then resolved. Needs launch sites started.
  m.def(
      "_launch_site_here",
      []() {
        uint32_t id = 0;
        uint64_t key = 0;
        {
          py::gil_scoped_release nogil;
          key = ls::capture(&id);
          if (id == 0 && key != 0) id = ls::resolve(key);
        }
        if (id == 0 && key != 0) id = ls::resolve(key);  // resolves inline under the GIL
        return py::make_tuple(key, id, ls::site_json(id));
      },
      "internal (tests): (key, call-site id, its JSON) of the caller's frames");
  m.def(
      "_launch_site_lend",
      []() {
        uint32_t id = 0;
        uint64_t key = 0;
        {
          py::gil_scoped_release nogil;
          key = ls::capture(&id);  // the caller's chain, as a launch here would see it
        }
        return ls::borrow(key);
      },
      "lend the caller's Python frames to launches made on threads without Python frames "
      "(autograd's) until _launch_site_restore; returns the key lent before");
  m.def(
      "_launch_site_restore",
      [](uint64_t previous) {
        ls::borrow(previous);
        // The backward ops this thread ran itself (CPU ones) are over: its later frameless
        // launches are no longer theirs.
        ls::set_thread_site(0);
      },
      py::arg("previous"), "end a _launch_site_lend: lend `previous` again");
  m.def(
      "_launch_site_from_native_thread",
      []() {
        uint64_t key = 0;
        uint32_t id = 0;
        py::gil_scoped_release nogil;
        std::thread([&] { key = ls::capture(&id); }).join();
        return key;
      },
      "internal (tests): the key a launch on a thread with no Python frames gets");
  m.def("_launch_site_borrowed_uses", &ls::borrowed_uses, "launches that took a lent site");
  // benchmarks/gpu_launch_cost.py: the two parts of the ENTER callback that are ours and can
  // be timed without a GPU, on the caller's own stack and ROCTx state, GIL released as in a
  // PyTorch launch. Wall time is too noisy on shared hosts to see a few hundred ns per launch.
  m.def(
      "_hot_path_ns",
      [](uint64_t n) {
        using clock = std::chrono::steady_clock;
        uint64_t sink = 0;
        double capture_ns = 0, range_ns = 0;
        {
          py::gil_scoped_release nogil;
          uint32_t id = 0;
          auto t0 = clock::now();
          for (uint64_t i = 0; i < n; ++i) sink += ls::capture(&id) + id;
          auto t1 = clock::now();
          uint64_t corr = 0;
          for (uint64_t i = 0; i < n; ++i) sink += rocprof::markers::current_range(&corr) + corr;
          auto t2 = clock::now();
          capture_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
          range_ns = std::chrono::duration<double, std::nano>(t2 - t1).count() / n;
        }
        py::dict d;
        d["launch_site_ns"] = capture_ns;
        d["roctx_range_ns"] = range_ns;
        d["checksum"] = sink;  // keeps the loops from being optimised away
        return d;
      },
      py::arg("n"),
      "internal (benchmarks): ns per launch-site capture and per ROCTx range lookup here");
  m.def(
      "_launch_sites_start",
      [] {
        static StringsOnly strings_only;
        rocprof::CaptureContext* ctx = rocprof::session::context();
        ls::start(ctx != nullptr ? ctx : &strings_only);
      },
      "internal (tests)");
  m.def("_launch_sites_stop", &ls::stop, py::call_guard<py::gil_scoped_release>(),
        "internal (tests)");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
#endif  // ROCPROF_HAVE_CUPTI
