// The JSON text of the launcher's options and notes (options.py, children.py, session.py):
// what json.dumps(value, sort_keys=True) writes, byte for byte, for the values options hold
// (None, bool, int, float, str, list, tuple, dict with str keys). Importing json before the
// profiled program starts loads re and enum with it, about 40 % of `rocprof run`'s own
// start-up, which plain `python script.py` never pays.
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "bindings/registry.hpp"

namespace {
namespace py = pybind11;

constexpr int kMaxDepth = 200;  // options nest two levels; json.dumps itself stops at recursion

// json's ensure_ascii escaping: the short forms, then \uXXXX for every other character outside
// ' '..'~' (a pair of surrogates above the BMP; lone surrogates as themselves).
void write_string(std::string& out, PyObject* s) {
  const int kind = PyUnicode_KIND(s);
  const void* data = PyUnicode_DATA(s);
  const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  out.push_back('"');
  char buf[16];
  for (Py_ssize_t i = 0; i < n; ++i) {
    const Py_UCS4 c = PyUnicode_READ(kind, data, i);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (c >= ' ' && c <= '~') {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      const Py_UCS4 v = c - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800u | ((v >> 10) & 0x3ffu),
                    0xdc00u | (v & 0x3ffu));
      out += buf;
    }
  }
  out.push_back('"');
}

void append_repr(std::string& out, PyObject* o) {
  py::str text = py::reinterpret_steal<py::str>(PyObject_Repr(o));
  if (!text) throw py::error_already_set();
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (utf8 == nullptr) throw py::error_already_set();
  out.append(utf8, static_cast<size_t>(size));
}

[[noreturn]] void not_serializable(PyObject* o) {
  throw py::type_error(std::string("Object of type ") + Py_TYPE(o)->tp_name +
                       " is not JSON serializable");
}

void write_value(std::string& out, PyObject* o, int depth);

void write_dict(std::string& out, PyObject* d, int depth) {
  py::list keys = py::reinterpret_steal<py::list>(PyDict_Keys(d));
  if (!keys) throw py::error_already_set();
  for (py::handle k : keys)
    if (!PyUnicode_Check(k.ptr()))
      throw py::type_error("json_text: dict keys must be str, not " +
                           std::string(Py_TYPE(k.ptr())->tp_name));
  if (PyList_Sort(keys.ptr()) != 0) throw py::error_already_set();
  out.push_back('{');
  bool first = true;
  for (py::handle k : keys) {
    if (!first) out += ", ";
    first = false;
    write_string(out, k.ptr());
    out += ": ";
    PyObject* v = PyDict_GetItemWithError(d, k.ptr());  // borrowed
    if (v == nullptr) throw py::error_already_set();
    write_value(out, v, depth + 1);
  }
  out.push_back('}');
}

void write_value(std::string& out, PyObject* o, int depth) {
  if (depth > kMaxDepth) throw py::value_error("json_text: nested too deeply");
  if (o == Py_None) {
    out += "null";
  } else if (o == Py_True) {
    out += "true";
  } else if (o == Py_False) {
    out += "false";
  } else if (PyUnicode_Check(o)) {
    write_string(out, o);
  } else if (PyLong_Check(o)) {  // int.__repr__, as json (an int subclass's own repr is not)
    py::str text = py::reinterpret_steal<py::str>(PyLong_Type.tp_repr(o));
    if (!text) throw py::error_already_set();
    out += PyUnicode_AsUTF8(text.ptr());
  } else if (PyFloat_Check(o)) {
    const double v = PyFloat_AS_DOUBLE(o);
    if (std::isnan(v)) {
      out += "NaN";
    } else if (std::isinf(v)) {
      out += v > 0 ? "Infinity" : "-Infinity";
    } else {
      py::float_ plain(v);  // float.__repr__ of the value, whatever a subclass's repr says
      append_repr(out, plain.ptr());
    }
  } else if (PyList_Check(o) || PyTuple_Check(o)) {
    py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(o, "json_text"));
    if (!seq) throw py::error_already_set();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
    out.push_back('[');
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (i) out += ", ";
      write_value(out, PySequence_Fast_GET_ITEM(seq.ptr(), i), depth + 1);
    }
    out.push_back(']');
  } else if (PyDict_Check(o)) {
    write_dict(out, o, depth);
  } else {
    not_serializable(o);
  }
}

py::str json_text(py::handle value) {
  std::string out;
  write_value(out, value.ptr(), 0);
  return py::str(out);
}

void bind(py::module_& m) {
  m.def("json_text", &json_text, py::arg("value"),
        "json.dumps(value, sort_keys=True) for None, bool, int, float, str, list, tuple and "
        "dicts with str keys (without importing json, re and enum)");
}
rocprof::bindings::Register r(bind);
}  // namespace
