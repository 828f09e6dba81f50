// rocprof._core.metrics_sources(): the device-metrics sources of this build and whether each
// can run here (rocprof info), without starting a session.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/registry.hpp"
#include "capture/metrics/source.hpp"

namespace py = pybind11;

namespace {

void bind(py::module_& m) {
  m.def(
      "metrics_sources",
      []() {
        py::list out;
        for (const auto& s : rocprof::metrics::source_statuses())
          out.append(py::make_tuple(s.name, s.compiled, s.live, s.detail));
        return out;
      },
      "[(name, compiled, live, detail)] for NVML, AMD SMI, ROCm SMI and /proc");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
