// GPU work timed through the HSA runtime: kernel dispatches (queue interception), async copies,
// allocations, and the kernel symbols that name dispatches.
//
// Dispatch: hsa_queue_create becomes hsa_amd_queue_intercept_create with profiling on and our
// handler registered; the runtime calls the handler on the submitting thread with the packets
// the application wrote. For each kernel-dispatch packet the handler takes a pooled slot,
// notes what the submitting thread knows (thread, ROCTx range, Python launch site, the HIP
// call it is inside), swaps the packet's completion signal for the slot's own and writes the
// packets on. An async handler on that signal reads the dispatch's start/end
// (hsa_amd_profiling_get_dispatch_time, system ticks), then completes the application's signal
// the way the packet processor would have (decrement by one). Copies work the same way around
// hsa_amd_memory_async_copy. The handler thread only reads times and moves the slot to a done
// list; our own thread names the kernel, resolves the launch site and writes the record, so
// neither the application nor the runtime's signal thread waits on us.
//
// Hot path (submitting thread): a lock-free pop from the slot pool, plain stores, one
// hsa_amd_signal_async_handler registration per dispatch. No lock, no allocation.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capture/amd_layers.hpp"
#include "capture/context.hpp"
#include "capture/markers/markers.hpp"
#include "hsa_state.hpp"
#include "rocprof/clock.hpp"
#include "rocprof/info.hpp"

namespace rocprof::hsa {
namespace {

// ---- queues (leaked: the runtime may call the handler until the queue is destroyed) ----
struct Queue {
  hsa_queue_t* queue = nullptr;
  hsa_agent_t agent{};
  uint32_t id = 0, agent_id = 0;
  uint32_t size = 0;
};
std::mutex g_queue_mu;
std::vector<Queue*> g_queues;
std::atomic<uint32_t> g_next_queue{1};

// The queue's row: extdata keeps the runtime's queue id (hsa_queue_t::id), which is what
// rocprofiler-sdk calls the queue handle and rocprofv3's CSV prints as Queue_Id.
StreamInfo queue_info(const Queue& q) {
  return StreamInfo{q.id, true, "HSA queue " + std::to_string(q.id),
                    "{\"agent_id\":" + std::to_string(q.agent_id) +
                        ",\"size\":" + std::to_string(q.size) +
                        ",\"hsa_queue_id\":" + std::to_string(q.queue->id) + "}"};
}

// ---- slots: one per dispatch or copy in flight ----
struct Slot {
  hsa_signal_t ours{0}, orig{0};
  hsa_agent_t agent{};
  bool copy = false;
  uint32_t tid = 0, region = 0, callsite = 0, queue_id = 0, agent_id = 0;
  uint64_t range_corr = 0;  // the innermost ROCTx range's correlation id (region's)
  uint64_t corr = 0, site_key = 0, kernel_object = 0, dispatch_id = 0;
  uint32_t grid[3] = {}, block[3] = {}, group = 0, priv = 0;
  uint32_t src_agent = 0, dst_agent = 0;
  uint64_t src_addr = 0, dst_addr = 0, bytes = 0;
  uint64_t start = 0, end = 0;  // CLOCK_BOOTTIME ns, set on completion
  bool timed = false;
  std::atomic<uint32_t> next{0};  // free/done list link: index + 1, 0 = end
};
constexpr uint32_t kSlots = 1u << 14;
Slot* g_slots = nullptr;
std::atomic<uint64_t> g_free{0};  // (ABA tag << 32) | (index + 1)
std::atomic<uint32_t> g_done{0};  // index + 1: completions awaiting the writer thread
std::atomic<int64_t> g_inflight{0};
std::atomic<uint64_t> g_no_slot{0}, g_untimed{0}, g_dispatch_ids{1};

uint32_t pop_free() noexcept {
  uint64_t head = g_free.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t top = static_cast<uint32_t>(head);
    if (top == 0) return UINT32_MAX;
    const uint32_t next = g_slots[top - 1].next.load(std::memory_order_relaxed);
    const uint64_t want = (((head >> 32) + 1) << 32) | next;
    if (g_free.compare_exchange_weak(head, want, std::memory_order_acq_rel)) return top - 1;
  }
}

void push_free(uint32_t i) noexcept {
  uint64_t head = g_free.load(std::memory_order_relaxed);
  uint64_t want;
  do {
    g_slots[i].next.store(static_cast<uint32_t>(head), std::memory_order_relaxed);
    want = (((head >> 32) + 1) << 32) | (i + 1);
  } while (!g_free.compare_exchange_weak(head, want, std::memory_order_acq_rel));
}

void push_done(uint32_t i) noexcept {
  uint32_t head = g_done.load(std::memory_order_relaxed);
  do {
    g_slots[i].next.store(head, std::memory_order_relaxed);
  } while (!g_done.compare_exchange_weak(head, i + 1, std::memory_order_acq_rel));
}

// ---- kernel symbols: kernel_object → name, from hsa_executable_freeze ----
struct Symbol {
  uint32_t id = 0;
  uint32_t name_id = 0;  // interned display name: the dispatch's rocpd region name
  std::string name;      // without the code object's ".kd" suffix
  uint32_t kernarg_size = 0, kernarg_align = 0, group = 0, priv = 0;
  uint64_t object = 0;
  bool written = false, keep = true;  // this session
};
std::mutex g_sym_mu;
std::unordered_map<uint64_t, Symbol> g_symbols;
uint32_t g_next_symbol = 1;

// ---- allocations: address → (bytes, agent) for the FREE record ----
std::mutex g_alloc_mu;
std::unordered_map<uint64_t, std::pair<uint64_t, uint32_t>> g_allocs;

// ---- the writer thread ----
std::thread* g_writer = nullptr;
std::mutex g_writer_mu;
std::condition_variable g_writer_cv;
bool g_writer_stop = false;
uint64_t g_dispatches_written = 0, g_copies_written = 0;

// Under g_sym_mu, with a session's context.
void write_symbol(CaptureContext& c, Symbol& s) {
  if (s.written) return;
  s.written = true;
  kernel_names::Name named = g_names.name(s.name.c_str());
  s.keep = named.keep;
  if (!s.keep) return;
  KernelSymbolInfo k;
  k.id = s.id;
  k.kernel_name = s.name;
  k.display_name = std::move(named.display);
  k.kernel_object = s.object;
  k.kernarg_segment_size = s.kernarg_size;
  k.kernarg_segment_alignment = s.kernarg_align;
  k.group_segment_size = s.group;
  k.private_segment_size = s.priv;
  k.extdata = "{\"vendor\":\"AMD\",\"source\":\"hsa_executable_symbol_get_info\"}";
  s.name_id = c.intern(k.display_name);
  c.info(std::move(k));
}

Record base(CaptureContext& c, RecordKind kind, const char* category, uint64_t start, uint64_t end,
            uint32_t tid, uint64_t corr) {
  return make_record(kind, start, end, tid, c.intern(category), corr);
}

const char* copy_name(const Slot& s) {
  const bool src_cpu = s.src_agent == kCpuAgentId, dst_cpu = s.dst_agent == kCpuAgentId;
  if (src_cpu && dst_cpu) return "MEMORY_COPY_HOST_TO_HOST";
  if (src_cpu) return "MEMORY_COPY_HOST_TO_DEVICE";
  if (dst_cpu) return "MEMORY_COPY_DEVICE_TO_HOST";
  return "MEMORY_COPY_DEVICE_TO_DEVICE";
}

void write_done(CaptureContext& c, Slot& s) {
  if (!s.timed) {
    c.drops(s.copy ? "hsa_copy_untimed" : "hsa_dispatch_untimed", 1);
    return;
  }
  const uint32_t callsite = s.callsite != 0 ? s.callsite : resolve_site(s.site_key);
  if (s.copy) {
    Record r = base(c, RecordKind::kMemoryCopy, "MEMORY_COPY", s.start, s.end, s.tid, s.corr);
    r.name_id = c.intern(copy_name(s));
    r.copy.src_agent_id = s.src_agent;
    r.copy.dst_agent_id = s.dst_agent;
    r.copy.src_address = s.src_addr;
    r.copy.dst_address = s.dst_addr;
    r.copy.bytes = s.bytes;
    r.copy.region_name_id = s.region;
    r.copy.range_corr = s.range_corr;
    r.copy.callsite_id = callsite;
    c.emit_waiting(r);
    ++g_copies_written;
    return;
  }
  uint32_t kernel_id = 0, name_id = 0;
  {
    std::lock_guard<std::mutex> g(g_sym_mu);
    auto it = g_symbols.find(s.kernel_object);
    if (it == g_symbols.end()) {
      // A code object loaded outside hsa_executable_freeze (none known): named by its address.
      char name[48];
      std::snprintf(name, sizeof name, "kernel_object_0x%llx",
                    static_cast<unsigned long long>(s.kernel_object));
      Symbol sym;
      sym.id = g_next_symbol++;
      sym.name = name;
      sym.object = s.kernel_object;
      it = g_symbols.emplace(s.kernel_object, sym).first;
    }
    write_symbol(c, it->second);
    if (!it->second.keep) return;
    kernel_id = it->second.id;
    name_id = it->second.name_id;
  }
  Record r = base(c, RecordKind::kKernelDispatch, "KERNEL_DISPATCH", s.start, s.end, s.tid, s.corr);
  r.name_id = name_id;
  KernelData& d = r.kernel;
  d.agent_id = s.agent_id;
  d.queue_id = s.queue_id;
  d.stream_id = 0;  // HIP streams are not visible at the HSA level
  d.kernel_id = kernel_id;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = s.grid[i];  // work-items, as ROCm counts grids
    d.block[i] = s.block[i];
  }
  d.static_shared = s.group;  // the packet's group segment: static + dynamic LDS
  d.local_per_thread = s.priv;
  d.region_name_id = s.region;
  d.range_corr = s.range_corr;
  d.callsite_id = callsite;
  d.dispatch_id = s.dispatch_id;
  c.emit_waiting(r);
  ++g_dispatches_written;
}

// Writes everything completed so far. The writer thread's loop, and stop's last pass.
void drain() {
  uint32_t head = g_done.exchange(0, std::memory_order_acq_rel);
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  while (head != 0) {
    const uint32_t i = head - 1;
    head = g_slots[i].next.load(std::memory_order_relaxed);
    if (c != nullptr) write_done(*c, g_slots[i]);
    push_free(i);
  }
}

void writer_loop() {
  std::unique_lock<std::mutex> lk(g_writer_mu);
  while (!g_writer_stop) {
    g_writer_cv.wait_for(lk, std::chrono::milliseconds(5));
    lk.unlock();
    drain();
    lk.lock();
  }
}

// The runtime's signal thread: read the times, complete the application's signal, hand on.
bool on_complete(hsa_signal_value_t, void* arg) {
  Slot& s = *static_cast<Slot*>(arg);
  if (s.copy) {
    hsa_amd_profiling_async_copy_time_t t{};
    s.timed = g_rt.amd.hsa_amd_profiling_get_async_copy_time_fn(s.ours, &t) == HSA_STATUS_SUCCESS &&
              t.end >= t.start && t.start != 0;
    s.start = to_ns(t.start);
    s.end = to_ns(t.end);
  } else {
    hsa_amd_profiling_dispatch_time_t t{};
    s.timed = g_rt.amd.hsa_amd_profiling_get_dispatch_time_fn(s.agent, s.ours, &t) ==
                  HSA_STATUS_SUCCESS &&
              t.end >= t.start && t.start != 0;
    s.start = to_ns(t.start);
    s.end = to_ns(t.end);
  }
  const hsa_signal_t orig = s.orig;
  g_rt.core.hsa_signal_store_relaxed_fn(s.ours, 1);
  push_done(static_cast<uint32_t>(&s - g_slots));
  if (orig.handle != 0) g_rt.core.hsa_signal_subtract_screlease_fn(orig, 1);
  g_inflight.fetch_sub(1, std::memory_order_release);
  return false;  // one-shot
}

// A slot with what the calling thread knows now; UINT32_MAX when none is free (counted).
uint32_t take_slot(bool copy) noexcept {
  const uint32_t i = g_slots != nullptr ? pop_free() : UINT32_MAX;
  if (i == UINT32_MAX) {
    g_no_slot.fetch_add(1, std::memory_order_relaxed);
    return i;
  }
  Slot& s = g_slots[i];
  if (s.ours.handle == 0 &&
      g_rt.core.hsa_signal_create_fn(1, 0, nullptr, &s.ours) != HSA_STATUS_SUCCESS) {
    s.ours.handle = 0;
    push_free(i);
    g_no_slot.fetch_add(1, std::memory_order_relaxed);
    return UINT32_MAX;
  }
  s.copy = copy;
  s.tid = os_tid();
  const uint64_t hip = current_hip_correlation();
  s.corr = hip != 0 ? hip : next_correlation();
  s.range_corr = 0;
  s.region =
      g_on.region.load(std::memory_order_relaxed) ? markers::current_range(&s.range_corr) : 0;
  s.callsite = 0;
  s.site_key = capture_site(&s.callsite);
  s.timed = false;
  return i;
}

bool tracing(const std::atomic<bool>& what) noexcept {
  if (!what.load(std::memory_order_relaxed)) return false;
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  return c != nullptr && !c->paused();
}

// ---- queue interception ----
void on_submit(const void* packets, uint64_t count, uint64_t, void* data,
               hsa_amd_queue_intercept_packet_writer writer) {
  if (!tracing(g_on.kernels)) return writer(packets, count);
  const Queue& q = *static_cast<const Queue*>(data);
  const auto* in = static_cast<const hsa_kernel_dispatch_packet_t*>(packets);
  constexpr uint64_t kChunk = 32;  // AQL packets are 64 bytes: 2 KiB of stack
  static_assert(kChunk <= amd_layers::Handoff::kMax, "a batch's dispatches fit the handoff");
  hsa_kernel_dispatch_packet_t out[kChunk];
  // rocprofiler-sdk's interceptor runs next: it learns our ids of the batch's dispatches.
  amd_layers::Handoff& handoff = amd_layers::t_handoff;
  const bool hand = amd_layers::g_sdk_makes_queues.load(std::memory_order_relaxed);
  for (uint64_t at = 0; at < count; at += kChunk) {
    const uint64_t n = count - at < kChunk ? count - at : kChunk;
    std::memcpy(out, in + at, n * sizeof(hsa_kernel_dispatch_packet_t));
    uint32_t taken[kChunk];
    uint64_t ntaken = 0;
    handoff.count = handoff.taken = 0;
    for (uint64_t j = 0; j < n; ++j) {
      hsa_kernel_dispatch_packet_t& p = out[j];
      const unsigned type =
          (p.header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
      if (type != HSA_PACKET_TYPE_KERNEL_DISPATCH) continue;
      const uint32_t i = take_slot(false);
      if (i != UINT32_MAX)
        g_slots[i].dispatch_id = g_dispatch_ids.fetch_add(1, std::memory_order_relaxed);
      if (hand) {  // 0: a dispatch we do not record
        handoff.dispatch[handoff.count] = i != UINT32_MAX ? g_slots[i].dispatch_id : 0;
        handoff.correlation[handoff.count++] = i != UINT32_MAX ? g_slots[i].corr : 0;
      }
      if (i == UINT32_MAX) continue;  // passes untimed (counted)
      Slot& s = g_slots[i];
      s.agent = q.agent;
      s.agent_id = q.agent_id;
      s.queue_id = q.id;
      s.kernel_object = p.kernel_object;
      s.grid[0] = p.grid_size_x, s.grid[1] = p.grid_size_y, s.grid[2] = p.grid_size_z;
      s.block[0] = p.workgroup_size_x, s.block[1] = p.workgroup_size_y,
      s.block[2] = p.workgroup_size_z;
      s.group = p.group_segment_size;
      s.priv = p.private_segment_size;
      s.orig = p.completion_signal;
      p.completion_signal = s.ours;
      taken[ntaken++] = i;
    }
    g_inflight.fetch_add(static_cast<int64_t>(ntaken), std::memory_order_acq_rel);
    writer(out, n);
    handoff.count = handoff.taken = 0;
    // After the write: a dispatch already finished satisfies the condition at registration.
    for (uint64_t j = 0; j < ntaken; ++j)
      g_rt.amd.hsa_amd_signal_async_handler_fn(g_slots[taken[j]].ours, HSA_SIGNAL_CONDITION_LT, 1,
                                               on_complete, &g_slots[taken[j]]);
  }
}

// Our interceptor on `queue` (an intercept queue) with profiling on, and its row.
hsa_status_t adopt(hsa_queue_t* queue, hsa_agent_t agent, uint32_t size) {
  auto* q = new Queue();
  q->queue = queue;
  q->agent = agent;
  q->agent_id = agent_id(agent);
  q->size = size;
  const hsa_status_t st = g_rt.amd.hsa_amd_queue_intercept_register_fn(queue, on_submit, q);
  if (st != HSA_STATUS_SUCCESS) {
    delete q;  // never registered
    return st;
  }
  q->id = g_next_queue.fetch_add(1);
  g_rt.amd.hsa_amd_profiling_set_profiler_enabled_fn(queue, 1);
  std::lock_guard<std::mutex> g(g_queue_mu);
  g_queues.push_back(q);
  if (CaptureContext* c = g_ctx.load(std::memory_order_acquire)) {
    c->info(queue_info(*q));
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                          void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                          uint32_t private_segment_size, uint32_t group_segment_size,
                          hsa_queue_t** queue) {
  if (!agent_is_gpu(agent))
    return g_rt.core.hsa_queue_create_fn(agent, size, type, callback, data, private_segment_size,
                                         group_segment_size, queue);
  if (amd_layers::g_sdk_makes_queues.load(std::memory_order_acquire)) {
    // rocprofiler-sdk samples PCs (amd_layers.hpp): the queue is the SDK's intercept queue,
    // made by the layer below us; our interceptor joins it and runs before the SDK's.
    const hsa_status_t st = g_rt.core.hsa_queue_create_fn(
        agent, size, type, callback, data, private_segment_size, group_segment_size, queue);
    if (st == HSA_STATUS_SUCCESS && adopt(*queue, agent, size) != HSA_STATUS_SUCCESS) {
      static std::atomic<bool> said{false};
      if (!said.exchange(true))
        std::fprintf(stderr,
                     "rocprof: a GPU queue made by rocprofiler-sdk is no intercept queue: its "
                     "kernels are PC-sampled but not traced\n");
    }
    return st;
  }
  hsa_status_t st = g_rt.amd.hsa_amd_queue_intercept_create_fn(
      agent, size, type, callback, data, private_segment_size, group_segment_size, queue);
  if (st != HSA_STATUS_SUCCESS) {
    std::fprintf(stderr,
                 "rocprof: an HSA queue could not be intercepted (status %d): its kernels "
                 "are not traced\n",
                 static_cast<int>(st));
    return g_rt.core.hsa_queue_create_fn(agent, size, type, callback, data, private_segment_size,
                                         group_segment_size, queue);
  }
  adopt(*queue, agent, size);
  return st;
}

// ---- async copies ----
template <class Call>
hsa_status_t traced_copy(uint32_t src_agent, uint32_t dst_agent, uint64_t src, uint64_t dst,
                         uint64_t bytes, hsa_signal_t completion, Call call) {
  if (!tracing(g_on.copies)) return call(completion);
  const uint32_t i = take_slot(true);
  if (i == UINT32_MAX) return call(completion);
  Slot& s = g_slots[i];
  s.src_agent = src_agent;
  s.dst_agent = dst_agent;
  s.src_addr = src;
  s.dst_addr = dst;
  s.bytes = bytes;
  s.orig = completion;
  g_inflight.fetch_add(1, std::memory_order_acq_rel);
  const hsa_status_t st = call(s.ours);
  if (st != HSA_STATUS_SUCCESS) {  // nothing was queued: the slot goes back unused
    g_inflight.fetch_sub(1, std::memory_order_acq_rel);
    push_free(i);
    return st;
  }
  g_rt.amd.hsa_amd_signal_async_handler_fn(s.ours, HSA_SIGNAL_CONDITION_LT, 1, on_complete, &s);
  return st;
}

hsa_status_t async_copy(void* dst, hsa_agent_t dst_agent, const void* src, hsa_agent_t src_agent,
                        size_t size, uint32_t num_deps, const hsa_signal_t* deps,
                        hsa_signal_t completion) {
  return traced_copy(agent_id(src_agent), agent_id(dst_agent), reinterpret_cast<uint64_t>(src),
                     reinterpret_cast<uint64_t>(dst), size, completion, [&](hsa_signal_t sig) {
                       return g_rt.amd.hsa_amd_memory_async_copy_fn(dst, dst_agent, src, src_agent,
                                                                    size, num_deps, deps, sig);
                     });
}

hsa_status_t async_copy_rect(const hsa_pitched_ptr_t* dst, const hsa_dim3_t* dst_offset,
                             const hsa_pitched_ptr_t* src, const hsa_dim3_t* src_offset,
                             const hsa_dim3_t* range, hsa_agent_t copy_agent,
                             hsa_amd_copy_direction_t dir, uint32_t num_deps,
                             const hsa_signal_t* deps, hsa_signal_t completion) {
  const uint32_t gpu = agent_id(copy_agent);
  const uint32_t src_agent = dir == hsaHostToDevice || dir == hsaHostToHost ? kCpuAgentId : gpu;
  const uint32_t dst_agent = dir == hsaDeviceToHost || dir == hsaHostToHost ? kCpuAgentId : gpu;
  const uint64_t bytes = range ? uint64_t(range->x) * range->y * range->z : 0;
  return traced_copy(src_agent, dst_agent, reinterpret_cast<uint64_t>(src ? src->base : nullptr),
                     reinterpret_cast<uint64_t>(dst ? dst->base : nullptr), bytes, completion,
                     [&](hsa_signal_t sig) {
                       return g_rt.amd.hsa_amd_memory_async_copy_rect_fn(
                           dst, dst_offset, src, src_offset, range, copy_agent, dir, num_deps, deps,
                           sig);
                     });
}

// ---- allocations (application threads, outside any dispatch path) ----
void emit_alloc(uint32_t op, uint32_t agent, uint64_t address, uint64_t bytes, uint64_t start) {
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) return;
  Record r = base(*c, RecordKind::kMemoryAlloc, "MEMORY_ALLOCATION", start, now_ns(), os_tid(),
                  current_hip_correlation() ? current_hip_correlation() : next_correlation());
  r.alloc.agent_id = agent;
  r.alloc.op = op;
  r.alloc.level = 0;  // REAL
  r.alloc.address = address;
  r.alloc.bytes = bytes;
  c->emit(r);
}

hsa_status_t pool_allocate(hsa_amd_memory_pool_t pool, size_t size, uint32_t flags, void** ptr) {
  const uint64_t start = now_ns();
  const hsa_status_t st = g_rt.amd.hsa_amd_memory_pool_allocate_fn(pool, size, flags, ptr);
  if (st == HSA_STATUS_SUCCESS && tracing(g_on.allocations)) {
    const uint32_t agent = pool_agent_id(pool);
    {
      std::lock_guard<std::mutex> g(g_alloc_mu);
      g_allocs[reinterpret_cast<uint64_t>(*ptr)] = {size, agent};
    }
    emit_alloc(0, agent, reinterpret_cast<uint64_t>(*ptr), size, start);
  }
  return st;
}

hsa_status_t pool_free(void* ptr) {
  const uint64_t start = now_ns();
  const hsa_status_t st = g_rt.amd.hsa_amd_memory_pool_free_fn(ptr);
  if (st == HSA_STATUS_SUCCESS && tracing(g_on.allocations)) {
    std::pair<uint64_t, uint32_t> known{0, 0};
    {
      std::lock_guard<std::mutex> g(g_alloc_mu);
      auto it = g_allocs.find(reinterpret_cast<uint64_t>(ptr));
      if (it != g_allocs.end()) {
        known = it->second;
        g_allocs.erase(it);
      }
    }
    emit_alloc(1, known.second, reinterpret_cast<uint64_t>(ptr), known.first, start);
  }
  return st;
}

// ---- kernel symbols ----
hsa_status_t each_symbol(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t sym, void*) {
  auto info = [&](hsa_executable_symbol_info_t attr, void* out) {
    return g_rt.core.hsa_executable_symbol_get_info_fn(sym, attr, out);
  };
  hsa_symbol_kind_t kind = HSA_SYMBOL_KIND_VARIABLE;
  if (info(HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind) != HSA_STATUS_SUCCESS ||
      kind != HSA_SYMBOL_KIND_KERNEL)
    return HSA_STATUS_SUCCESS;
  uint32_t length = 0;
  info(HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &length);
  std::string name(length, '\0');
  info(HSA_EXECUTABLE_SYMBOL_INFO_NAME, name.data());
  name.resize(std::strlen(name.c_str()));
  name = kernel_names::without_kd(name);
  Symbol s;
  info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &s.object);
  info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &s.kernarg_size);
  info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, &s.kernarg_align);
  info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &s.group);
  info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &s.priv);
  s.name = std::move(name);
  std::lock_guard<std::mutex> g(g_sym_mu);
  auto it = g_symbols.find(s.object);
  if (it != g_symbols.end() && it->second.name == s.name) return HSA_STATUS_SUCCESS;
  s.id = g_next_symbol++;
  Symbol& stored = g_symbols[s.object] = std::move(s);
  if (CaptureContext* c = g_ctx.load(std::memory_order_acquire)) write_symbol(*c, stored);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t each_agent_symbols(hsa_agent_t agent, void* exe) {
  g_rt.core.hsa_executable_iterate_agent_symbols_fn(*static_cast<hsa_executable_t*>(exe), agent,
                                                    each_symbol, nullptr);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t executable_freeze(hsa_executable_t exe, const char* options) {
  const hsa_status_t st = g_rt.core.hsa_executable_freeze_fn(exe, options);
  if (st == HSA_STATUS_SUCCESS && g_rt.core.hsa_executable_iterate_agent_symbols_fn != nullptr)
    g_rt.core.hsa_iterate_agents_fn(each_agent_symbols, &exe);
  return st;
}

template <class T>
void replace(T* entry, T ours) {
  if (__atomic_load_n(entry, __ATOMIC_ACQUIRE) != nullptr)
    __atomic_store_n(entry, ours, __ATOMIC_RELEASE);
}

}  // namespace

void install_interceptors() {
  if (g_slots == nullptr) {
    g_slots = new Slot[kSlots];
    for (uint32_t i = kSlots; i-- > 0;) push_free(i);
  }
  CoreApiTable* core = g_rt.table->core_;
  AmdExtTable* amd = g_rt.table->amd_ext_;
  if (g_rt.amd.hsa_amd_queue_intercept_create_fn && g_rt.amd.hsa_amd_queue_intercept_register_fn &&
      g_rt.amd.hsa_amd_signal_async_handler_fn && g_rt.amd.hsa_amd_profiling_get_dispatch_time_fn)
    replace(&core->hsa_queue_create_fn, &queue_create);
  if (g_rt.amd.hsa_amd_profiling_get_async_copy_time_fn) {
    replace(&amd->hsa_amd_memory_async_copy_fn, &async_copy);
    replace(&amd->hsa_amd_memory_async_copy_rect_fn, &async_copy_rect);
  }
  replace(&amd->hsa_amd_memory_pool_allocate_fn, &pool_allocate);
  replace(&amd->hsa_amd_memory_pool_free_fn, &pool_free);
  replace(&core->hsa_executable_freeze_fn, &executable_freeze);
}

void dispatch_session_start(CaptureContext& c) {
  {
    std::lock_guard<std::mutex> g(g_sym_mu);
    for (auto& kv : g_symbols) {
      kv.second.written = false;
      write_symbol(c, kv.second);
    }
  }
  {
    std::lock_guard<std::mutex> g(g_queue_mu);
    for (const Queue* q : g_queues) c.info(queue_info(*q));
  }
  if (g_rt.amd.hsa_amd_profiling_async_copy_enable_fn)
    g_rt.amd.hsa_amd_profiling_async_copy_enable_fn(true);
  g_no_slot.store(0);
  g_dispatches_written = g_copies_written = 0;
  g_writer_stop = false;
  g_writer = new std::thread(writer_loop);
}

void dispatch_session_stop(CaptureContext& c) {
  // GPU work submitted while tracing still completes into our signals: wait for it (bounded:
  // a hung kernel must not hang the exit), then write it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (g_inflight.load(std::memory_order_acquire) > 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    std::lock_guard<std::mutex> g(g_writer_mu);
    g_writer_stop = true;
  }
  g_writer_cv.notify_all();
  if (g_writer) g_writer->join();
  delete g_writer;
  g_writer = nullptr;
  drain();
  const int64_t pending = g_inflight.load();
  if (pending > 0) c.drops("hsa_not_completed_at_exit", static_cast<uint64_t>(pending));
  if (const uint64_t n = g_no_slot.exchange(0)) c.drops("hsa_slots_exhausted", n);
  c.info(MetadataInfo{"rocprof.hsa.dispatches", std::to_string(g_dispatches_written)});
  c.info(MetadataInfo{"rocprof.hsa.copies", std::to_string(g_copies_written)});
}

}  // namespace rocprof::hsa
