// CUPTI activity buffers → rocprof records, on CUPTI's buffer thread (or the thread calling
// cuptiActivityFlushAll). Descriptive rows (agents, streams/queues, kernel symbols) are
// written the first time a record names them.
//
// Mapping to the rocpd schema (kept in one place so readers can find it):
//   kernel            kernel_dispatch: grid = gridDim*blockDim (ROCm's work-items), workgroup =
//                     blockDim, group_segment_size = static + dynamic shared memory,
//                     private_segment_size = local memory per thread, dispatch_id = gridId
//   kernel symbol     kernel_name = mangled, display_name = demangled (-T truncated, -M mangled),
//                     group_segment_size = static shared memory, private_segment_size = local
//                     memory per thread, arch_vgpr_count = registers per thread (the nearest
//                     column: NVIDIA registers are per-thread, like VGPRs), sgpr/accum = 0;
//                     extdata: registers_per_thread, static_shared_memory, local_memory_per_thread
//   memcpy / memset   memory_copy: name MEMORY_COPY_<SRC>_TO_<DST> / MEMORY_SET; the memory
//                     kind of each side (pageable, pinned, device ...) in extdata
//   MEMORY2           memory_allocate ALLOC/FREE, level REAL; device memory on the GPU agent,
//                     pinned/pageable host memory on the CPU agent
//   RUNTIME / DRIVER  region, category CUDA_RUNTIME_API / CUDA_DRIVER_API, name without _vNNNN;
//                     the Python call site where the ENTER callback captured one (launches,
//                     copies, synchronisations)
//   SYNCHRONIZATION   region, category CUDA_SYNCHRONIZATION, name e.g. STREAM_SYNCHRONIZE
//   queue = stream    CUDA has no separate hardware-queue notion visible to CUPTI
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "capture/context.hpp"
#include "counters.hpp"
#include "cupti_state.hpp"
#include "graphs.hpp"
#include "rocprof/info.hpp"

namespace rocprof::cupti {
namespace {

// ---- buffer pool: lock-free slots, so a request on an application thread never waits ----
constexpr int kPoolSlots = 32;
std::atomic<uint8_t*> g_pool[kPoolSlots];

uint8_t* take_buffer(size_t bytes) {
  for (auto& slot : g_pool)
    if (uint8_t* b = slot.exchange(nullptr, std::memory_order_acq_rel)) return b;
  return static_cast<uint8_t*>(std::aligned_alloc(8, bytes));
}

void give_buffer(uint8_t* b) {
  for (auto& slot : g_pool) {
    uint8_t* expected = nullptr;
    if (slot.compare_exchange_strong(expected, b, std::memory_order_acq_rel)) return;
  }
  std::free(b);
}

// ---- per-session state, touched only under g_mu (buffer completions may overlap) ----
// Function-local and leaked: a native program's autostart session can reach this file
// before its static initialisers have run, and CUPTI may call back after static destructors.
struct KernelEntry {
  std::string name;
  uint32_t id = 0;
  uint32_t name_id = 0;  // interned display name: the dispatch's region name (rocpd)
  bool keep = true;
};
struct State {
  std::mutex mu;
  std::unordered_map<const char*, KernelEntry*> kernel_by_ptr;
  std::unordered_map<std::string, KernelEntry*> kernel_by_name;
  std::unordered_set<uint32_t> streams, devices;
  std::unordered_map<uint64_t, uint32_t> api_names;  // (domain << 32 | cbid) → string id
  std::unordered_map<uint32_t, uint32_t> cupti_tid;  // CUPTI threadId → OS tid
  uint32_t next_kernel_id = 1;
};
State& state() {
  static State* s = new State();
  return *s;
}
#define g_mu (state().mu)
#define g_kernel_by_ptr (state().kernel_by_ptr)
#define g_kernel_by_name (state().kernel_by_name)
#define g_streams (state().streams)
#define g_devices (state().devices)
#define g_api_names (state().api_names)
#define g_cupti_tid (state().cupti_tid)
#define g_next_kernel_id (state().next_kernel_id)
std::atomic<CaptureContext*> g_collector{nullptr};  // the session's context, while one runs

// Never drops: a completion can carry more records than the buffer budget holds, and this
// is CUPTI's delivery thread, not an application thread, so it may wait for the writer.
void put(CaptureContext& c, const Record& r) { c.emit_waiting(r); }

std::string without_version(const char* name) {
  std::string s = name ? name : "unknown";
  const size_t v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() &&
      s.find_first_not_of("0123456789", v + 2) == std::string::npos)
    s.erase(v);
  return s;
}

KernelEntry* kernel_entry(CaptureContext& c, const CUpti_ActivityKernel10& k) {
  const char* name = k.name ? k.name : "unknown";
  auto it = g_kernel_by_ptr.find(name);
  if (it != g_kernel_by_ptr.end() && it->second->name == name) return it->second;
  auto jt = g_kernel_by_name.find(name);
  KernelEntry* e;
  if (jt != g_kernel_by_name.end()) {
    e = jt->second;
  } else {
    e = new KernelEntry();
    e->name = name;
    e->id = g_next_kernel_id++;
    kernel_names::Name named = g_names.name(name);
    e->keep = named.keep;
    KernelSymbolInfo info;
    info.id = e->id;
    info.kernel_name = name;
    info.display_name = std::move(named.display);
    info.group_segment_size = static_cast<uint32_t>(k.staticSharedMemory);
    info.private_segment_size = k.localMemoryPerThread;
    info.arch_vgpr_count = k.registersPerThread;
    char ext[256];
    std::snprintf(ext, sizeof ext,
                  "{\"registers_per_thread\":%u,\"static_shared_memory\":%d,"
                  "\"local_memory_per_thread\":%u,\"vendor\":\"NVIDIA\"}",
                  k.registersPerThread, k.staticSharedMemory, k.localMemoryPerThread);
    info.extdata = ext;
    e->name_id = c.intern(info.display_name);
    if (e->keep) c.info(std::move(info));
    g_kernel_by_name.emplace(e->name, e);
  }
  g_kernel_by_ptr[name] = e;
  return e;
}

void see_stream(CaptureContext& c, uint32_t stream, uint32_t context, uint32_t device) {
  if (!g_streams.insert(stream).second) return;
  const std::string name = "CUDA stream " + std::to_string(stream);
  const std::string ext =
      "{\"context_id\":" + std::to_string(context) + ",\"device\":" + std::to_string(device) + "}";
  c.info(StreamInfo{stream, false, name, ext});
  c.info(StreamInfo{stream, true, name, ext});
}

void see_device(CaptureContext& c, uint32_t device) {
  if (!g_devices.insert(device).second) return;
  AgentInfo a;  // replaced by the DEVICE record's fuller row when CUPTI delivers one
  a.id = gpu_agent_id(device);
  a.absolute_index = a.logical_index = a.type_index = device;
  a.name = a.product_name = "NVIDIA GPU " + std::to_string(device);
  a.vendor_name = "NVIDIA";
  c.info(std::move(a));
}

void device_row(CaptureContext& c, const CUpti_ActivityDevice5& d) {
  g_devices.insert(d.id);
  AgentInfo a;
  a.id = gpu_agent_id(d.id);
  a.absolute_index = a.logical_index = a.type_index = d.id;
  char uuid[64];
  const auto* u = reinterpret_cast<const unsigned char*>(d.uuid.bytes);
  std::snprintf(uuid, sizeof uuid,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  a.uuid = uuid;
  a.name = a.product_name = d.name ? d.name : "NVIDIA GPU";
  a.model_name =
      "sm_" + std::to_string(d.computeCapabilityMajor) + std::to_string(d.computeCapabilityMinor);
  a.vendor_name = "NVIDIA";
  // Ours first, then the same facts under the names ROCm's agent info uses (rocprofv3's
  // agent_info.csv reads them): an SM is a CU, a warp a wavefront, a block a workgroup.
  // Bandwidth (KB/s) and warps per SM are also the device-property peaks `rocpd sol` falls
  // back to.
  char ext[1536];
  std::snprintf(
      ext, sizeof ext,
      "{\"compute_capability\":\"%u.%u\",\"multiprocessors\":%u,\"global_memory_bytes\":%llu,"
      "\"l2_cache_bytes\":%u,\"core_clock_khz\":%u,\"max_threads_per_block\":%u,"
      "\"global_memory_bandwidth_kbps\":%llu,\"max_warps_per_multiprocessor\":%u,"
      "\"cu_count\":%u,\"wave_front_size\":%u,\"max_waves_per_cu\":%u,"
      "\"lds_size_in_kb\":%u,\"workgroup_max_size\":%u,\"local_mem_size\":%llu,"
      "\"max_engine_clk_fcompute\":%u,\"workgroup_max_dim_x\":%u,\"workgroup_max_dim_y\":%u,"
      "\"workgroup_max_dim_z\":%u,\"grid_max_dim_x\":%u,\"grid_max_dim_y\":%u,"
      "\"grid_max_dim_z\":%u,\"grid_max_size\":%llu,\"device_id\":%u,\"vendor_id\":4318}",
      d.computeCapabilityMajor, d.computeCapabilityMinor, d.numMultiprocessors,
      static_cast<unsigned long long>(d.globalMemorySize), d.l2CacheSize, d.coreClockRate,
      d.maxThreadsPerBlock, static_cast<unsigned long long>(d.globalMemoryBandwidth),
      d.maxWarpsPerMultiprocessor, d.numMultiprocessors, d.numThreadsPerWarp,
      d.maxWarpsPerMultiprocessor, d.maxSharedMemoryPerMultiprocessor / 1024, d.maxThreadsPerBlock,
      static_cast<unsigned long long>(d.globalMemorySize), d.coreClockRate / 1000, d.maxBlockDimX,
      d.maxBlockDimY, d.maxBlockDimZ, d.maxGridDimX, d.maxGridDimY, d.maxGridDimZ,
      static_cast<unsigned long long>(d.maxGridDimX) * d.maxBlockDimX, d.id);
  a.extdata = ext;
  c.info(std::move(a));
}

const char* copy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "MEMORY_COPY_HOST_TO_DEVICE";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "MEMORY_COPY_DEVICE_TO_HOST";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "MEMORY_COPY_HOST_TO_HOST";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "MEMORY_COPY_DEVICE_TO_DEVICE";
    default:
      return "MEMORY_COPY_NONE";
  }
}

MemoryKind memory_kind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return MemoryKind::kPageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return MemoryKind::kPinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return MemoryKind::kDevice;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return MemoryKind::kArray;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return MemoryKind::kManaged;
    default:
      return MemoryKind::kUnknown;
  }
}

const char* sync_name(uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "EVENT_SYNCHRONIZE";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "STREAM_WAIT_EVENT";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "STREAM_SYNCHRONIZE";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "CONTEXT_SYNCHRONIZE";
    default:
      return "SYNCHRONIZE";
  }
}

// GPU records whose launch the ENTER callback did not see (or whose slot a newer launch took
// before the record arrived): they carry no thread, range or line. Counted, never silent.
std::atomic<uint64_t> g_unattributed{0};

struct Launch {
  uint32_t tid = 0, region = 0, callsite = 0;
  uint64_t range_corr = 0;
  bool paused = false, known = false;
};

// `launched`: a kernel, copy or set, whose launch always had an ENTER callback (API records
// mostly have none): only these are counted as unattributed when no slot holds them.
Launch launch_of(uint32_t corr, uint64_t start, bool launched = false) {
  Launch l;
  uint64_t key = 0;
  l.known = launch_info(corr, &l.tid, &l.region, &l.callsite, &l.paused, &key, &l.range_corr);
  // Launched from Python with a chain first seen then: its names/lines are resolved now.
  if (l.known && l.callsite == 0 && key != 0 && !l.paused) l.callsite = resolve_site(key);
  if (!l.known) {
    l.paused = paused_at(start);
    if (launched && g_settings.callbacks > 0 && !l.paused)
      g_unattributed.fetch_add(1, std::memory_order_relaxed);
  }
  return l;
}

Record base(CaptureContext& c, RecordKind kind, const char* category, uint64_t start, uint64_t end,
            uint32_t tid, uint64_t corr) {
  return make_record(kind, start, end, tid, c.intern(category), corr);
}

// A kernel of a graph replay: its ids, and the Python line and ROCTx range of its node's
// capture (graphs.hpp) in place of the replay call's, when the node was seen being captured.
void graph_kernel(uint32_t graph_id, uint64_t node_id, KernelData* d) {
  d->graph_id = graph_id;
  d->graph_node_id = node_id != 0 ? graphs::node_number(node_id) : 0;
  graphs::NodeSite site;
  const bool known = graphs::node_site(node_id, &site);
  if (known) {
    if (site.callsite == 0 && site.key != 0) {
      site.callsite = resolve_site(site.key);
      if (site.callsite != 0) graphs::set_callsite(node_id, site.callsite);
    }
    d->callsite_id = site.callsite;
    d->region_name_id = site.region;
    d->range_corr = site.range_corr;
  }
  graphs::count_kernel(known && (site.callsite != 0 || site.region != 0));
}

// The kernel symbol a replay span is named by: one per graph ("CUDA graph 3").
uint32_t graph_symbol(CaptureContext& c, uint32_t graph_id, uint32_t* name_id) {
  const std::string name = "CUDA graph " + std::to_string(graph_id);
  auto it = g_kernel_by_name.find(name);
  KernelEntry* e;
  if (it != g_kernel_by_name.end()) {
    e = it->second;
  } else {
    e = new KernelEntry();
    e->name = name;
    e->id = g_next_kernel_id++;
    KernelSymbolInfo info;
    info.id = e->id;
    info.kernel_name = info.display_name = name;
    info.extdata = "{\"graph_id\":" + std::to_string(graph_id) + ",\"vendor\":\"NVIDIA\"}";
    e->name_id = c.intern(name);
    c.info(std::move(info));
    g_kernel_by_name.emplace(e->name, e);
  }
  *name_id = e->name_id;
  return e->id;
}

// GPU work CUPTI could not time (still in flight at a forced flush, as the end of a window or
// of the session makes one) comes with start = end = 0: it has no place on a timeline, and
// would stretch every time span down to 0. Counted and said, not stored.
bool untimed(CaptureContext& c, uint64_t start, uint64_t end) {
  if (start != 0 || end != 0) return false;
  c.drops("cupti_untimed_gpu_work", 1);
  return true;
}

// What a copy and a set (CUpti_ActivityMemcpy6, CUpti_ActivityMemset4) have alike: a
// kMemoryCopy record on the device's own agent at both ends, its stream, size and launch.
// False: not kept (launched while paused, or untimed).
template <class M>
bool copy_record(CaptureContext& c, const M& m, Record* r) {
  const Launch l = launch_of(m.correlationId, m.start, true);
  if (l.paused || untimed(c, m.start, m.end)) return false;
  see_device(c, m.deviceId);
  see_stream(c, m.streamId, m.contextId, m.deviceId);
  *r = base(c, RecordKind::kMemoryCopy, "MEMORY_COPY", m.start, m.end, l.tid, m.correlationId);
  r->copy.src_agent_id = r->copy.dst_agent_id = gpu_agent_id(m.deviceId);
  r->copy.stream_id = r->copy.queue_id = m.streamId;
  r->copy.bytes = m.bytes;
  r->copy.region_name_id = l.region;
  r->copy.range_corr = l.range_corr;
  r->copy.callsite_id = l.callsite;
  return true;
}

}  // namespace

void map_activity(CaptureContext& c, const CUpti_Activity* rec) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      // A counter pass's replay hands a launch's record over again; a graph replay's kernels
      // all share the cudaGraphLaunch's correlation id and are never counter-replayed.
      if (k.graphNodeId == 0 && !counters::first_kernel_record(k.correlationId)) return;
      // Under counter collection (kernel replay) CUPTI hands the kernels over untimed (seen
      // on the H200 host): a profiled kernel takes the times its counters gave
      // (counters.hpp); any other is kept as given, for counter values may attach to it.
      uint64_t start = k.start, end = k.end;
      const bool replay = counters::replaying();
      if (replay && start == 0 && end == 0) counters::kernel_time(k.correlationId, &start, &end);
      const Launch l = launch_of(k.correlationId, start, true);
      if (l.paused) return;
      KernelEntry* e = kernel_entry(c, k);
      if (!e->keep || (!replay && untimed(c, start, end))) return;
      see_device(c, k.deviceId);
      see_stream(c, k.streamId, k.contextId, k.deviceId);
      Record r = base(c, RecordKind::kKernelDispatch, "KERNEL_DISPATCH", start, end, l.tid,
                      k.correlationId);
      r.name_id = e->name_id;
      KernelData& d = r.kernel;
      d.agent_id = gpu_agent_id(k.deviceId);
      d.stream_id = d.queue_id = k.streamId;
      d.kernel_id = e->id;
      const int32_t grid[3] = {k.gridX, k.gridY, k.gridZ},
                    block[3] = {k.blockX, k.blockY, k.blockZ};
      for (int i = 0; i < 3; ++i) {
        d.grid[i] = static_cast<uint32_t>(grid[i]) * static_cast<uint32_t>(block[i]);
        d.block[i] = static_cast<uint32_t>(block[i]);
      }
      d.static_shared = static_cast<uint32_t>(k.staticSharedMemory);
      d.dynamic_shared = static_cast<uint32_t>(k.dynamicSharedMemory);
      d.local_per_thread = k.localMemoryPerThread;
      d.registers = k.registersPerThread;
      d.region_name_id = l.region;
      d.range_corr = l.range_corr;
      d.callsite_id = l.callsite;
      d.dispatch_id = static_cast<uint64_t>(k.gridId);
      if (k.graphId != 0 || k.graphNodeId != 0) graph_kernel(k.graphId, k.graphNodeId, &d);
      put(c, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      // --graph-trace graph: a whole replay, on its stream, as one dispatch named by the graph.
      const auto& g = *reinterpret_cast<const CUpti_ActivityGraphTrace2*>(rec);
      const Launch l = launch_of(g.correlationId, g.start, true);
      if (l.paused) return;
      if (untimed(c, g.start, g.end)) return;
      see_device(c, g.deviceId);
      see_stream(c, g.streamId, g.contextId, g.deviceId);
      Record r = base(c, RecordKind::kKernelDispatch, "KERNEL_DISPATCH", g.start, g.end, l.tid,
                      g.correlationId);
      KernelData& d = r.kernel;
      d.kernel_id = graph_symbol(c, g.graphId, &r.name_id);
      d.agent_id = gpu_agent_id(g.deviceId);
      d.stream_id = d.queue_id = g.streamId;
      d.region_name_id = l.region;
      d.range_corr = l.range_corr;
      d.callsite_id = l.callsite;
      d.graph_id = g.graphId;
      graphs::count_span();
      put(c, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      Record r;
      if (!copy_record(c, m, &r)) return;
      r.name_id = c.intern(copy_name(m.copyKind));
      const uint32_t gpu = gpu_agent_id(m.deviceId);
      const bool from_host = m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ||
                             m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOA ||
                             m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
      const bool to_host = m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ||
                           m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_ATOH ||
                           m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
      r.copy.src_agent_id = from_host ? kCpuAgentId : gpu;
      r.copy.dst_agent_id = to_host ? kCpuAgentId : gpu;
      r.copy.src_memory = static_cast<uint8_t>(memory_kind(m.srcKind));
      r.copy.dst_memory = static_cast<uint8_t>(memory_kind(m.dstKind));
      put(c, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      Record r;
      if (!copy_record(c, m, &r)) return;
      r.flags = kFlagMemset;
      r.name_id = c.intern("MEMORY_SET");
      r.copy.value = m.value;
      put(c, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemory4*>(rec);
      const Launch l = launch_of(m.correlationId, m.timestamp);
      if (l.paused) return;
      const bool host = m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                        m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
      if (!host) see_device(c, m.deviceId);
      Record r = base(c, RecordKind::kMemoryAlloc, "MEMORY_ALLOCATION", m.timestamp, m.timestamp,
                      l.tid ? l.tid : m.processId, m.correlationId);
      r.alloc.agent_id = host ? kCpuAgentId : gpu_agent_id(m.deviceId);
      r.alloc.stream_id = m.streamId;
      r.alloc.op = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? 1 : 0;
      r.alloc.level = 0;
      r.alloc.address = m.address;
      r.alloc.bytes = m.bytes;
      r.alloc.range_corr = l.range_corr;
      put(c, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      const Launch l = launch_of(a.correlationId, a.start);
      if (l.paused) return;
      const bool runtime = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      const CUpti_CallbackDomain domain =
          runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
      const uint64_t key = (static_cast<uint64_t>(domain) << 32) | a.cbid;
      auto it = g_api_names.find(key);
      if (it == g_api_names.end()) {
        const char* name = nullptr;
        g_api->cuptiGetCallbackName(domain, a.cbid, &name);
        it = g_api_names.emplace(key, c.intern(without_version(name))).first;
      }
      uint32_t tid = l.tid;
      if (tid == 0) {
        auto t = g_cupti_tid.find(a.threadId);
        tid = t != g_cupti_tid.end() ? t->second : a.threadId;
      }
      Record r = base(c, RecordKind::kRegion, runtime ? "CUDA_RUNTIME_API" : "CUDA_DRIVER_API",
                      a.start, a.end, tid, a.correlationId);
      r.name_id = it->second;
      r.region.region_name_id = l.region;
      r.region.range_corr = l.range_corr;
      r.region.callsite_id = l.callsite;
      put(c, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = *reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec);
      const Launch l = launch_of(s.correlationId, s.start);
      if (l.paused) return;
      Record r = base(c, RecordKind::kRegion, "CUDA_SYNCHRONIZATION", s.start, s.end, l.tid,
                      s.correlationId);
      r.name_id = c.intern(sync_name(s.type));
      r.region.range_corr = l.range_corr;
      put(c, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE:
      device_row(c, *reinterpret_cast<const CUpti_ActivityDevice5*>(rec));
      break;
    default:
      break;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = g_settings.buffer_bytes;
  *buffer = take_buffer(*size);
  *max_records = 0;                   // as many as fit
  if (*buffer == nullptr) *size = 0;  // CUPTI drops (and counts) records it cannot store
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid) {
  {
    std::lock_guard<std::mutex> g(g_mu);
    CaptureContext* c = g_collector.load(std::memory_order_acquire);
    if (c != nullptr && buffer != nullptr && valid > 0 && g_settings.process) {
      // First pass: learn which OS thread each CUPTI thread id is, from calls whose ENTER
      // callback we saw, so API records of other functions land on the right thread.
      CUpti_Activity* rec = nullptr;
      while (g_api->cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME || rec->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
          const auto& a = *reinterpret_cast<CUpti_ActivityAPI*>(rec);
          uint32_t tid, region, callsite;
          bool paused;
          if (launch_info(a.correlationId, &tid, &region, &callsite, &paused))
            g_cupti_tid[a.threadId] = tid;
        }
      }
      rec = nullptr;
      while (g_api->cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        map_activity(*c, rec);
      size_t dropped = 0;
      if (g_api->cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
          dropped)
        c->drops("cupti", dropped);
    }
  }
  if (buffer != nullptr) give_buffer(buffer);
}

uint64_t records_unattributed() { return g_unattributed.load(std::memory_order_relaxed); }

void records_reset(CaptureContext* c) {
  std::lock_guard<std::mutex> g(g_mu);
  g_unattributed.store(0, std::memory_order_relaxed);
  g_collector.store(c, std::memory_order_release);
  g_streams.clear();
  g_devices.clear();
  g_cupti_tid.clear();
  // Symbols are per database: a new session writes them again (ids stay stable).
  for (auto& kv : g_kernel_by_name) delete kv.second;
  g_kernel_by_name.clear();
  g_kernel_by_ptr.clear();
  g_next_kernel_id = 1;
}

void records_free_pool() {
  for (auto& slot : g_pool)
    if (uint8_t* b = slot.exchange(nullptr)) std::free(b);
}

}  // namespace rocprof::cupti
