// The launch-site services for rocprof._torch_observer (capture/python/launch_site_api.h), handed
// over as a capsule, and what this build knows of that observer (rocprof info).
#include <string>

#include "bindings/registry.hpp"
#include "capture/context.hpp"
#include "capture/python/launch_site_api.h"
#include "capture/python/launch_sites.hpp"
#include "capture/python/torch_memory.hpp"

// Set by cpp/capture/torch/CMakeLists.txt on this file only: the torch the observer was built
// against, or why it was not built.
#ifndef ROCPROF_TORCH_OBSERVER_TORCH
#define ROCPROF_TORCH_OBSERVER_TORCH ""
#endif
#ifndef ROCPROF_TORCH_OBSERVER_REASON
#define ROCPROF_TORCH_OBSERVER_REASON "not configured"
#endif
// Likewise its caching-allocator hook: "" when built in, else why not.
#ifndef ROCPROF_TORCH_ALLOCATOR_REASON
#define ROCPROF_TORCH_ALLOCATOR_REASON "no torch observer in this build"
#endif

namespace py = pybind11;
namespace ls = rocprof::launch_sites;
namespace tmem = rocprof::torch_memory;

const char* rocprof::torch_memory::build_reason() { return ROCPROF_TORCH_ALLOCATOR_REASON; }

namespace {

uint64_t capture_forward(const char* op) { return ls::capture_forward(op); }
uint64_t set_thread_site(uint64_t key) { return ls::set_thread_site(key); }
uint64_t frameless_site() { return ls::frameless_site(); }
void set_listener(const rp_launch_site_listener* l) { ls::set_listener(l); }
void memory_event(const rp_alloc_event* e) { tmem::event(e); }
void set_memory_listener(void (*on)(void)) { tmem::set_listener(on); }
void memory_source(const char* source) { tmem::set_source(source); }

const rp_launch_site_api g_api{ROCPROF_LAUNCH_SITE_API_VERSION,
                               &capture_forward,
                               &set_thread_site,
                               &frameless_site,
                               &set_listener,
                               &memory_event,
                               &set_memory_listener,
                               &memory_source};

uint32_t resolve_site(uint64_t key, bool wait, bool* pending) {
  if (!wait) return ls::peek(key, pending);
  const uint32_t id = ls::resolve(key);
  bool late = false;
  if (id == 0) ls::peek(key, &late);
  if (late) tmem::count_unattributed();  // not "no user frame": not resolved in time
  return id;
}

void bind(py::module_& m) {
  // The drain names the allocator's actions' lines (kFlagSiteKey records) through this.
  rocprof::capture::set_site_resolver(&resolve_site);
  m.def(
      "_launch_site_api",
      [] { return py::capsule(static_cast<const void*>(&g_api), ROCPROF_LAUNCH_SITE_API_NAME); },
      "internal: the launch-site services for rocprof._torch_observer (a capsule)");
  m.def(
      "torch_observer_build",
      [] {
        py::dict d;
        d["torch"] = std::string(ROCPROF_TORCH_OBSERVER_TORCH);
        d["reason"] = std::string(ROCPROF_TORCH_OBSERVER_REASON);
        d["allocator"] = std::string(ROCPROF_TORCH_ALLOCATOR_REASON);
        return d;
      },
      "the torch version rocprof._torch_observer was built against ('' when not built), why "
      "not, and why it has no caching-allocator hook ('allocator': '' when it has one)");
  m.def(
      "_torch_memory_counts",
      [] {
        const tmem::Counts c = tmem::counts();
        py::dict d;
        d["stored"] = c.stored;
        d["dropped"] = c.dropped;
        d["unattributed"] = c.unattributed;
        d["on"] = c.on;
        return d;
      },
      "internal (tests): the caching allocator's actions stored and dropped in this session");
  m.def("_launch_site_thread_site_uses", &ls::thread_site_uses,
        "launches that took their thread's forward-op site (the torch observer)");
  m.def("_launch_site_forward", &capture_forward, py::arg("op"),
        "internal (tests, benchmarks): the observer's capture_forward on the caller's frames");
  // Tests: the site JSON of a key from the observer's debug log ('' when it names none).
  m.def(
      "_launch_site_json",
      [](uint64_t key) {
        uint32_t id = 0;
        {
          py::gil_scoped_release nogil;
          id = ls::resolve(key);
        }
        if (id == 0 && key != 0) id = ls::resolve(key);  // resolves inline under the GIL
        return ls::site_json(id);
      },
      py::arg("key"), "internal (tests): the call-site JSON of a launch-site key");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
