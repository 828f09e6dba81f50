// Backends that need Python-facing functions beyond session control put them in
// bindings/<backend>.cpp and register a function here; module.cpp calls each once.
#pragma once
#include <pybind11/pybind11.h>

#include <initializer_list>
#include <string>
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

// A part only tests and fixtures use, bound when one of its names is first looked up (the
// module's __getattr__, module.cpp): every profiled process, each followed child too, imports
// rocprof._core before its program, and binding such a part cost each of them its share.
struct Deferred {
  std::vector<std::string> names;  // every attribute fn adds to the module
  BindFn fn;
  bool bound = false;
};

inline std::vector<Deferred>& deferred() {
  static std::vector<Deferred> parts;
  return parts;
}

struct RegisterDeferred {
  RegisterDeferred(std::initializer_list<const char*> names, BindFn fn) {
    deferred().push_back(Deferred{std::vector<std::string>(names.begin(), names.end()), fn});
  }
};

}  // namespace rocprof::bindings
