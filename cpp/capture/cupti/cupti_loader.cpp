#include "cupti_loader.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace rocprof::cupti {
namespace {

int find_loaded(dl_phdr_info* info, size_t, void* out) {
  const char* name = info->dlpi_name;
  if (name != nullptr && std::strstr(name, "/libcupti.so") != nullptr) {
    *static_cast<std::string*>(out) = name;
    return 1;
  }
  return 0;
}

bool resolve(void* handle, Api& api, std::string* missing) {
#define ROCPROF_CUPTI_FN(name)                                           \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (api.name == nullptr) {                                             \
    *missing = #name;                                                    \
    return false;                                                        \
  }
#include "cupti_functions.inc"
#undef ROCPROF_CUPTI_FN
  api.activity_enable_runtime_api = reinterpret_cast<decltype(api.activity_enable_runtime_api)>(
      dlsym(handle, "cuptiActivityEnableRuntimeApi"));
  api.activity_enable_driver_api = reinterpret_cast<decltype(api.activity_enable_driver_api)>(
      dlsym(handle, "cuptiActivityEnableDriverApi"));
  // Counters are optional (CUPTI before 12.6 has no range profiler): note what is missing.
#ifndef ROCPROF_CUPTI_COUNTERS
  api.counters_missing = "counter support (this build's CUDA headers predate 12.6)";
#else
#define ROCPROF_CUPTI_FN(name)                                                             \
  api.counters.name = reinterpret_cast<decltype(api.counters.name)>(dlsym(handle, #name)); \
  if (api.counters.name == nullptr && api.counters_missing.empty()) api.counters_missing = #name;
#include "counter_functions.inc"
#undef ROCPROF_CUPTI_FN
#endif
  return true;
}

}  // namespace

const Api* load(const std::string& candidates, std::string* why) {
  static std::mutex mu;
  static Api* loaded = nullptr;  // leaked: CUPTI may call back into us until the process ends
  static std::string failure;
  std::lock_guard<std::mutex> g(mu);
  if (loaded != nullptr) return loaded;

  std::vector<std::string> paths;
  std::string already;
  dl_iterate_phdr(find_loaded, &already);
  if (!already.empty()) paths.push_back(already);
  std::string all = candidates;
  if (const char* env = std::getenv("ROCPROF_CUPTI_LIBRARY_PATH")) all += std::string(":") + env;
  for (size_t at = 0; at <= all.size();) {
    size_t end = all.find(':', at);
    if (end == std::string::npos) end = all.size();
    if (end > at) paths.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  for (const char* p :
       {"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so", "/usr/local/cuda/lib64/libcupti.so",
        "libcupti.so.13", "libcupti.so.12", "libcupti.so"})
    paths.push_back(p);

  std::string errors;
  for (const std::string& p : paths) {
    if (p.find('/') != std::string::npos && ::access(p.c_str(), R_OK) != 0) continue;
    // RTLD_LOCAL: libcupti carries C++ runtime symbols of its own; made global they would
    // interpose on libstdc++ for libraries loaded later (PyTorch crashed in iostreams).
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      errors = e ? e : p;
      continue;
    }
    auto* api = new Api();
    std::string missing;
    if (!resolve(h, *api, &missing)) {
      errors = p + " lacks " + missing;
      delete api;
      continue;  // an old CUPTI: keep the handle open, it may be in use by someone else
    }
    api->path = p;
    loaded = api;
    return loaded;
  }
  failure =
      "libcupti not found (looked in the PyTorch/nvidia-cuda-cupti wheels, the CUDA "
      "toolkit and the loader path" +
      (errors.empty() ? std::string(")") : "; " + errors + ")");
  if (why) *why = failure;
  return nullptr;
}

bool driver_present(int* gpu_count, std::string* why) {
  *gpu_count = 0;
  if (::access("/proc/driver/nvidia/version", R_OK) != 0) {
    if (why) *why = "no NVIDIA driver loaded (/proc/driver/nvidia/version missing)";
    return false;
  }
  if (DIR* d = opendir("/proc/driver/nvidia/gpus")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++*gpu_count;
    closedir(d);
  }
  if (*gpu_count == 0) {
    if (why) *why = "NVIDIA driver loaded but no GPU visible";
    return false;
  }
  // Opening (not initialising) libcuda proves the user-space driver matches the kernel module.
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (h == nullptr) {
    if (why) *why = std::string("libcuda.so.1 cannot be opened: ") + (dlerror() ?: "unknown");
    return false;
  }
  return true;
}

const char* result_string(const Api& api, CUptiResult r) {
  const char* s = nullptr;
  if (api.cuptiGetResultString == nullptr || api.cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
    return "unknown CUPTI error";
  return s;
}

}  // namespace rocprof::cupti
