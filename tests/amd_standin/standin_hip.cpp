// TEST-ONLY STAND-IN for libamdhip64 (HIP 5.2), over the stand-in HSA runtime (standin_hsa.cpp).
// Not HIP: a few HIP entry points with HIP's signatures (hip/hip_runtime_api.h) implemented on
// HSA the way HIP does it (one HSA queue per stream, AQL kernel-dispatch packets, HSA async
// copies, memory-pool allocations), plus HIP 5.x's tool callback registration
// (hipRegisterApiCallback / hipRegisterActivityCallback) with the calling protocol of hipamd's
// hip_prof_api.h: per call, the activity callback is asked for the call's hip_api_data_t
// (null last argument), the API callback runs with phase ENTER, then again with phase EXIT,
// then the activity callback with its registered argument.
//
// Stand-in specifics: hipModuleLoadData takes the stand-in's text code object; hipInit starts
// HSA (the tool's OnLoad runs inside it, as inside HIP's own initialisation).
#include <hip/hip_runtime_api.h>
#include <hip/amd_detail/hip_prof_str.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

struct ihipStream_t {
  hsa_queue_t* queue = nullptr;
  hsa_signal_t pending{0};  // +1 per operation submitted, -1 as each completes
};
struct ihipModule_t {
  hsa_executable_t exe{0};
};
struct ihipModuleSymbol_t {
  uint64_t kernel_object = 0;
  uint32_t group = 0, priv = 0;
};

namespace {

using ActivityFn = void* (*)(uint32_t cid, void* record, const void* data, void* arg);
using ApiFn = void (*)(uint32_t domain, uint32_t cid, const void* data, void* arg);
struct CallbackEntry {
  std::atomic<ActivityFn> act{nullptr};
  std::atomic<void*> act_arg{nullptr};
  std::atomic<ApiFn> fun{nullptr};
  std::atomic<void*> fun_arg{nullptr};
};
CallbackEntry g_callbacks[HIP_API_ID_LAST + 1];
constexpr uint32_t kHipApiDomain = 3;  // ACTIVITY_DOMAIN_HIP_API of ROCm 5.x's prof_protocol.h

// One HIP call's callbacks, as hipamd's api_callbacks_spawner_t makes them.
class Spawner {
 public:
  explicit Spawner(uint32_t cid) : cid_(cid) {
    CallbackEntry& e = g_callbacks[cid];
    act_ = e.act.load();
    act_arg_ = e.act_arg.load();
    fun_ = e.fun.load();
    fun_arg_ = e.fun_arg.load();
    if (act_ != nullptr) data_ = static_cast<hip_api_data_t*>(act_(cid, nullptr, nullptr, nullptr));
    if (data_ != nullptr && fun_ != nullptr) {
      fun_(kHipApiDomain, cid_, data_, fun_arg_);
      data_->phase = 1;  // ACTIVITY_API_PHASE_EXIT
    }
  }
  ~Spawner() {
    if (data_ == nullptr) return;
    if (fun_ != nullptr) fun_(kHipApiDomain, cid_, data_, fun_arg_);
    if (act_ != nullptr) act_(cid_, nullptr, nullptr, act_arg_);
  }

 private:
  uint32_t cid_;
  ActivityFn act_ = nullptr;
  ApiFn fun_ = nullptr;
  void *act_arg_ = nullptr, *fun_arg_ = nullptr;
  hip_api_data_t* data_ = nullptr;
};

hsa_agent_t g_cpu{0}, g_gpu{0};
hsa_amd_memory_pool_t g_gpu_pool{0};
std::once_flag g_init_once;
std::mutex g_streams_mu;
std::vector<ihipStream_t*> g_streams;

hsa_status_t find_agent(hsa_agent_t a, void*) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  (t == HSA_DEVICE_TYPE_GPU ? g_gpu : g_cpu) = a;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t find_pool(hsa_amd_memory_pool_t p, void*) {
  g_gpu_pool = p;
  return HSA_STATUS_INFO_BREAK;
}
void init() {
  std::call_once(g_init_once, [] {
    hsa_init();
    hsa_iterate_agents(find_agent, nullptr);
    hsa_amd_agent_iterate_memory_pools(g_gpu, find_pool, nullptr);
  });
}

void submit(ihipStream_t* s, const hsa_kernel_dispatch_packet_t& body) {
  hsa_queue_t* q = s->queue;
  const uint64_t idx = hsa_queue_add_write_index_screlease(q, 1);
  auto* slot = static_cast<hsa_kernel_dispatch_packet_t*>(q->base_address) + (idx % q->size);
  std::memcpy(reinterpret_cast<char*>(slot) + 4, reinterpret_cast<const char*>(&body) + 4,
              sizeof(body) - 4);
  const uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                          (1 << HSA_PACKET_HEADER_BARRIER) |
                          (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                          (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
  const uint32_t first = header | (uint32_t(body.setup) << 16);
  __atomic_store_n(reinterpret_cast<uint32_t*>(slot), first, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, static_cast<hsa_signal_value_t>(idx));
}

}  // namespace

extern "C" {
#define API __attribute__((visibility("default")))

API hipError_t hipRegisterApiCallback(uint32_t id, void* fun, void* arg) {
  if (id < HIP_API_ID_FIRST || id > HIP_API_ID_LAST) return hipErrorInvalidValue;
  g_callbacks[id].fun_arg.store(arg);
  g_callbacks[id].fun.store(reinterpret_cast<ApiFn>(fun));
  return hipSuccess;
}
API hipError_t hipRemoveApiCallback(uint32_t id) {
  return hipRegisterApiCallback(id, nullptr, nullptr);
}
API hipError_t hipRegisterActivityCallback(uint32_t id, void* fun, void* arg) {
  if (id < HIP_API_ID_FIRST || id > HIP_API_ID_LAST) return hipErrorInvalidValue;
  g_callbacks[id].act_arg.store(arg);
  g_callbacks[id].act.store(reinterpret_cast<ActivityFn>(fun));
  return hipSuccess;
}
API hipError_t hipRemoveActivityCallback(uint32_t id) {
  return hipRegisterActivityCallback(id, nullptr, nullptr);
}
API const char* hipApiName(uint32_t id) { return hip_api_name(id); }

API hipError_t hipInit(unsigned int) {
  Spawner cb(HIP_API_ID_hipInit);
  init();
  return hipSuccess;
}

API hipError_t hipMalloc(void** ptr, size_t size) {
  Spawner cb(HIP_API_ID_hipMalloc);
  init();
  return hsa_amd_memory_pool_allocate(g_gpu_pool, size, 0, ptr) == HSA_STATUS_SUCCESS
             ? hipSuccess
             : hipErrorOutOfMemory;
}

API hipError_t hipFree(void* ptr) {
  Spawner cb(HIP_API_ID_hipFree);
  return hsa_amd_memory_pool_free(ptr) == HSA_STATUS_SUCCESS ? hipSuccess : hipErrorInvalidValue;
}

API hipError_t hipStreamCreate(hipStream_t* stream) {
  Spawner cb(HIP_API_ID_hipStreamCreate);
  init();
  auto* s = new ihipStream_t();
  if (hsa_queue_create(g_gpu, 1024, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, UINT32_MAX, UINT32_MAX,
                       &s->queue) != HSA_STATUS_SUCCESS ||
      hsa_signal_create(0, 0, nullptr, &s->pending) != HSA_STATUS_SUCCESS) {
    delete s;
    return hipErrorOutOfMemory;
  }
  std::lock_guard<std::mutex> g(g_streams_mu);
  g_streams.push_back(s);
  *stream = s;
  return hipSuccess;
}

API hipError_t hipStreamSynchronize(hipStream_t s) {
  Spawner cb(HIP_API_ID_hipStreamSynchronize);
  hsa_signal_wait_scacquire(s->pending, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                            HSA_WAIT_STATE_BLOCKED);
  return hipSuccess;
}

API hipError_t hipDeviceSynchronize() {
  Spawner cb(HIP_API_ID_hipDeviceSynchronize);
  std::lock_guard<std::mutex> g(g_streams_mu);
  for (ihipStream_t* s : g_streams)
    hsa_signal_wait_scacquire(s->pending, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                              HSA_WAIT_STATE_BLOCKED);
  return hipSuccess;
}

API hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  Spawner cb(HIP_API_ID_hipModuleLoadData);
  init();
  auto* m = new ihipModule_t();
  hsa_code_object_reader_t reader;
  const char* text = static_cast<const char*>(image);
  if (hsa_code_object_reader_create_from_memory(text, std::strlen(text), &reader) !=
          HSA_STATUS_SUCCESS ||
      hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, "",
                                &m->exe) != HSA_STATUS_SUCCESS ||
      hsa_executable_load_agent_code_object(m->exe, g_gpu, reader, "", nullptr) !=
          HSA_STATUS_SUCCESS ||
      hsa_executable_freeze(m->exe, "") != HSA_STATUS_SUCCESS) {
    delete m;
    return hipErrorInvalidImage;
  }
  hsa_code_object_reader_destroy(reader);
  *module = m;
  return hipSuccess;
}

API hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* name) {
  Spawner cb(HIP_API_ID_hipModuleGetFunction);
  hsa_executable_symbol_t sym;
  if (hsa_executable_get_symbol_by_name(m->exe, (std::string(name) + ".kd").c_str(), &g_gpu,
                                        &sym) != HSA_STATUS_SUCCESS)
    return hipErrorNotFound;
  auto* fn = new ihipModuleSymbol_t();
  hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &fn->kernel_object);
  hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                 &fn->group);
  hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                 &fn->priv);
  *f = fn;
  return hipSuccess;
}

API hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
                                     unsigned int gz, unsigned int bx, unsigned int by,
                                     unsigned int bz, unsigned int shared, hipStream_t stream,
                                     void**, void**) {
  Spawner cb(HIP_API_ID_hipModuleLaunchKernel);
  hsa_kernel_dispatch_packet_t p;
  std::memset(&p, 0, sizeof p);
  p.setup = 3 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  p.workgroup_size_x = static_cast<uint16_t>(bx);
  p.workgroup_size_y = static_cast<uint16_t>(by);
  p.workgroup_size_z = static_cast<uint16_t>(bz);
  p.grid_size_x = gx * bx;  // HIP's grid is in blocks, AQL's in work-items
  p.grid_size_y = gy * by;
  p.grid_size_z = gz * bz;
  p.group_segment_size = f->group + shared;
  p.private_segment_size = f->priv;
  p.kernel_object = f->kernel_object;
  p.completion_signal = stream->pending;
  hsa_signal_add_screlease(stream->pending, 1);
  submit(stream, p);
  return hipSuccess;
}

API hipError_t hipMemcpyAsync(void* dst, const void* src, size_t bytes, hipMemcpyKind kind,
                              hipStream_t stream) {
  Spawner cb(HIP_API_ID_hipMemcpyAsync);
  const bool from_host = kind == hipMemcpyHostToDevice || kind == hipMemcpyHostToHost;
  const bool to_host = kind == hipMemcpyDeviceToHost || kind == hipMemcpyHostToHost;
  hsa_signal_add_screlease(stream->pending, 1);
  return hsa_amd_memory_async_copy(dst, to_host ? g_cpu : g_gpu, src, from_host ? g_cpu : g_gpu,
                                   bytes, 0, nullptr, stream->pending) == HSA_STATUS_SUCCESS
             ? hipSuccess
             : hipErrorInvalidValue;
}
}
