// TEST-ONLY STAND-IN for rocprofiler-sdk (librocprofiler-sdk), for machines without an AMD GPU.
// It is not ROCm and never ships: it exists so rocprof's rocprofiler-sdk backend
// (cpp/capture/rocprofiler_sdk/) is driven through its real entry points -- a tool library
// loaded from ROCP_TOOL_LIBRARIES, rocprofiler_configure, the initialize/finalize functions it
// returns, and the SDK's C API as declared by the real rocprofiler-sdk headers -- on a CPU-only
// machine. Built with those headers (tests/amd_standin/rocprofiler_sdk_headers.sh) and with
// standin_sdk_hsa.cpp, its HSA half.
//
// What it does, the way rocprofiler-sdk does it as far as a tool can see:
//  - rocprofiler_set_api_table (the stand-in HSA runtime calls it inside hsa_init, where ROCr's
//    rocprofiler-register calls the SDK's): the first call loads each library named in
//    ROCP_TOOL_LIBRARIES (':'-separated), calls its rocprofiler_configure and then the
//    initialize function returned; contexts and services can be configured only inside it. The
//    tools' finalize functions run at exit (its own exit handler, registered after them).
//  - The "hsa" table: hsa_queue_create makes intercept queues with the stand-in's interceptor,
//    hsa_executable_freeze reports the code object and its kernels (standin_sdk_hsa.cpp).
//  - Each kernel dispatch gets a dispatch id and a correlation id; the KERNEL_DISPATCH enqueue
//    callbacks of started contexts run on the submitting thread; a started context with the PC
//    sampling service gets samples of that dispatch in its buffer: N per dispatch (the method's
//    record layout), at the kernel's entry + 4 * i, delivered through the buffer callback on a
//    thread of the stand-in's when the watermark is reached or the buffer is flushed.
//  - Agents: one CPU, one GPU; the GPU's PC sampling configurations: host_trap by time
//    (1..1000000), stochastic by cycles (256..2^31, powers of two).
//  - The device counting service (--gpu-metrics): a started context asks the tool for its
//    counter config; each read returns the counters' values since the start, one record per
//    counter (one instance): GRBM_COUNT counts the stand-in GPU's clock (1 GHz: a nanosecond a
//    cycle), GRBM_GUI_ACTIVE the cycles some kernel executed (the stand-in HSA runtime's
//    standin_hsa_busy_ns), and per microsecond busy FETCH_SIZE 1 KiB, WRITE_SIZE 0.5 KiB,
//    TCC_HIT_sum 9 and TCC_MISS_sum 1. It supports no other counter.
// Knobs (tests only): ROCPROF_STANDIN_PCS_PER_DISPATCH (samples per dispatch, default 4),
// ROCPROF_STANDIN_PCS_DROPPED (the buffer's drop count its deliveries report, default 0),
// ROCPROF_STANDIN_PCS_INVALID (invalid samples added after the first dispatch's, default 0).
#include <dlfcn.h>
#include <time.h>

#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" void standin_sdk_install_hsa(void* hsa_api_table);  // standin_sdk_hsa.cpp

namespace {

uint64_t boottime_ns() {
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
uint64_t knob(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

constexpr uint64_t kCpu = 1, kGpu = 2;    // agent handles
constexpr uint64_t kEntryOffset = 0x100;  // kernel_code_entry_byte_offset of every kernel

std::recursive_mutex g_mu;
bool g_locked = true;        // configuration: open only inside the tools' initialize
std::atomic<int> g_fini{0};  // rocprofiler_is_finalized: 0, -1 while finalizing, 1

struct CallbackService {
  rocprofiler_callback_tracing_kind_t kind;
  std::vector<rocprofiler_tracing_operation_t> ops;
  rocprofiler_callback_tracing_cb_t cb;
  void* data;
};
struct PcService {
  rocprofiler_pc_sampling_method_t method;
  uint64_t buffer;
};
struct DeviceCounting {
  rocprofiler_device_counting_service_cb_t cb = nullptr;
  void* data = nullptr;
  uint64_t config = 0;        // the counter config the tool set at the start
  std::vector<double> start;  // each supported counter's value at the start
};
struct Context {
  bool active = false;
  std::vector<CallbackService> callbacks;
  std::map<uint64_t, PcService> pc;       // agent -> service
  std::map<uint64_t, DeviceCounting> dc;  // agent -> the device counting service
};
std::vector<Context> g_contexts;  // handle = index + 1
Context* context(rocprofiler_context_id_t id) {
  return id.handle >= 1 && id.handle <= g_contexts.size() ? &g_contexts[id.handle - 1] : nullptr;
}

// One record as the buffer keeps it until delivery.
struct Rec {
  rocprofiler_record_header_t header{};
  union {
    rocprofiler_pc_sampling_record_host_trap_v0_t trap;
    rocprofiler_pc_sampling_record_stochastic_v0_t stochastic;
    rocprofiler_pc_sampling_record_invalid_t invalid;
  };
  Rec() { std::memset(&stochastic, 0, sizeof stochastic); }
};
struct Buffer {
  uint64_t context = 0, id = 0;
  size_t watermark = 0;
  rocprofiler_buffer_tracing_cb_t cb = nullptr;
  void* data = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Rec> pending;
  uint64_t asked = 0, done = 0;  // deliveries asked for and finished
  std::thread worker;
};
std::vector<Buffer*> g_buffers;  // handle = index + 1; never freed

void deliver_loop(Buffer* b) {
  std::unique_lock<std::mutex> lk(b->mu);
  for (;;) {
    b->cv.wait(lk, [b] { return b->asked > b->done; });
    const uint64_t upto = b->asked;
    std::vector<Rec> batch;
    batch.swap(b->pending);
    lk.unlock();
    if (!batch.empty()) {
      std::vector<rocprofiler_record_header_t*> headers;
      for (Rec& r : batch) {
        r.header.payload = &r.trap;
        headers.push_back(&r.header);
      }
      b->cb(rocprofiler_context_id_t{b->context}, rocprofiler_buffer_id_t{b->id}, headers.data(),
            headers.size(), b->data, knob("ROCPROF_STANDIN_PCS_DROPPED", 0));
    }
    lk.lock();
    b->done = upto;
    b->cv.notify_all();
  }
}

void push(uint64_t buffer, const Rec& r) {
  Buffer* b = g_buffers.at(buffer - 1);
  std::lock_guard<std::mutex> g(b->mu);
  b->pending.push_back(r);
  if (b->pending.size() * sizeof(Rec) >= b->watermark) {
    ++b->asked;
    b->cv.notify_all();
  }
}

// ---- code objects and kernels (from standin_sdk_hsa.cpp) ----
struct KernelInfo {
  uint64_t kernel_id, code_object_id, entry_offset;
};
std::map<uint64_t, KernelInfo> g_kernels;  // kernel_object -> what the SDK knows of it
uint64_t g_next_code_object = 1, g_next_kernel = 1;
std::atomic<uint64_t> g_next_dispatch{1}, g_next_correlation{1};
bool g_invalid_added = false;

template <class Payload>
void callback(rocprofiler_callback_tracing_kind_t kind, int operation,
              rocprofiler_callback_phase_t phase, uint64_t correlation, Payload* payload) {
  for (size_t i = 0; i < g_contexts.size(); ++i) {
    const Context& c = g_contexts[i];
    if (!c.active) continue;
    for (const CallbackService& s : c.callbacks) {
      if (s.kind != kind) continue;
      bool wanted = s.ops.empty();
      for (auto op : s.ops) wanted = wanted || op == operation;
      if (!wanted) continue;
      rocprofiler_callback_tracing_record_t r{};
      r.context_id.handle = i + 1;
      r.correlation_id.internal = correlation;
      r.kind = kind;
      r.operation = operation;
      r.phase = phase;
      r.payload = payload;
      rocprofiler_user_data_t user{};
      s.cb(r, &user, s.data);
    }
  }
}

const char* const kInstTypes[] = {"ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_NONE",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_VALU",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_MATRIX",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_SCALAR",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_TEX",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_LDS",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_LDS_DIRECT",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_FLAT",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_EXPORT",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_MESSAGE",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_BARRIER",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_BRANCH_NOT_TAKEN",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_BRANCH_TAKEN",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_JUMP",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_OTHER",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_NO_INST",
                                  "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_DUAL_VALU"};
const char* const kReasons[] = {
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_NONE",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_NO_INSTRUCTION_AVAILABLE",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_ALU_DEPENDENCY",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_INTERNAL_INSTRUCTION",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_BARRIER_WAIT",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_ARBITER_NOT_WIN",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_ARBITER_WIN_EX_STALL",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_OTHER_WAIT",
    "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_SLEEP_WAIT"};

// ---- the stand-in GPU's counters (the device counting service) ----
const char* const kDcCounters[] = {"GRBM_GUI_ACTIVE", "GRBM_COUNT",  "FETCH_SIZE",
                                   "WRITE_SIZE",      "TCC_HIT_sum", "TCC_MISS_sum"};
constexpr size_t kDcCount = sizeof kDcCounters / sizeof kDcCounters[0];
std::map<uint64_t, std::vector<uint64_t>> g_counter_configs;  // handle -> counter ids

// Each supported counter's value now (ids are index + 1).
std::vector<double> dc_values() {
  using BusyFn = uint64_t (*)(uint64_t*);
  static const auto busy_fn = reinterpret_cast<BusyFn>(dlsym(RTLD_DEFAULT, "standin_hsa_busy_ns"));
  uint64_t now = boottime_ns();
  const uint64_t busy = busy_fn != nullptr ? busy_fn(&now) : 0;
  const double us = static_cast<double>(busy / 1000);
  return {static_cast<double>(busy), static_cast<double>(now), us, us / 2, 9 * us, us};
}

// ---- tools ----
struct Tool {
  rocprofiler_client_id_t id{sizeof(rocprofiler_client_id_t), nullptr, 0};
  rocprofiler_tool_configure_result_t* result = nullptr;
};
std::vector<Tool*> g_tools;

void finalize_tools() {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  if (g_fini != 0) return;
  g_fini = -1;
  for (Tool* t : g_tools)
    if (t->result != nullptr && t->result->finalize != nullptr)
      t->result->finalize(t->result->tool_data);
  g_fini = 1;
}

void load_tools() {
  const char* env = std::getenv("ROCP_TOOL_LIBRARIES");
  std::string list = env ? env : "";
  uint32_t priority = 0;
  for (size_t at = 0; at <= list.size();) {
    size_t end = list.find(':', at);
    if (end == std::string::npos) end = list.size();
    const std::string lib = list.substr(at, end - at);
    at = end + 1;
    if (lib.empty()) continue;
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    auto configure =
        h ? reinterpret_cast<rocprofiler_configure_func_t>(dlsym(h, "rocprofiler_configure"))
          : nullptr;
    if (configure == nullptr) {
      std::fprintf(stderr, "standin-rocprofiler-sdk: tool %s not loaded: %s\n", lib.c_str(),
                   h ? "no rocprofiler_configure" : dlerror());
      continue;
    }
    auto* t = new Tool();
    t->result = configure(10000, "1.0.0 (test-only stand-in)", priority++, &t->id);
    g_tools.push_back(t);
  }
  g_locked = false;
  for (Tool* t : g_tools)
    if (t->result != nullptr && t->result->initialize != nullptr)
      t->result->initialize([](rocprofiler_client_id_t) { finalize_tools(); },
                            t->result->tool_data);
  g_locked = true;
  std::atexit(finalize_tools);
}

}  // namespace

// ---- the HSA half's reports ----
extern "C" void standin_sdk_code_object(const uint64_t* kernel_objects, const char* const* names,
                                        size_t n) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  if (n == 0) return;
  uint64_t lo = kernel_objects[0], hi = kernel_objects[0];
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, kernel_objects[i]);
    hi = std::max(hi, kernel_objects[i]);
  }
  rocprofiler_callback_tracing_code_object_load_data_t co{};
  co.size = sizeof co;
  co.code_object_id = g_next_code_object++;
  co.agent_id.handle = kGpu;
  co.uri = "memory://standin";
  co.load_base = (lo & ~uint64_t(0xfff)) - 0x1000;
  co.load_size = hi + 0x1000 - co.load_base;
  co.storage_type = ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_MEMORY;
  callback(ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT, ROCPROFILER_CODE_OBJECT_LOAD,
           ROCPROFILER_CALLBACK_PHASE_LOAD, 0, &co);
  for (size_t i = 0; i < n; ++i) {
    rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t k{};
    k.size = sizeof k;
    k.kernel_id = g_next_kernel++;
    k.code_object_id = co.code_object_id;
    k.kernel_name = names[i];
    k.kernel_object = kernel_objects[i];
    k.kernel_code_entry_byte_offset = kEntryOffset;
    g_kernels[kernel_objects[i]] = {k.kernel_id, co.code_object_id,
                                    kernel_objects[i] + kEntryOffset - co.load_base};
    callback(ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT,
             ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER, ROCPROFILER_CALLBACK_PHASE_LOAD,
             0, &k);
  }
}

extern "C" void standin_sdk_dispatch(uint64_t kernel_object, uint32_t grid_x) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  const uint64_t dispatch = g_next_dispatch++, correlation = g_next_correlation++;
  const auto k = g_kernels.find(kernel_object);
  const KernelInfo info = k != g_kernels.end() ? k->second : KernelInfo{0, 0, 0};
  rocprofiler_callback_tracing_kernel_dispatch_data_t d{};
  d.size = sizeof d;
  d.dispatch_info.size = sizeof d.dispatch_info;
  d.dispatch_info.agent_id.handle = kGpu;
  d.dispatch_info.kernel_id = info.kernel_id;
  d.dispatch_info.dispatch_id = dispatch;
  d.dispatch_info.grid_size.x = grid_x;
  callback(ROCPROFILER_CALLBACK_TRACING_KERNEL_DISPATCH, ROCPROFILER_KERNEL_DISPATCH_ENQUEUE,
           ROCPROFILER_CALLBACK_PHASE_ENTER, correlation, &d);
  const uint64_t per = knob("ROCPROF_STANDIN_PCS_PER_DISPATCH", 4);
  for (const Context& c : g_contexts) {
    if (!c.active) continue;
    const auto s = c.pc.find(kGpu);
    if (s == c.pc.end()) continue;
    for (uint64_t i = 0; i < per; ++i) {
      Rec r;
      rocprofiler_pc_t pc{info.code_object_id, info.entry_offset + 4 * i};
      if (s->second.method == ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP) {
        r.header.hash = rocprofiler_record_header_compute_hash(
            ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING,
            ROCPROFILER_PC_SAMPLING_RECORD_HOST_TRAP_V0_SAMPLE);
        auto& t = r.trap;
        t.size = sizeof t;
        t.pc = pc;
        t.exec_mask = ~uint64_t(0) >> i;
        t.timestamp = boottime_ns();
        t.dispatch_id = dispatch;
        t.correlation_id.internal = correlation;
      } else {
        r.header.hash = rocprofiler_record_header_compute_hash(
            ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING,
            ROCPROFILER_PC_SAMPLING_RECORD_STOCHASTIC_V0_SAMPLE);
        auto& t = r.stochastic;
        t.size = sizeof t;
        t.pc = pc;
        t.exec_mask = ~uint64_t(0) >> i;
        t.timestamp = boottime_ns();
        t.dispatch_id = dispatch;
        t.correlation_id.internal = correlation;
        t.wave_count = static_cast<uint32_t>(i + 1);
        t.wave_issued = i % 2 == 0;  // even samples issued a VALU op, odd ones wait on memory
        t.inst_type = t.wave_issued ? ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_VALU
                                    : ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_NO_INST;
        t.snapshot.reason_not_issued =
            t.wave_issued ? ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_NONE
                          : ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT;
      }
      push(s->second.buffer, r);
    }
    if (!g_invalid_added) {
      g_invalid_added = true;
      for (uint64_t i = knob("ROCPROF_STANDIN_PCS_INVALID", 0); i > 0; --i) {
        Rec r;
        r.header.hash = rocprofiler_record_header_compute_hash(
            ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING, ROCPROFILER_PC_SAMPLING_RECORD_INVALID_SAMPLE);
        r.invalid.size = sizeof r.invalid;
        push(s->second.buffer, r);
      }
    }
  }
}

// ---- the SDK's C API (what rocprof's backend calls) ----
extern "C" {
#define API __attribute__((visibility("default")))

API int rocprofiler_set_api_table(const char* name, uint64_t, uint64_t, void** tables,
                                  uint64_t count) {
  static std::once_flag once;
  std::call_once(once, load_tools);
  if (std::strcmp(name, "hsa") == 0 && count > 0) standin_sdk_install_hsa(tables[0]);
  return 0;
}

API const char* rocprofiler_get_status_string(rocprofiler_status_t s) {
  switch (s) {
    case ROCPROFILER_STATUS_SUCCESS:
      return "ROCPROFILER_STATUS_SUCCESS";
    case ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED:
      return "ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED";
    case ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT:
      return "ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT";
    case ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND:
      return "ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND";
    case ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND:
      return "ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND";
    case ROCPROFILER_STATUS_ERROR_FINALIZED:
      return "ROCPROFILER_STATUS_ERROR_FINALIZED";
    default:
      return "ROCPROFILER_STATUS_ERROR";
  }
}

API rocprofiler_status_t rocprofiler_is_finalized(int* status) {
  *status = g_fini.load();
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_create_context(rocprofiler_context_id_t* id) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  if (g_locked) return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  g_contexts.emplace_back();
  id->handle = g_contexts.size();
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_start_context(rocprofiler_context_id_t id) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  Context* c = context(id);
  if (c == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  c->active = true;
  for (auto& [agent, dc] : c->dc) {  // the tool names its counters; they count from here
    dc.config = 0;
    dc.cb(
        id, rocprofiler_agent_id_t{agent},
        [](rocprofiler_context_id_t ctx, rocprofiler_counter_config_id_t cfg) {
          Context* cc = context(ctx);
          if (cc == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_INVALID;
          if (g_counter_configs.count(cfg.handle) == 0)
            return ROCPROFILER_STATUS_ERROR_PROFILE_NOT_FOUND;
          cc->dc.at(kGpu).config = cfg.handle;
          return ROCPROFILER_STATUS_SUCCESS;
        },
        dc.data);
    dc.start = dc_values();
  }
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_stop_context(rocprofiler_context_id_t id) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  Context* c = context(id);
  if (c == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  c->active = false;
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_create_buffer(rocprofiler_context_id_t ctx, size_t,
                                                   size_t watermark, rocprofiler_buffer_policy_t,
                                                   rocprofiler_buffer_tracing_cb_t cb, void* data,
                                                   rocprofiler_buffer_id_t* id) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  if (g_locked) return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  if (context(ctx) == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  auto* b = new Buffer();
  b->context = ctx.handle;
  b->watermark = watermark;
  b->cb = cb;
  b->data = data;
  g_buffers.push_back(b);
  b->id = id->handle = g_buffers.size();
  b->worker = std::thread(deliver_loop, b);
  b->worker.detach();
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_flush_buffer(rocprofiler_buffer_id_t id) {
  Buffer* b;
  {
    std::lock_guard<std::recursive_mutex> g(g_mu);
    if (id.handle < 1 || id.handle > g_buffers.size())
      return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
    b = g_buffers[id.handle - 1];
  }
  std::unique_lock<std::mutex> lk(b->mu);
  const uint64_t want = ++b->asked;
  b->cv.notify_all();
  b->cv.wait(lk, [b, want] { return b->done >= want; });
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t
rocprofiler_query_available_agents(rocprofiler_agent_version_t version,
                                   rocprofiler_query_available_agents_cb_t cb, size_t, void* data) {
  static rocprofiler_agent_v0_t cpu{}, gpu{};
  cpu.size = gpu.size = sizeof(rocprofiler_agent_v0_t);
  cpu.id.handle = kCpu;
  cpu.type = ROCPROFILER_AGENT_TYPE_CPU;
  cpu.logical_node_type_id = 0;
  gpu.id.handle = kGpu;
  gpu.type = ROCPROFILER_AGENT_TYPE_GPU;
  gpu.logical_node_id = 1;
  gpu.logical_node_type_id = 0;
  gpu.name = "gfx942";
  gpu.product_name = "rocprof software stand-in GPU";
  const void* agents[] = {&cpu, &gpu};
  return cb(version, agents, 2, data);
}

API rocprofiler_status_t rocprofiler_query_pc_sampling_agent_configurations(
    rocprofiler_agent_id_t agent, rocprofiler_available_pc_sampling_configurations_cb_t cb,
    void* data) {
  if (agent.handle != kGpu) return cb(nullptr, 0, data);
  rocprofiler_pc_sampling_configuration_t configs[2]{};
  configs[0].size = configs[1].size = sizeof configs[0];
  configs[0].method = ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP;
  configs[0].unit = ROCPROFILER_PC_SAMPLING_UNIT_TIME;
  configs[0].min_interval = 1;
  configs[0].max_interval = 1000000;
  configs[1].method = ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC;
  configs[1].unit = ROCPROFILER_PC_SAMPLING_UNIT_CYCLES;
  configs[1].min_interval = 256;
  configs[1].max_interval = 1ull << 31;
  configs[1].flags = ROCPROFILER_PC_SAMPLING_CONFIGURATION_FLAGS_INTERVAL_POW2;
  return cb(configs, 2, data);
}

API rocprofiler_status_t rocprofiler_configure_pc_sampling_service(
    rocprofiler_context_id_t ctx, rocprofiler_agent_id_t agent,
    rocprofiler_pc_sampling_method_t method, rocprofiler_pc_sampling_unit_t unit, uint64_t interval,
    rocprofiler_buffer_id_t buffer, int) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  if (g_locked) return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  Context* c = context(ctx);
  if (c == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  if (agent.handle != kGpu) return ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND;
  const bool trap = method == ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP &&
                    unit == ROCPROFILER_PC_SAMPLING_UNIT_TIME && interval >= 1 &&
                    interval <= 1000000;
  const bool stochastic = method == ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC &&
                          unit == ROCPROFILER_PC_SAMPLING_UNIT_CYCLES && interval >= 256 &&
                          interval <= (1ull << 31) && (interval & (interval - 1)) == 0;
  if (!trap && !stochastic) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  c->pc[agent.handle] = PcService{method, buffer.handle};
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_configure_callback_tracing_service(
    rocprofiler_context_id_t ctx, rocprofiler_callback_tracing_kind_t kind,
    const rocprofiler_tracing_operation_t* ops, size_t n, rocprofiler_callback_tracing_cb_t cb,
    void* data) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  if (g_locked) return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  Context* c = context(ctx);
  if (c == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  c->callbacks.push_back(CallbackService{kind, {ops, ops + n}, cb, data});
  return ROCPROFILER_STATUS_SUCCESS;
}

API const char* rocprofiler_get_pc_sampling_instruction_type_name(
    rocprofiler_pc_sampling_instruction_type_t t) {
  return t < sizeof kInstTypes / sizeof kInstTypes[0] ? kInstTypes[t] : nullptr;
}

API const char* rocprofiler_get_pc_sampling_instruction_not_issued_reason_name(
    rocprofiler_pc_sampling_instruction_not_issued_reason_t r) {
  return r < sizeof kReasons / sizeof kReasons[0] ? kReasons[r] : nullptr;
}

// ---- the device counting service ----
API rocprofiler_status_t rocprofiler_configure_device_counting_service(
    rocprofiler_context_id_t ctx, rocprofiler_buffer_id_t, rocprofiler_agent_id_t agent,
    rocprofiler_device_counting_service_cb_t cb, void* data) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  if (g_locked) return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  Context* c = context(ctx);
  if (c == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  if (agent.handle != kGpu) return ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND;
  if (c->dc.count(agent.handle) != 0) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  c->dc[agent.handle] = DeviceCounting{cb, data, 0, {}};
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_iterate_agent_supported_counters(
    rocprofiler_agent_id_t agent, rocprofiler_available_counters_cb_t cb, void* data) {
  if (agent.handle != kGpu) return ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND;
  rocprofiler_counter_id_t ids[kDcCount];
  for (size_t i = 0; i < kDcCount; ++i) ids[i].handle = i + 1;
  return cb(agent, ids, kDcCount, data);
}

API rocprofiler_status_t rocprofiler_query_counter_info(rocprofiler_counter_id_t id,
                                                        rocprofiler_counter_info_version_id_t v,
                                                        void* out) {
  if (v != ROCPROFILER_COUNTER_INFO_VERSION_0 || id.handle < 1 || id.handle > kDcCount)
    return ROCPROFILER_STATUS_ERROR_COUNTER_NOT_FOUND;
  auto* info = static_cast<rocprofiler_counter_info_v0_t*>(out);
  *info = rocprofiler_counter_info_v0_t{};
  info->id = id;
  info->name = kDcCounters[id.handle - 1];
  info->description = "test-only stand-in counter";
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_query_record_counter_id(rocprofiler_counter_instance_id_t rec,
                                                             rocprofiler_counter_id_t* id) {
  id->handle = rec >> 32;  // the stand-in's encoding: counter id, then the instance
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_create_counter_config(rocprofiler_agent_id_t agent,
                                                           rocprofiler_counter_id_t* list, size_t n,
                                                           rocprofiler_counter_config_id_t* out) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  if (agent.handle != kGpu) return ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND;
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n; ++i) {
    if (list[i].handle < 1 || list[i].handle > kDcCount)
      return ROCPROFILER_STATUS_ERROR_COUNTER_NOT_FOUND;
    ids.push_back(list[i].handle);
  }
  out->handle = 1000 + g_counter_configs.size();
  g_counter_configs[out->handle] = ids;
  return ROCPROFILER_STATUS_SUCCESS;
}

API rocprofiler_status_t rocprofiler_destroy_counter_config(rocprofiler_counter_config_id_t) {
  return ROCPROFILER_STATUS_SUCCESS;  // the stand-in keeps every config
}

API rocprofiler_status_t rocprofiler_sample_device_counting_service(
    rocprofiler_context_id_t ctx, rocprofiler_user_data_t user, rocprofiler_counter_flag_t flags,
    rocprofiler_counter_record_t* out, size_t* n) {
  // As the SDK does: refused while finalizing, before any lock (the finalizing thread holds one
  // while the tools' finalize functions run).
  if (g_fini.load() != 0) return ROCPROFILER_STATUS_ERROR_FINALIZED;
  std::lock_guard<std::recursive_mutex> g(g_mu);
  Context* c = context(ctx);
  if (c == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  if (!c->active) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_STARTED;
  if (out == nullptr || n == nullptr || flags != ROCPROFILER_COUNTER_FLAG_NONE)
    return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  const auto it = c->dc.find(kGpu);
  if (it == c->dc.end() || it->second.config == 0) return ROCPROFILER_STATUS_ERROR_CONTEXT_INVALID;
  const std::vector<uint64_t>& ids = g_counter_configs.at(it->second.config);
  if (*n < ids.size()) {
    *n = ids.size();
    return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  const std::vector<double> now = dc_values();
  for (size_t i = 0; i < ids.size(); ++i) {
    out[i] = rocprofiler_counter_record_t{};
    out[i].id = ids[i] << 32;
    out[i].counter_value = now[ids[i] - 1] - it->second.start[ids[i] - 1];
    out[i].user_data = user;
    out[i].agent_id.handle = kGpu;
  }
  *n = ids.size();
  return ROCPROFILER_STATUS_SUCCESS;
}
}
