// rocprof._core's side of callsite.hpp: launch sites from capture/python/ for the CUPTI
// backend. Built into _core only (see callsite_python.cpp).
#pragma once
#include <string>

namespace rocprof::cupti {

// Library path prefixes ('\n'-separated) whose frames are never launch sites; then installs
// the hooks table the backend calls (callsite.hpp).
void install_python_callsite_hooks(const std::string& library_prefixes);

}  // namespace rocprof::cupti
