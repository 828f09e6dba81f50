// rocprof._core.ReadOnlySampler: `rocprof attach PID --method read-only`
// (capture/sampling/read_only.hpp). Errors reach Python as OSError(errno, line) where the
// kernel refused something (rocprof.attach names the setting) and RuntimeError(line) else.
#include <pybind11/stl.h>

#include "bindings/registry.hpp"
#include "capture/sampling/read_only.hpp"

namespace py = pybind11;
using rocprof::sampling::ReadOnlySampler;

namespace {

void start(ReadOnlySampler& s, uint32_t pid, const std::string& output_template, uint32_t hz,
           bool wall, const std::string& options_json) {
  rocprof::sampling::ReadOnlyOptions o;
  o.pid = pid;
  o.output_template = output_template;
  o.hz = hz;
  o.wall = wall;
  o.options_json = options_json;
  std::string error;
  int err_no = 0;
  bool ok;
  {
    py::gil_scoped_release unlocked;
    ok = s.start(o, &error, &err_no);
  }
  if (ok) return;
  if (err_no != 0) {
    PyErr_SetObject(PyExc_OSError, py::make_tuple(err_no, error).ptr());
    throw py::error_already_set();
  }
  throw std::runtime_error(error);
}

py::dict stop(ReadOnlySampler& s) {
  rocprof::sampling::ReadOnlyResult r;
  {
    py::gil_scoped_release unlocked;
    r = s.stop();
  }
  py::dict d;
  d["path"] = r.path;
  d["taken"] = r.taken;
  d["missed"] = r.missed;
  d["threads"] = r.threads;
  d["target_ended"] = r.target_ended;
  return d;
}

void bind(py::module_& m) {
  py::class_<ReadOnlySampler>(m, "ReadOnlySampler",
                              "samples another process's Python stacks by reading its memory")
      .def(py::init<>())
      .def("start", &start, py::arg("pid"), py::arg("output_template"), py::arg("hz"),
           py::arg("wall"), py::arg("options_json") = "{}",
           "find pid's interpreter, create its database and start sampling")
      .def_property_readonly("running", &ReadOnlySampler::running,
                             "sampling (false once stopped or the process ended)")
      .def_property_readonly("layout", &ReadOnlySampler::layout,
                             "the target's Python and where its structure layout came from")
      .def("stop", &stop, "end sampling; {path, taken, missed, threads, target_ended}");
}
rocprof::bindings::Register r(bind);

}  // namespace
