// rocprof._core.redact_argv / redact_text: the writer's redaction rules (storage/redact.hpp)
// for Python code that puts recorded facts anywhere else (output names built from argv).
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings/registry.hpp"
#include "storage/redact.hpp"

namespace py = pybind11;

namespace {

void bind(py::module_& m) {
  m.def(
      "redact_argv",
      [](std::vector<std::string> words) {
        rocprof::redact::argv(words);
        return words;
      },
      py::arg("argv"),
      "argv with secrets cut as the database stores the command line (--password X, "
      "--token=X, URL credentials, tokens)");
  m.def(
      "redact_text",
      [](const std::string& text) {
        std::string out;
        return rocprof::redact::text(text, &out) != 0 ? out : text;
      },
      py::arg("text"), "text with URL credentials and tokens cut, as recorded text is stored");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
