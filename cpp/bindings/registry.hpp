// Backends that need Python-facing functions beyond session control put them in
// bindings/<backend>.cpp and register a function here; module.cpp calls each once.
#pragma once
#include <pybind11/pybind11.h>

#include <vector>

namespace rocprof::bindings {

using BindFn = void (*)(pybind11::module_&);

inline std::vector<BindFn>& registered() {
  static std::vector<BindFn> fns;
  return fns;
}

struct Register {
  explicit Register(BindFn fn) { registered().push_back(fn); }
};

}  // namespace rocprof::bindings
