// Python side of the AMD backend: the launch-site hooks of dispatches (same mechanism as
// bindings/cupti.cpp) and what this build compiled of the AMD paths (rocprof info).
#include "bindings/registry.hpp"

#ifdef ROCPROF_HAVE_HSA
#include <string>

#include "capture/hsa/callsite.hpp"

namespace py = pybind11;

namespace {

void bind(py::module_& m) {
  m.def("_hsa_set_callsite_prefixes", &rocprof::hsa::install_python_callsite_hooks,
        "internal: library path prefixes whose frames are not launch sites; installs the hooks");
  m.def(
      "hsa_build_summary", [] { return std::string(rocprof::hsa::build_summary()); },
      "what this build compiled of the AMD paths: '; '-separated 'path: state' items");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
#endif  // ROCPROF_HAVE_HSA
