// TEST-ONLY STAND-IN for rocprofiler-sdk, its HSA half (see standin_rocprofiler_sdk.cpp): what
// the SDK does with the HSA API table it is handed, built against the same HSA headers as the
// stand-in HSA runtime (the SDK half is built against rocprofiler-sdk's, whose HSA headers are
// newer). As the SDK does: hsa_queue_create makes an intercept queue with the SDK's
// interceptor, which numbers each kernel dispatch (and, while PC sampling runs, samples it);
// hsa_executable_freeze reports the code object's kernels.
#define AMD_INTERNAL_BUILD
#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>

#include <string>
#include <vector>

extern "C" void standin_sdk_code_object(const uint64_t* kernel_objects, const char* const* names,
                                        size_t n);
extern "C" void standin_sdk_dispatch(uint64_t kernel_object, uint32_t grid_x);

namespace {

CoreApiTable g_core;  // the entries as the SDK found them
AmdExtTable g_amd;

void intercept(const void* packets, uint64_t count, uint64_t, void*,
               hsa_amd_queue_intercept_packet_writer writer) {
  const auto* p = static_cast<const hsa_kernel_dispatch_packet_t*>(packets);
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned type =
        (p[i].header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH)
      standin_sdk_dispatch(p[i].kernel_object, p[i].grid_size_x);
  }
  writer(packets, count);
}

hsa_status_t queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                          void (*cb)(hsa_status_t, hsa_queue_t*, void*), void* data, uint32_t priv,
                          uint32_t group, hsa_queue_t** queue) {
  const hsa_status_t st =
      g_amd.hsa_amd_queue_intercept_create_fn(agent, size, type, cb, data, priv, group, queue);
  if (st != HSA_STATUS_SUCCESS) return st;
  return g_amd.hsa_amd_queue_intercept_register_fn(*queue, intercept, nullptr);
}

struct Symbols {
  std::vector<uint64_t> objects;
  std::vector<std::string> names;
};

hsa_status_t each_symbol(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t sym, void* out) {
  auto* s = static_cast<Symbols*>(out);
  hsa_symbol_kind_t kind{};
  g_core.hsa_executable_symbol_get_info_fn(sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind);
  if (kind != HSA_SYMBOL_KIND_KERNEL) return HSA_STATUS_SUCCESS;
  uint32_t length = 0;
  g_core.hsa_executable_symbol_get_info_fn(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &length);
  std::string name(length, '\0');
  g_core.hsa_executable_symbol_get_info_fn(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name.data());
  uint64_t object = 0;
  g_core.hsa_executable_symbol_get_info_fn(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object);
  s->objects.push_back(object);
  s->names.push_back(name);
  return HSA_STATUS_SUCCESS;
}

struct Freeze {
  hsa_executable_t exe;
  Symbols symbols;
};

hsa_status_t each_agent(hsa_agent_t agent, void* data) {
  auto* f = static_cast<Freeze*>(data);
  g_core.hsa_executable_iterate_agent_symbols_fn(f->exe, agent, each_symbol, &f->symbols);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t executable_freeze(hsa_executable_t exe, const char* options) {
  const hsa_status_t st = g_core.hsa_executable_freeze_fn(exe, options);
  if (st != HSA_STATUS_SUCCESS) return st;
  Freeze f{exe, {}};
  g_core.hsa_iterate_agents_fn(each_agent, &f);
  std::vector<const char*> names;
  for (const std::string& n : f.symbols.names) names.push_back(n.c_str());
  standin_sdk_code_object(f.symbols.objects.data(), names.data(), names.size());
  return st;
}

}  // namespace

extern "C" void standin_sdk_install_hsa(void* table) {
  auto* t = static_cast<HsaApiTable*>(table);
  g_core = *t->core_;
  g_amd = *t->amd_ext_;
  t->core_->hsa_queue_create_fn = queue_create;
  t->core_->hsa_executable_freeze_fn = executable_freeze;
}
