// TEST-ONLY STAND-IN for the HSA runtime (libhsa-runtime64), for machines without an AMD GPU.
// It is not ROCm and never ships: it exists so rocprof's AMD backend can be driven through its
// real entry points (HSA_TOOLS_LIB → OnLoad with an HsaApiTable built from the real ROCm 5.2
// headers) on a CPU-only machine.
//
// What it does, the way ROCr does it as far as a tool can see:
//  - hsa_init loads each library named in HSA_TOOLS_LIB (space-separated) and calls its OnLoad
//    with the live API table (standin_hsa_tools.cpp); every exported hsa_* function calls
//    through that table, so a tool that replaces entries intercepts every caller.
//  - One CPU agent and one GPU agent ("rocprof software stand-in GPU").
//  - AQL queues: a CPU thread per queue "executes" kernel-dispatch packets in order, each for the
//    duration its fake code object states, then decrements the completion signal. With
//    profiling on, the signal carries start/end in system ticks (end - start = the duration
//    exactly, as a hardware timer would report).
//  - hsa_amd_queue_intercept_create/register: packets rung on the intercept queue's doorbell are
//    handed to the registered handlers on the ringing thread, the one registered last first,
//    each with a writer into the next (the last writer fills the real queue), as ROCr chains
//    them.
//  - rocprofiler-register's part of hsa_init: where ROCP_TOOL_LIBRARIES names tools, the
//    rocprofiler-sdk library (here the TEST-ONLY stand-in named by ROCPROF_SDK_STANDIN) is
//    loaded and handed the API table (rocprofiler_set_api_table), before HSA_TOOLS_LIB tools.
//  - hsa_amd_memory_async_copy on one copy-engine thread: memcpy, 1 ns per byte (1 GB/s).
//  - Signals, async signal handlers (one handler thread), memory pools (malloc), executables
//    from a text "code object": "ROCPROF-STANDIN-CO" then one "name duration_ns group private
//    kernarg" line per kernel; symbols are named "<name>.kd" as code object v3+ names them.
// Knobs (tests only): ROCPROF_STANDIN_TICK_HZ (system clock frequency, default 1e9),
// ROCPROF_STANDIN_TABLE=rocm56 (report the AMD-extension table with two more entries, the
// layout change of ROCm 5.6, which a tool must refuse).
#define AMD_INTERNAL_BUILD
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

// standin_hsa_tools.cpp: rocprofiler-register's part and HSA_TOOLS_LIB, in hsa_init.
void standin_load_tools(HsaApiTable* table);

namespace {

uint64_t boottime_ns() {
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
uint64_t g_tick_hz = 1000000000ull;
uint64_t ticks(uint64_t ns) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ns) * g_tick_hz / 1000000000ull);
}
void sleep_until_ns(uint64_t t) {
  for (uint64_t now = boottime_ns(); now < t; now = boottime_ns())
    std::this_thread::sleep_for(std::chrono::nanoseconds(t - now));
}

// ---- signals. Waiters poll (every 100 us): a test runtime, not a fast one, and no condition
// variables, whose broadcast under many timed waiters hung in glibc 2.36 here.
std::mutex g_mu;  // the async handler list
void nap() { std::this_thread::sleep_for(std::chrono::microseconds(100)); }
struct Queue;
struct Signal {
  std::atomic<int64_t> value{0};
  uint64_t start = 0, end = 0;   // profiling times, system ticks
  Queue* doorbell_of = nullptr;  // the intercept queue this signal is the doorbell of
};
Signal* sig(hsa_signal_t s) { return reinterpret_cast<Signal*>(s.handle); }
hsa_signal_t handle(Signal* s) { return {reinterpret_cast<uint64_t>(s)}; }
bool satisfied(int64_t v, hsa_signal_condition_t c, int64_t x) {
  switch (c) {
    case HSA_SIGNAL_CONDITION_EQ:
      return v == x;
    case HSA_SIGNAL_CONDITION_NE:
      return v != x;
    case HSA_SIGNAL_CONDITION_LT:
      return v < x;
    case HSA_SIGNAL_CONDITION_GTE:
      return v >= x;
  }
  return false;
}

struct Handler {
  Signal* s;
  hsa_signal_condition_t cond;
  int64_t value;
  hsa_amd_signal_handler fn;
  void* arg;
};
std::vector<Handler> g_handlers;  // under g_mu

void async_loop() {
  std::unique_lock<std::mutex> lk(g_mu);
  for (;;) {
    std::vector<Handler> ready;
    for (size_t i = 0; i < g_handlers.size();) {
      const Handler& h = g_handlers[i];
      if (satisfied(h.s->value.load(), h.cond, h.value)) {
        ready.push_back(h);
        g_handlers[i] = g_handlers.back();
        g_handlers.pop_back();
      } else {
        ++i;
      }
    }
    if (ready.empty()) {
      lk.unlock();
      nap();
      lk.lock();
      continue;
    }
    lk.unlock();
    for (const Handler& h : ready)
      if (h.fn(h.s->value.load(), h.arg)) {
        std::lock_guard<std::mutex> g(g_mu);
        g_handlers.push_back(h);
      }
    lk.lock();
  }
}

// ---- agents and pools ----
struct Agent {
  bool gpu;
  uint32_t node;
};
Agent g_cpu{false, 0}, g_gpu{true, 1};
hsa_agent_t agent_handle(Agent* a) { return {reinterpret_cast<uint64_t>(a)}; }
Agent* agent(hsa_agent_t a) { return reinterpret_cast<Agent*>(a.handle); }
struct Pool {
  Agent* agent;
};
Pool g_cpu_pool{&g_cpu}, g_gpu_pool{&g_gpu};

// ---- kernels and executables ----
struct Kernel {
  std::string name;  // without ".kd"
  uint64_t duration_ns = 0;
  uint32_t group = 0, priv = 0, kernarg = 0;
};
struct Executable {
  std::vector<Kernel*> kernels;
  bool frozen = false;
};
struct Reader {
  std::string text;
};

// ---- queues ----
bool g_copy_profiling = false;
struct Queue {
  hsa_queue_t q{};  // first: the hsa_queue_t* the application holds points here
  std::vector<hsa_kernel_dispatch_packet_t> ring;
  std::atomic<uint64_t> write_index{0}, read_index{0};
  Signal* doorbell = nullptr;
  Agent* agent = nullptr;
  bool profiling = false;
  // Intercept queues: the handlers, in the order registered, and the real queue behind them.
  Queue* inner = nullptr;
  std::vector<std::pair<hsa_amd_queue_intercept_handler, void*>> handlers;
  std::mutex submit_mu;
  uint64_t submitted = 0;
};
std::atomic<uint64_t> g_queue_ids{0};

unsigned packet_type(uint16_t header) {
  return (header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
}

void complete(hsa_signal_t s, uint64_t start, uint64_t end, bool profiled) {
  if (s.handle == 0) return;
  Signal* x = sig(s);
  if (profiled) {
    x->start = ticks(start);
    x->end = ticks(end);
  }
  x->value.fetch_sub(1);
}

// How long some kernel was executing, over all queues (the stand-in rocprofiler-sdk's GPU busy
// counter reads it through standin_hsa_busy_ns). Times are taken under the lock, so that the
// busy time never grows faster than the clock read with it.
std::mutex g_busy_mu;
int g_executing = 0;
uint64_t g_busy_ns = 0, g_busy_since = 0, g_busy_until = 0;
void busy(bool begin, uint64_t end) {
  std::lock_guard<std::mutex> g(g_busy_mu);
  if (begin) {
    if (g_executing++ == 0) g_busy_since = g_busy_until = boottime_ns();
    g_busy_until = std::max(g_busy_until, end);
  } else if (--g_executing == 0) {
    g_busy_ns += g_busy_until - g_busy_since;
  }
}

void queue_worker(Queue* q) {
  for (;;) {
    const uint64_t i = q->read_index.load();
    hsa_kernel_dispatch_packet_t& p = q->ring[i % q->ring.size()];
    const uint16_t header = __atomic_load_n(&p.header, __ATOMIC_ACQUIRE);
    const unsigned type = packet_type(header);
    if (type == HSA_PACKET_TYPE_INVALID) {
      nap();
      continue;
    }
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      const auto* k = reinterpret_cast<const Kernel*>(p.kernel_object);
      const uint64_t start = boottime_ns(), end = start + (k ? k->duration_ns : 0);
      busy(true, end);
      sleep_until_ns(end);  // "executing"
      busy(false, end);
      complete(p.completion_signal, start, end, q->profiling);
    } else {
      complete(p.completion_signal, 0, 0, false);  // barriers: nothing to wait for here
    }
    __atomic_store_n(&p.header, uint16_t(HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE),
                     __ATOMIC_RELEASE);
    q->read_index.store(i + 1);
  }
}

Queue* new_queue(Agent* a, uint32_t size, bool worker) {
  auto* q = new Queue();
  q->ring.resize(size);
  for (auto& p : q->ring) p.header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
  q->doorbell = new Signal();
  q->agent = a;
  q->q.type = HSA_QUEUE_TYPE_MULTI;
  q->q.base_address = q->ring.data();
  q->q.doorbell_signal = handle(q->doorbell);
  q->q.size = size;
  q->q.id = g_queue_ids.fetch_add(1);
  if (worker) std::thread(queue_worker, q).detach();
  return q;
}
Queue* queue_of(const hsa_queue_t* q) {
  return reinterpret_cast<Queue*>(const_cast<hsa_queue_t*>(q));
}

// The intercept handlers' writer: into the next handler down, the last one into the real queue
// of the queue being submitted.
thread_local Queue* t_target = nullptr;
thread_local size_t t_level = 0;  // handlers still to run
thread_local uint64_t t_first = 0;
void write_packets(const void* pkts, uint64_t count) {
  if (t_level > 0) {
    const size_t level = t_level--;
    const auto& [handler, data] = t_target->handlers[level - 1];
    handler(pkts, count, t_first, data, write_packets);
    t_level = level;
    return;
  }
  Queue* q = t_target->inner;
  const auto* in = static_cast<const hsa_kernel_dispatch_packet_t*>(pkts);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t idx = q->write_index.fetch_add(1);
    hsa_kernel_dispatch_packet_t& slot = q->ring[idx % q->ring.size()];
    std::memcpy(reinterpret_cast<char*>(&slot) + 4, reinterpret_cast<const char*>(&in[i]) + 4,
                sizeof(slot) - 4);
    uint32_t first;
    std::memcpy(&first, &in[i], 4);
    __atomic_store_n(reinterpret_cast<uint32_t*>(&slot), first, __ATOMIC_RELEASE);
  }
}

void ring_intercept(Queue* q) {
  std::lock_guard<std::mutex> g(q->submit_mu);
  const uint64_t end = q->write_index.load();
  while (q->submitted < end) {
    std::vector<hsa_kernel_dispatch_packet_t> batch;
    const uint64_t first = q->submitted;
    for (; q->submitted < end; ++q->submitted) {
      hsa_kernel_dispatch_packet_t& p = q->ring[q->submitted % q->ring.size()];
      if (packet_type(__atomic_load_n(&p.header, __ATOMIC_ACQUIRE)) == HSA_PACKET_TYPE_INVALID)
        break;  // not written yet
      batch.push_back(p);
      p.header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
    }
    if (batch.empty()) break;
    t_target = q;
    t_level = q->handlers.size();
    t_first = first;
    write_packets(batch.data(), batch.size());
    t_target = nullptr;
    q->read_index.store(q->submitted);
  }
}

// ---- async copies: one copy-engine thread ----
struct Copy {
  void* dst;
  const void* src;
  size_t size;
  std::vector<hsa_signal_t> deps;
  hsa_signal_t done;
};
std::mutex g_copy_mu;
std::deque<Copy> g_copies;

void copy_engine() {
  for (;;) {
    Copy c;
    {
      std::unique_lock<std::mutex> lk(g_copy_mu);
      if (g_copies.empty()) {
        lk.unlock();
        nap();
        continue;
      }
      c = g_copies.front();
      g_copies.pop_front();
    }
    for (hsa_signal_t d : c.deps)
      while (sig(d)->value.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
    const uint64_t start = boottime_ns(), end = start + c.size;  // 1 ns per byte
    std::memcpy(c.dst, c.src, c.size);
    sleep_until_ns(end);
    complete(c.done, start, end, g_copy_profiling);
  }
}

// ---- the API table and its implementations ----
HsaApiTableContainer g_table;
std::once_flag g_once;
std::atomic<int> g_refs{0};

hsa_status_t impl_init() {
  if (g_refs.fetch_add(1) > 0) return HSA_STATUS_SUCCESS;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_shut_down() {
  g_refs.fetch_sub(1);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_system_get_info(hsa_system_info_t attr, void* value) {
  switch (attr) {
    case HSA_SYSTEM_INFO_TIMESTAMP:
      *static_cast<uint64_t*>(value) = ticks(boottime_ns());
      break;
    case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
      *static_cast<uint64_t*>(value) = g_tick_hz;
      break;
    case HSA_SYSTEM_INFO_VERSION_MAJOR:
      *static_cast<uint16_t*>(value) = 1;
      break;
    case HSA_SYSTEM_INFO_VERSION_MINOR:
      *static_cast<uint16_t*>(value) = 1;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_iterate_agents(hsa_status_t (*cb)(hsa_agent_t, void*), void* data) {
  for (Agent* a : {&g_cpu, &g_gpu}) {
    const hsa_status_t st = cb(agent_handle(a), data);
    if (st != HSA_STATUS_SUCCESS) return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
  }
  return HSA_STATUS_SUCCESS;
}
void put_text(void* value, const char* s) {
  std::memset(value, 0, 64);
  std::strncpy(static_cast<char*>(value), s, 63);
}
hsa_status_t impl_agent_get_info(hsa_agent_t h, hsa_agent_info_t attr, void* value) {
  const Agent* a = agent(h);
  auto u32 = [&](uint32_t v) { *static_cast<uint32_t*>(value) = v; };
  switch (static_cast<int>(attr)) {
    case HSA_AGENT_INFO_NAME:
      put_text(value, a->gpu ? "gfx90a" : "standin-cpu");
      break;
    case HSA_AGENT_INFO_VENDOR_NAME:
      put_text(value, a->gpu ? "AMD" : "CPU");
      break;
    case HSA_AGENT_INFO_DEVICE:
      *static_cast<hsa_device_type_t*>(value) = a->gpu ? HSA_DEVICE_TYPE_GPU : HSA_DEVICE_TYPE_CPU;
      break;
    case HSA_AGENT_INFO_NODE:
      u32(a->node);
      break;
    case HSA_AGENT_INFO_WAVEFRONT_SIZE:
      u32(a->gpu ? 64 : 0);
      break;
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
      u32(4096);
      break;
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
      put_text(value, a->gpu ? "rocprof software stand-in GPU (test only)" : "stand-in CPU");
      break;
    case HSA_AMD_AGENT_INFO_UUID:
      put_text(value, a->gpu ? "GPU-5374616e64696e30" : "CPU-XX");
      break;
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
      u32(a->gpu ? 104 : 2);
      break;
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:
      u32(a->gpu ? 1700 : 2000);
      break;
    case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU:
      u32(a->gpu ? 4 : 0);
      break;
    case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU:
      u32(a->gpu ? 32 : 0);
      break;
    case HSA_AMD_AGENT_INFO_CHIP_ID:
      u32(a->gpu ? 0x740f : 0);
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_queue_create(hsa_agent_t a, uint32_t size, hsa_queue_type32_t,
                               void (*)(hsa_status_t, hsa_queue_t*, void*), void*, uint32_t,
                               uint32_t, hsa_queue_t** out) {
  if (!agent(a)->gpu) return HSA_STATUS_ERROR_INVALID_AGENT;
  *out = &new_queue(agent(a), size, true)->q;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_intercept_create(hsa_agent_t a, uint32_t size, hsa_queue_type32_t type,
                                   void (*cb)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                   uint32_t priv, uint32_t group, hsa_queue_t** out) {
  hsa_queue_t* inner = nullptr;
  const hsa_status_t st = impl_queue_create(a, size, type, cb, data, priv, group, &inner);
  if (st != HSA_STATUS_SUCCESS) return st;
  Queue* q = new_queue(agent(a), size, false);
  q->inner = queue_of(inner);
  q->doorbell->doorbell_of = q;
  *out = &q->q;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_intercept_register(hsa_queue_t* queue, hsa_amd_queue_intercept_handler h,
                                     void* data) {
  Queue* q = queue_of(queue);
  if (q->inner == nullptr) return HSA_STATUS_ERROR_INVALID_QUEUE;
  std::lock_guard<std::mutex> g(q->submit_mu);
  q->handlers.emplace_back(h, data);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_set_profiler_enabled(hsa_queue_t* queue, int enable) {
  Queue* q = queue_of(queue);
  q->profiling = enable != 0;
  if (q->inner) q->inner->profiling = enable != 0;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_copy_enable(bool enable) {
  g_copy_profiling = enable;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_get_dispatch_time(hsa_agent_t, hsa_signal_t s,
                                    hsa_amd_profiling_dispatch_time_t* t) {
  t->start = sig(s)->start;
  t->end = sig(s)->end;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_get_copy_time(hsa_signal_t s, hsa_amd_profiling_async_copy_time_t* t) {
  t->start = sig(s)->start;
  t->end = sig(s)->end;
  return HSA_STATUS_SUCCESS;
}
uint64_t impl_add_write_index(const hsa_queue_t* q, uint64_t n) {
  return queue_of(q)->write_index.fetch_add(n);
}
uint64_t impl_load_write_index(const hsa_queue_t* q) { return queue_of(q)->write_index.load(); }
uint64_t impl_load_read_index(const hsa_queue_t* q) { return queue_of(q)->read_index.load(); }

hsa_status_t impl_signal_create(hsa_signal_value_t v, uint32_t, const hsa_agent_t*,
                                hsa_signal_t* out) {
  auto* s = new Signal();
  s->value.store(v);
  *out = handle(s);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_signal_destroy(hsa_signal_t s) {
  delete sig(s);
  return HSA_STATUS_SUCCESS;
}
hsa_signal_value_t impl_signal_load(hsa_signal_t s) { return sig(s)->value.load(); }
void impl_signal_store(hsa_signal_t s, hsa_signal_value_t v) {
  Signal* x = sig(s);
  x->value.store(v);
  if (x->doorbell_of != nullptr)
    ring_intercept(x->doorbell_of);  // on the ringing thread, as ROCr's intercept queue does
}
void impl_signal_add(hsa_signal_t s, hsa_signal_value_t v) { sig(s)->value.fetch_add(v); }
void impl_signal_subtract(hsa_signal_t s, hsa_signal_value_t v) { sig(s)->value.fetch_sub(v); }
hsa_signal_value_t impl_signal_wait(hsa_signal_t s, hsa_signal_condition_t c, hsa_signal_value_t v,
                                    uint64_t timeout, hsa_wait_state_t) {
  const uint64_t deadline = timeout == UINT64_MAX ? UINT64_MAX : boottime_ns() + timeout;
  while (!satisfied(sig(s)->value.load(), c, v) && boottime_ns() < deadline) nap();
  return sig(s)->value.load();
}
hsa_status_t impl_async_handler(hsa_signal_t s, hsa_signal_condition_t c, hsa_signal_value_t v,
                                hsa_amd_signal_handler fn, void* arg) {
  std::lock_guard<std::mutex> g(g_mu);
  g_handlers.push_back({sig(s), c, v, fn, arg});
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_async_copy(void* dst, hsa_agent_t, const void* src, hsa_agent_t, size_t size,
                             uint32_t ndeps, const hsa_signal_t* deps, hsa_signal_t done) {
  Copy c{dst, src, size, std::vector<hsa_signal_t>(deps, deps + ndeps), done};
  std::lock_guard<std::mutex> g(g_copy_mu);
  g_copies.push_back(c);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_iterate_pools(hsa_agent_t a, hsa_status_t (*cb)(hsa_amd_memory_pool_t, void*),
                                void* data) {
  Pool* p = agent(a)->gpu ? &g_gpu_pool : &g_cpu_pool;
  const hsa_status_t st = cb({reinterpret_cast<uint64_t>(p)}, data);
  return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
}
hsa_status_t impl_pool_get_info(hsa_amd_memory_pool_t, hsa_amd_memory_pool_info_t attr,
                                void* value) {
  if (attr == HSA_AMD_MEMORY_POOL_INFO_SEGMENT) {
    *static_cast<hsa_amd_segment_t*>(value) = HSA_AMD_SEGMENT_GLOBAL;
    return HSA_STATUS_SUCCESS;
  }
  if (attr == HSA_AMD_MEMORY_POOL_INFO_SIZE) {
    *static_cast<size_t*>(value) = size_t(64) << 30;
    return HSA_STATUS_SUCCESS;
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}
hsa_status_t impl_pool_allocate(hsa_amd_memory_pool_t, size_t size, uint32_t, void** ptr) {
  *ptr = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  return *ptr ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}
hsa_status_t impl_pool_free(void* ptr) {
  std::free(ptr);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t impl_reader_from_memory(const void* code, size_t size, hsa_code_object_reader_t* out) {
  auto* r = new Reader{std::string(static_cast<const char*>(code), size)};
  out->handle = reinterpret_cast<uint64_t>(r);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_reader_destroy(hsa_code_object_reader_t r) {
  delete reinterpret_cast<Reader*>(r.handle);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_executable_create_alt(hsa_profile_t, hsa_default_float_rounding_mode_t,
                                        const char*, hsa_executable_t* out) {
  out->handle = reinterpret_cast<uint64_t>(new Executable());
  return HSA_STATUS_SUCCESS;
}
Executable* exe(hsa_executable_t e) { return reinterpret_cast<Executable*>(e.handle); }
hsa_status_t impl_load_agent_code_object(hsa_executable_t e, hsa_agent_t,
                                         hsa_code_object_reader_t r, const char*,
                                         hsa_loaded_code_object_t* out) {
  std::istringstream in(reinterpret_cast<Reader*>(r.handle)->text);
  std::string magic;
  if (!(in >> magic) || magic != "ROCPROF-STANDIN-CO") return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  auto* k = new Kernel();
  while (in >> k->name >> k->duration_ns >> k->group >> k->priv >> k->kernarg) {
    exe(e)->kernels.push_back(k);
    k = new Kernel();
  }
  delete k;
  if (out) out->handle = e.handle;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_executable_freeze(hsa_executable_t e, const char*) {
  exe(e)->frozen = true;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_executable_destroy(hsa_executable_t e) {
  delete exe(e);  // kernels stay: dispatches may still name them
  return HSA_STATUS_SUCCESS;
}
hsa_executable_symbol_t symbol_of(Kernel* k) { return {reinterpret_cast<uint64_t>(k)}; }
hsa_status_t impl_get_symbol_by_name(hsa_executable_t e, const char* name, const hsa_agent_t*,
                                     hsa_executable_symbol_t* out) {
  std::string want(name);
  if (want.size() > 3 && want.compare(want.size() - 3, 3, ".kd") == 0) want.resize(want.size() - 3);
  for (Kernel* k : exe(e)->kernels)
    if (k->name == want) {
      *out = symbol_of(k);
      return HSA_STATUS_SUCCESS;
    }
  return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}
hsa_status_t impl_symbol_get_info(hsa_executable_symbol_t s, hsa_executable_symbol_info_t attr,
                                  void* value) {
  const Kernel* k = reinterpret_cast<Kernel*>(s.handle);
  const std::string name = k->name + ".kd";
  switch (attr) {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
      *static_cast<hsa_symbol_kind_t*>(value) = HSA_SYMBOL_KIND_KERNEL;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
      *static_cast<uint32_t*>(value) = uint32_t(name.size());
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
      std::memcpy(value, name.data(), name.size());
      break;  // not terminated, as HSA says
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      *static_cast<uint64_t*>(value) = reinterpret_cast<uint64_t>(k);
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
      *static_cast<uint32_t*>(value) = k->kernarg;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
      *static_cast<uint32_t*>(value) = 16;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
      *static_cast<uint32_t*>(value) = k->group;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
      *static_cast<uint32_t*>(value) = k->priv;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_AGENT:
      *static_cast<hsa_agent_t*>(value) = agent_handle(&g_gpu);
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_iterate_agent_symbols(hsa_executable_t e, hsa_agent_t a,
                                        hsa_status_t (*cb)(hsa_executable_t, hsa_agent_t,
                                                           hsa_executable_symbol_t, void*),
                                        void* data) {
  if (!agent(a)->gpu) return HSA_STATUS_SUCCESS;
  for (Kernel* k : exe(e)->kernels) {
    const hsa_status_t st = cb(e, a, symbol_of(k), data);
    if (st != HSA_STATUS_SUCCESS) return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
  }
  return HSA_STATUS_SUCCESS;
}
hsa_status_t impl_status_string(hsa_status_t st, const char** out) {
  *out = st == HSA_STATUS_SUCCESS ? "HSA_STATUS_SUCCESS" : "stand-in HSA error";
  return HSA_STATUS_SUCCESS;
}

void build_table() {
  CoreApiTable& c = g_table.core;
  c.hsa_init_fn = impl_init;
  c.hsa_shut_down_fn = impl_shut_down;
  c.hsa_system_get_info_fn = impl_system_get_info;
  c.hsa_iterate_agents_fn = impl_iterate_agents;
  c.hsa_agent_get_info_fn = impl_agent_get_info;
  c.hsa_queue_create_fn = impl_queue_create;
  c.hsa_queue_add_write_index_screlease_fn = impl_add_write_index;
  c.hsa_queue_add_write_index_relaxed_fn = impl_add_write_index;
  c.hsa_queue_load_write_index_relaxed_fn = impl_load_write_index;
  c.hsa_queue_load_read_index_scacquire_fn = impl_load_read_index;
  c.hsa_queue_load_read_index_relaxed_fn = impl_load_read_index;
  c.hsa_signal_create_fn = impl_signal_create;
  c.hsa_signal_destroy_fn = impl_signal_destroy;
  c.hsa_signal_load_relaxed_fn = c.hsa_signal_load_scacquire_fn = impl_signal_load;
  c.hsa_signal_store_relaxed_fn = c.hsa_signal_store_screlease_fn = impl_signal_store;
  c.hsa_signal_add_relaxed_fn = c.hsa_signal_add_screlease_fn = impl_signal_add;
  c.hsa_signal_subtract_relaxed_fn = c.hsa_signal_subtract_screlease_fn = impl_signal_subtract;
  c.hsa_signal_wait_relaxed_fn = c.hsa_signal_wait_scacquire_fn = impl_signal_wait;
  c.hsa_code_object_reader_create_from_memory_fn = impl_reader_from_memory;
  c.hsa_code_object_reader_destroy_fn = impl_reader_destroy;
  c.hsa_executable_create_alt_fn = impl_executable_create_alt;
  c.hsa_executable_load_agent_code_object_fn = impl_load_agent_code_object;
  c.hsa_executable_freeze_fn = impl_executable_freeze;
  c.hsa_executable_destroy_fn = impl_executable_destroy;
  c.hsa_executable_get_symbol_by_name_fn = impl_get_symbol_by_name;
  c.hsa_executable_symbol_get_info_fn = impl_symbol_get_info;
  c.hsa_executable_iterate_agent_symbols_fn = impl_iterate_agent_symbols;
  c.hsa_status_string_fn = impl_status_string;
  AmdExtTable& a = g_table.amd_ext;
  a.hsa_amd_queue_intercept_create_fn = impl_intercept_create;
  a.hsa_amd_queue_intercept_register_fn = impl_intercept_register;
  a.hsa_amd_profiling_set_profiler_enabled_fn = impl_set_profiler_enabled;
  a.hsa_amd_profiling_async_copy_enable_fn = impl_copy_enable;
  a.hsa_amd_profiling_get_dispatch_time_fn = impl_get_dispatch_time;
  a.hsa_amd_profiling_get_async_copy_time_fn = impl_get_copy_time;
  a.hsa_amd_signal_async_handler_fn = impl_async_handler;
  a.hsa_amd_memory_async_copy_fn = impl_async_copy;
  a.hsa_amd_agent_iterate_memory_pools_fn = impl_iterate_pools;
  a.hsa_amd_memory_pool_get_info_fn = impl_pool_get_info;
  a.hsa_amd_memory_pool_allocate_fn = impl_pool_allocate;
  a.hsa_amd_memory_pool_free_fn = impl_pool_free;
  if (const char* layout = std::getenv("ROCPROF_STANDIN_TABLE"))
    if (std::strcmp(layout, "rocm56") == 0)  // two entries more, as ROCm 5.6 inserted mid-table
      a.version.minor_id = sizeof(AmdExtTable) + 2 * sizeof(void*);
}

void first_init() {
  if (const char* hz = std::getenv("ROCPROF_STANDIN_TICK_HZ"))
    g_tick_hz = std::strtoull(hz, nullptr, 10);
  build_table();
  std::thread(async_loop).detach();
  std::thread(copy_engine).detach();
  standin_load_tools(&g_table.root);
}

const CoreApiTable& core() { return *g_table.root.core_; }
const AmdExtTable& amd() { return *g_table.root.amd_ext_; }

}  // namespace

// ---- exported entry points: each calls through the (possibly intercepted) table ----
extern "C" {
#define API __attribute__((visibility("default")))
// Not HSA: the stand-in GPU's busy time (ns) so far, and in *now the CLOCK_BOOTTIME it was read
// at, for the stand-in rocprofiler-sdk.
API uint64_t standin_hsa_busy_ns(uint64_t* now) {
  std::lock_guard<std::mutex> g(g_busy_mu);
  *now = boottime_ns();
  if (g_executing == 0) return g_busy_ns;
  return g_busy_ns + std::min(*now, g_busy_until) - std::min(*now, g_busy_since);
}
API hsa_status_t hsa_init() {
  std::call_once(g_once, first_init);
  return core().hsa_init_fn();
}
API hsa_status_t hsa_shut_down() { return core().hsa_shut_down_fn(); }
API hsa_status_t hsa_system_get_info(hsa_system_info_t a, void* v) {
  return core().hsa_system_get_info_fn(a, v);
}
API hsa_status_t hsa_iterate_agents(hsa_status_t (*cb)(hsa_agent_t, void*), void* d) {
  return core().hsa_iterate_agents_fn(cb, d);
}
API hsa_status_t hsa_agent_get_info(hsa_agent_t a, hsa_agent_info_t at, void* v) {
  return core().hsa_agent_get_info_fn(a, at, v);
}
API hsa_status_t hsa_queue_create(hsa_agent_t a, uint32_t s, hsa_queue_type32_t t,
                                  void (*cb)(hsa_status_t, hsa_queue_t*, void*), void* d,
                                  uint32_t p, uint32_t g, hsa_queue_t** q) {
  return core().hsa_queue_create_fn(a, s, t, cb, d, p, g, q);
}
API uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t* q, uint64_t n) {
  return core().hsa_queue_add_write_index_screlease_fn(q, n);
}
API uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t* q) {
  return core().hsa_queue_load_read_index_scacquire_fn(q);
}
API hsa_status_t hsa_signal_create(hsa_signal_value_t v, uint32_t n, const hsa_agent_t* c,
                                   hsa_signal_t* s) {
  return core().hsa_signal_create_fn(v, n, c, s);
}
API hsa_status_t hsa_signal_destroy(hsa_signal_t s) { return core().hsa_signal_destroy_fn(s); }
API hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t s) {
  return core().hsa_signal_load_scacquire_fn(s);
}
API void hsa_signal_store_screlease(hsa_signal_t s, hsa_signal_value_t v) {
  core().hsa_signal_store_screlease_fn(s, v);
}
API void hsa_signal_add_screlease(hsa_signal_t s, hsa_signal_value_t v) {
  core().hsa_signal_add_screlease_fn(s, v);
}
API hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t s, hsa_signal_condition_t c,
                                                 hsa_signal_value_t v, uint64_t t,
                                                 hsa_wait_state_t w) {
  return core().hsa_signal_wait_scacquire_fn(s, c, v, t, w);
}
API hsa_status_t hsa_code_object_reader_create_from_memory(const void* c, size_t n,
                                                           hsa_code_object_reader_t* r) {
  return core().hsa_code_object_reader_create_from_memory_fn(c, n, r);
}
API hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t r) {
  return core().hsa_code_object_reader_destroy_fn(r);
}
API hsa_status_t hsa_executable_create_alt(hsa_profile_t p, hsa_default_float_rounding_mode_t m,
                                           const char* o, hsa_executable_t* e) {
  return core().hsa_executable_create_alt_fn(p, m, o, e);
}
API hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t e, hsa_agent_t a,
                                                       hsa_code_object_reader_t r, const char* o,
                                                       hsa_loaded_code_object_t* l) {
  return core().hsa_executable_load_agent_code_object_fn(e, a, r, o, l);
}
API hsa_status_t hsa_executable_freeze(hsa_executable_t e, const char* o) {
  return core().hsa_executable_freeze_fn(e, o);
}
API hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t e, const char* n,
                                                   const hsa_agent_t* a,
                                                   hsa_executable_symbol_t* s) {
  return core().hsa_executable_get_symbol_by_name_fn(e, n, a, s);
}
API hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t s,
                                                hsa_executable_symbol_info_t a, void* v) {
  return core().hsa_executable_symbol_get_info_fn(s, a, v);
}
API hsa_status_t hsa_amd_memory_async_copy(void* d, hsa_agent_t da, const void* s, hsa_agent_t sa,
                                           size_t n, uint32_t nd, const hsa_signal_t* deps,
                                           hsa_signal_t c) {
  return amd().hsa_amd_memory_async_copy_fn(d, da, s, sa, n, nd, deps, c);
}
API hsa_status_t hsa_amd_agent_iterate_memory_pools(
    hsa_agent_t a, hsa_status_t (*cb)(hsa_amd_memory_pool_t, void*), void* d) {
  return amd().hsa_amd_agent_iterate_memory_pools_fn(a, cb, d);
}
API hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t p, size_t n, uint32_t f,
                                              void** ptr) {
  return amd().hsa_amd_memory_pool_allocate_fn(p, n, f, ptr);
}
API hsa_status_t hsa_amd_memory_pool_free(void* p) { return amd().hsa_amd_memory_pool_free_fn(p); }
}
