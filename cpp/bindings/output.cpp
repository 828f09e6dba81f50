// Python-facing output paths and run manifest (session/output_path.hpp, run_manifest.hpp): the
// launcher, children and exit report use these, so every process names its files one way.
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bindings/registry.hpp"
#include "session/output_path.hpp"
#include "session/run_manifest.hpp"
#include "session/session.hpp"

namespace {
namespace py = pybind11;
namespace out = rocprof::session::output;
namespace manifest = rocprof::session::manifest;

void bind(py::module_& m) {
  m.attr("DATABASE_SUFFIX") = out::kDatabaseSuffix;
  m.attr("DEFAULT_OUTPUT_DIR") = out::kDefaultDir;
  m.attr("DEFAULT_OUTPUT_NAME") = out::kDefaultName;
  m.attr("LAUNCH_TIME_VAR") = out::kLaunchTimeVar;
  m.attr("RANK_VARIABLES") = py::tuple(py::cast(out::rank_variables()));
  m.def("rank", &out::rank,
        "this process's global rank (the first rank variable holding a number), else '0'");
  m.def("ranked", &out::ranked, "whether a rank variable holds a number");
  m.def("database_template", &out::database_template, py::arg("dir") = "", py::arg("name") = "",
        "<dir>/<name>_results.db (defaults for empty parts), placeholders left in");
  m.def("per_process_name", &out::per_process_name, py::arg("name") = "",
        "the name template with _%pid% added unless it names the pid already");
  m.def(
      "expand_path",
      [](const std::string& tmpl, const std::vector<std::string>& argv) {
        std::string path, error;
        if (!out::expand(tmpl, argv, &path, &error)) throw py::value_error(error);
        return path;
      },
      py::arg("template"), py::arg("argv") = std::vector<std::string>{},
      "every placeholder expanded for this process; ValueError names a bad one");
  m.def(
      "check_output",
      [](const std::string& path, bool strict) {
        std::string error;
        return out::check_creatable(path, strict, &error) ? std::string() : error;
      },
      py::arg("path"), py::arg("strict") = false,
      "'' when `path` could be created (nothing is created), else why not");
  m.def("output_prefix", &out::prefix_of, py::arg("db_path"),
        "the database path less _results.db: what outputs beside it start with");
  m.def("is_run_launcher", &manifest::is_launcher,
        "whether this process reports the run's databases when it ends (its launcher, or an "
        "image the launcher exec()ed)");
  m.def("run_databases", &manifest::databases, py::arg("manifest"),
        "the databases a run manifest lists, in order");
  m.def(
      "run_outcomes",
      [](const std::string& path) {
        py::list out;
        for (const auto& o : manifest::outcomes(path))
          out.append(py::make_tuple(o.path, o.readable, o.line));
        return out;
      },
      py::arg("manifest"),
      "(path, readable, line) per database of the run, computed from what is on disk");
  m.def("before_exec", &rocprof::session::before_exec, py::call_guard<py::gil_scoped_release>(),
        "close the database before exec*() (the new image starts its own)");
  m.def("after_failed_exec", &rocprof::session::after_failed_exec,
        py::call_guard<py::gil_scoped_release>(), "exec*() failed: record on, into a new database");
}
rocprof::bindings::Register r(bind);
}  // namespace
