// TEST-ONLY STAND-IN for the HSA runtime (see standin_hsa.cpp): the tools hsa_init loads, in
// ROCr's order. First rocprofiler-register's part: where ROCP_TOOL_LIBRARIES names tools, it
// loads rocprofiler-sdk (here the TEST-ONLY stand-in named by ROCPROF_SDK_STANDIN) and hands it
// the API table, which the SDK may wrap before any other tool sees it. Then each library named
// in HSA_TOOLS_LIB (space-separated) gets OnLoad with the live table.
#define AMD_INTERNAL_BUILD
#include <dlfcn.h>
#include <hsa/hsa_api_trace.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kRuntimeVersion = (uint64_t(1) << 32) | 5;

using SetApiTableFn = int (*)(const char*, uint64_t, uint64_t, void**, uint64_t);
void register_with_sdk(HsaApiTable* table) {
  const char* tools = std::getenv("ROCP_TOOL_LIBRARIES");
  const char* sdk = std::getenv("ROCPROF_SDK_STANDIN");
  if (tools == nullptr || *tools == '\0' || sdk == nullptr) return;
  void* h = dlopen(sdk, RTLD_NOW | RTLD_GLOBAL);
  auto set = h ? reinterpret_cast<SetApiTableFn>(dlsym(h, "rocprofiler_set_api_table")) : nullptr;
  if (set == nullptr) {
    std::fprintf(stderr, "standin-hsa: rocprofiler-sdk stand-in %s not loaded: %s\n", sdk,
                 h ? "no rocprofiler_set_api_table" : dlerror());
    return;
  }
  void* tables[] = {table};
  set("hsa", kRuntimeVersion, 0, tables, 1);
}

using OnLoadFn = bool (*)(HsaApiTable*, uint64_t, uint64_t, const char* const*);
void load_hsa_tools(HsaApiTable* table) {
  const char* env = std::getenv("HSA_TOOLS_LIB");
  if (env == nullptr) return;
  std::istringstream in(env);
  std::string lib;
  std::vector<std::string> failed;
  while (in >> lib) {
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    auto on_load = h ? reinterpret_cast<OnLoadFn>(dlsym(h, "OnLoad")) : nullptr;
    if (on_load == nullptr) {
      std::fprintf(stderr, "standin-hsa: tool %s not loaded: %s\n", lib.c_str(),
                   h ? "no OnLoad" : dlerror());
      failed.push_back(lib);
      continue;
    }
    std::vector<const char*> names;
    for (const auto& f : failed) names.push_back(f.c_str());
    if (!on_load(table, kRuntimeVersion, names.size(), names.data())) failed.push_back(lib);
  }
}

}  // namespace

void standin_load_tools(HsaApiTable* table) {
  register_with_sdk(table);
  load_hsa_tools(table);
}
