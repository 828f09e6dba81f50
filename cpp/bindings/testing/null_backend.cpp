// rocprof._core_testing._null_backend_calls: the null backend's counts (capture/null/), so a
// test sees a session start and stop a registered backend.
#include <pybind11/pybind11.h>

#include "bindings/registry.hpp"
#include "capture/null/null_backend.hpp"

namespace {

void bind(pybind11::module_& m) {
  m.def(
      "_null_backend_calls",
      [] {
        const rocprof::null_backend::Calls c = rocprof::null_backend::calls();
        return pybind11::make_tuple(c.starts, c.stops);
      },
      "(starts, stops) of the null backend in this process");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
