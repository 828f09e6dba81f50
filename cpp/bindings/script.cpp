// What `rocprof run script.py` needs of CPython to run the script as runpy.run_path does
// (cli/target.py): its code compiled as the builtin compile(source, path, "exec",
// dont_inherit=True) compiles bytes, less compile()'s first step, a check whether the source
// is an AST object. That check builds the ast module's ~100 types on first use (9 M
// instructions, more than reading and compiling a script), which plain `python script.py`
// never does.
#include <pybind11/pybind11.h>

#include <cstring>

#include "bindings/registry.hpp"

namespace {
namespace py = pybind11;

py::object compile_script(const py::bytes& source, const py::str& filename) {
  char* text = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(source.ptr(), &text, &size) != 0) throw py::error_already_set();
  if (std::strlen(text) != static_cast<size_t>(size))
    throw py::value_error("source code string cannot contain null bytes");
  // compile()'s flags for bytes: none of the caller's (dont_inherit), this Python's grammar.
  PyCompilerFlags flags;
  flags.cf_flags = PyCF_SOURCE_IS_UTF8;
  flags.cf_feature_version = PY_MINOR_VERSION;
  PyObject* code = Py_CompileStringObject(text, filename.ptr(), Py_file_input, &flags, -1);
  if (code == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(code);
}

void bind(py::module_& m) {
  m.def("compile_script", &compile_script, py::arg("source"), py::arg("filename"),
        "compile(source, filename, 'exec', dont_inherit=True) of a script's bytes, without "
        "compile()'s AST check (whose first use builds the ast module's types)");
}
rocprof::bindings::Register r(bind);
}  // namespace
