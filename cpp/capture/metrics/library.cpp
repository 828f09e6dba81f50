// dlopen of a management library, with the test-only override (source.hpp).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

#include "capture/metrics/source.hpp"

namespace rocprof::metrics {

void* Library::symbol(const char* name) const { return dlsym(handle, name); }

bool Library::amd_driver_present(std::string* why) const {
  if (stand_in || ::access("/dev/kfd", F_OK) == 0 || ::access("/sys/module/amdgpu", F_OK) == 0)
    return true;
  *why = "found (" + path + ") but no AMD GPU driver here (/dev/kfd absent)";
  return false;
}

bool open_library(const char* test_variable, const std::vector<std::string>& candidates,
                  Library* lib, std::string* why) {
  std::vector<std::string> paths = candidates;
  const char* stand_in = std::getenv(test_variable);
  if (stand_in != nullptr && *stand_in != '\0') paths = {stand_in};
  std::string error;
  for (const std::string& p : paths) {
    if (p.find('/') != std::string::npos && ::access(p.c_str(), R_OK) != 0) {
      if (error.empty()) error = p + ": no such file";
      continue;
    }
    // RTLD_LOCAL: these libraries carry C++ runtimes of their own. Never closed: they start
    // threads of their own, and a fork child may still hold their state.
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      // The first name's error says most (libnvidia-ml.so.1: the driver's own file).
      const char* e = dlerror();
      if (error.empty() || error.find("no such file") != std::string::npos)
        error = e != nullptr ? e : p + ": cannot be opened";
      continue;
    }
    lib->handle = h;
    lib->path = p;
    lib->stand_in = stand_in != nullptr && *stand_in != '\0';
    char resolved[4096];
    if (p.find('/') == std::string::npos && dlinfo(h, RTLD_DI_ORIGIN, resolved) == 0)
      lib->path = std::string(resolved) + "/" + p;
    return true;
  }
  *why = "not found (" + error + ")";
  return false;
}

}  // namespace rocprof::metrics
