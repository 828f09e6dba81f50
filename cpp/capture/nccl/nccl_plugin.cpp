// librocprof_nccl.so: rocprof's NCCL profiler plugin. `rocprof run --rccl-trace` (alias
// --nccl-trace) names this library in NCCL_PROFILER_PLUGIN; NCCL (>= 2.27) opens it when the
// first communicator is created and looks up ncclProfiler_v5 (NCCL >= 2.28) or ncclProfiler_v4
// (2.27). Each collective and send/recv call becomes one kCollective record through the
// session's capture context: the operation, datatype, count and bytes, communicator, root or
// peer, rank, stream (v5), algorithm, protocol and channels. NCCL versions without these
// interfaces never call us: their collectives remain visible as kernels only, which the reader
// says (rocpd.collectives.plugin_state: rocprof.nccl.plugin absent though --rccl-trace was on).
// AMD's RCCL carries the same interface (its src/plugin/profiler.cc, v1-v5) and would load
// this library the same way: not yet run on AMD hardware.
//
// How NCCL (2.28+, v5) orders the events of one call, and why records wait for the group's end:
// the group API event starts (every call is a group, implicit when the user opened none); the
// call's API event starts and stops while NCCL only appends the task (before any launch); at
// the group's end NCCL plans and launches the kernel, starts and stops the task events (Coll/
// P2p: algorithm, protocol, channels, a send's peer; their parent is the API event), and stops
// the group API event. So an API event's record is completed and emitted when its thread's
// group API event stops: it then spans the user's call up to and including the kernel launch.
// Task events that NCCL runs later from a host-stream callback (proxy work on a busy stream)
// find their record already emitted and add nothing.
//
// The hot path (a few events per call) takes a slot of a fixed pool with one atomic exchange,
// fills a record and emits it: no lock, no allocation. A call that finds the pool full is
// counted as dropped.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "capture/context.hpp"
#include "nccl_profiler_api.h"
#include "rocprof/clock.hpp"
#include "rocprof/info.hpp"

namespace rocprof::nccl {
namespace {

constexpr const char* kCategory = "RCCL_API";  // ROCm's domain name for these calls

std::atomic<CaptureContext*> g_ctx{nullptr};
std::atomic<uint64_t> g_dropped{0};

struct Comm {
  uint64_t hash;
  int nranks, rank, nnodes;
  uint32_t name_id;
  int version;
};

// An event in flight: the record it becomes at stopEvent. Slots are found by a rotating
// index and claimed with an exchange, so starts on several threads never wait on each other.
struct Slot {
  std::atomic<uint32_t> busy{0};
  Comm* comm = nullptr;
  bool deferred = false;  // v5 API event: emitted at its thread's group end, not its own stop
  Record rec{};
};

// v5: this thread's API events whose group has not ended yet, in call order.
constexpr int kPending = 256;
thread_local Slot* t_pending[kPending];
thread_local int t_npending = 0;
thread_local char t_group_mark;  // the handle of a group API event (not a slot)
constexpr uint32_t kSlots = 4096;
Slot g_slots[kSlots];
std::atomic<uint32_t> g_next{0};

Slot* claim() {
  const uint32_t first = g_next.fetch_add(1, std::memory_order_relaxed);
  for (uint32_t i = 0; i < 64; ++i) {  // a handful of tries: more in flight means a leak
    Slot& s = g_slots[(first + i) % kSlots];
    if (s.busy.exchange(1, std::memory_order_acquire) == 0) return &s;
  }
  g_dropped.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

Slot* ours(void* p) {
  auto* s = static_cast<Slot*>(p);
  return s >= g_slots && s < g_slots + kSlots ? s : nullptr;
}

uint32_t tid() {
  static thread_local uint32_t t = static_cast<uint32_t>(syscall(SYS_gettid));
  return t;
}

// Bytes per element of NCCL's datatypes, by the names NCCL's descriptors carry.
uint64_t type_size(const char* t) {
  if (t == nullptr) return 0;
  static const struct {
    const char* name;
    uint64_t size;
  } sizes[] = {{"ncclInt8", 1},     {"ncclUint8", 1},      {"ncclInt32", 4},
               {"ncclUint32", 4},   {"ncclInt64", 8},      {"ncclUint64", 8},
               {"ncclFloat16", 2},  {"ncclFloat32", 4},    {"ncclFloat64", 8},
               {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};
  for (const auto& s : sizes)
    if (std::strcmp(s.name, t) == 0) return s.size;
  return 0;
}

// NCCL's function name ("AllReduce", "AlltoAll") as the API function ROCm names it
// ("ncclAllReduce", "ncclAllToAll").
uint32_t api_name(const char* func) {
  char buf[64] = "nccl";
  if (func == nullptr) func = "Unknown";
  if (std::strcmp(func, "AlltoAll") == 0) func = "AllToAll";
  std::strncat(buf, func, sizeof buf - 5);
  return capture::intern(buf);
}

uint32_t intern_or_0(const char* s) { return s != nullptr && *s ? capture::intern(s) : 0; }

Slot* begin(Comm* comm, const char* func, size_t count, const char* datatype, int root, int peer,
            void* stream) {
  CaptureContext* ctx = g_ctx.load(std::memory_order_acquire);
  if (ctx == nullptr || ctx->paused() || comm == nullptr) return nullptr;
  Slot* s = claim();
  if (s == nullptr) return nullptr;
  s->comm = comm;
  s->rec = make_record(RecordKind::kCollective, now_ns(), 0, tid(), capture::intern(kCategory), 0);
  s->rec.name_id = api_name(func);
  CollectiveData& c = s->rec.coll;
  c.count = count;
  c.bytes = count * type_size(datatype);
  c.comm_hash = comm->hash;
  c.stream = reinterpret_cast<uint64_t>(stream);
  c.seq = UINT64_MAX;
  c.root = root;
  c.peer = peer;
  c.rank = comm->rank;
  c.nranks = comm->nranks;
  c.nnodes = static_cast<uint16_t>(comm->nnodes);
  c.datatype_id = intern_or_0(datatype);
  c.comm_name_id = comm->name_id;
  return s;
}

void details(Slot* s, uint64_t seq, uint8_t channels, const char* algo, const char* proto) {
  CollectiveData& c = s->rec.coll;
  c.seq = seq;
  c.nchannels = channels;
  c.algo_id = intern_or_0(algo);
  c.proto_id = intern_or_0(proto);
}

bool is_rooted(const char* func) {
  return func != nullptr &&
         (std::strcmp(func, "Broadcast") == 0 || std::strcmp(func, "Reduce") == 0 ||
          std::strcmp(func, "Gather") == 0 || std::strcmp(func, "Scatter") == 0);
}

std::mutex g_mu;  // init/finalize: rare
bool g_announced = false;

ncclResult_t init_common(void** context, int* mask, const char* name, uint64_t hash, int nnodes,
                         int nranks, int rank, int version) {
  // A native program (no Python launcher) starts its session here, as the CUDA injection does.
  capture::start_session_on_load();
  auto* comm = new Comm{hash, nranks, rank, nnodes, intern_or_0(name), version};
  *context = comm;
  // v5: the API events are the calls, completed at the group API event's end; their task
  // events (Coll/P2p) add the algorithm, the channels and a send/recv's peer.
  *mask = version >= 5 ? (ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi |
                          ncclProfileColl | ncclProfileP2p)
                       : (ncclProfileColl | ncclProfileP2p);
  std::lock_guard<std::mutex> g(g_mu);
  CaptureContext* ctx = g_ctx.load(std::memory_order_acquire);
  if (ctx != nullptr && !g_announced) {
    g_announced = true;
    ctx->info(MetadataInfo{"rocprof.nccl.plugin", version >= 5 ? "ncclProfiler_v5 (NCCL >= 2.28)"
                                                               : "ncclProfiler_v4 (NCCL 2.27)"});
  }
  return ncclSuccess;
}

void emit_and_free(Slot* s, uint64_t end) {
  s->rec.end = end;
  if (CaptureContext* ctx = g_ctx.load(std::memory_order_acquire)) ctx->emit(s->rec);
  s->deferred = false;
  s->busy.store(0, std::memory_order_release);
}

void flush_pending() {
  const uint64_t end = now_ns();
  for (int i = 0; i < t_npending; ++i) emit_and_free(t_pending[i], end);
  t_npending = 0;
}

ncclResult_t stop_event(void* handle) {
  if (handle == &t_group_mark) {
    flush_pending();
    return ncclSuccess;
  }
  Slot* s = ours(handle);
  if (s == nullptr || s->deferred) return ncclSuccess;
  emit_and_free(s, now_ns());
  return ncclSuccess;
}

Slot* pending_here(void* handle) {
  for (int i = t_npending - 1; i >= 0; --i)
    if (t_pending[i] == handle) return t_pending[i];
  return nullptr;
}

// v5 API event: waits for its group's end (see the top of the file).
Slot* defer(Slot* s) {
  if (s == nullptr) return nullptr;
  if (t_npending == kPending) {  // a group of more calls than we hold: the oldest ends now
    emit_and_free(t_pending[0], now_ns());
    std::memmove(t_pending, t_pending + 1, sizeof(Slot*) * (kPending - 1));
    --t_npending;
  }
  s->deferred = true;
  t_pending[t_npending++] = s;
  return s;
}

ncclResult_t record_state(void*, ncclProfilerEventState_t, void*) { return ncclSuccess; }

ncclResult_t finalize(void* context) {
  delete static_cast<Comm*>(context);
  return ncclSuccess;
}

// ---- version 5: the API events are the calls (with their stream), see the top of the file ----
ncclResult_t v5_init(void** context, uint64_t comm_id, int* mask, const char* name, int nnodes,
                     int nranks, int rank, ncclDebugLogger_t) {
  return init_common(context, mask, name, comm_id, nnodes, nranks, rank, 5);
}

ncclResult_t v5_start(void* context, void** handle, ncclProfilerEventDescr_v5_t* d) {
  *handle = nullptr;
  auto* comm = static_cast<Comm*>(context);
  if (d->type == ncclProfileGroupApi) {
    *handle = &t_group_mark;
  } else if (d->type == ncclProfileCollApi) {
    const auto& a = d->collApi;
    *handle = defer(
        begin(comm, a.func, a.count, a.datatype, is_rooted(a.func) ? a.root : -1, -1, a.stream));
  } else if (d->type == ncclProfileP2pApi) {
    const auto& a = d->p2pApi;
    *handle = defer(begin(comm, a.func, a.count, a.datatype, -1, -1, a.stream));
  } else if (d->type == ncclProfileColl || d->type == ncclProfileP2p) {
    // Only this thread's pending calls: one NCCL runs from a host-stream callback (another
    // thread, possibly after the group ended) must not touch a record being emitted.
    Slot* parent = pending_here(d->parentObj);
    if (parent == nullptr) return ncclSuccess;
    if (d->type == ncclProfileColl) {
      details(parent, d->coll.seqNumber, d->coll.nChannels, d->coll.algo, d->coll.proto);
    } else {
      parent->rec.coll.peer = d->p2p.peer;
      parent->rec.coll.nchannels = d->p2p.nChannels;
    }
  }
  return ncclSuccess;
}

ncclResult_t v5_state(void* h, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v5_t* a) {
  return record_state(h, s, a);
}

// ---- version 4: the task events are all there is (no stream; they span NCCL's planning of
// the call, not the user's whole call). NCCL's task of an AllGather or Broadcast counts bytes
// (datatype ncclInt8), so count is bytes there; bytes are right either way. ----
ncclResult_t v4_init(void** context, int* mask, const char* name, uint64_t hash, int nnodes,
                     int nranks, int rank, ncclDebugLogger_t) {
  return init_common(context, mask, name, hash, nnodes, nranks, rank, 4);
}

ncclResult_t v4_start(void* context, void** handle, ncclProfilerEventDescr_v4_t* d) {
  *handle = nullptr;
  auto* comm = static_cast<Comm*>(context);
  if (d->type == ncclProfileColl) {
    const auto& c = d->coll;
    Slot* s =
        begin(comm, c.func, c.count, c.datatype, is_rooted(c.func) ? c.root : -1, -1, nullptr);
    if (s != nullptr) details(s, c.seqNumber, c.nChannels, c.algo, c.proto);
    *handle = s;
  } else if (d->type == ncclProfileP2p) {
    const auto& p = d->p2p;
    Slot* s = begin(comm, p.func, p.count, p.datatype, -1, p.peer, nullptr);
    if (s != nullptr) s->rec.coll.nchannels = p.nChannels;
    *handle = s;
  }
  return ncclSuccess;
}

ncclResult_t v4_state(void* h, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v4_t* a) {
  return record_state(h, s, a);
}

// Joins the session (capture/context.hpp) so records flow into its context.
class NcclBackend final : public Backend {
 public:
  const char* name() const override { return "nccl"; }
  bool start(CaptureContext& ctx, const CaptureSettings&, std::string*) override {
    g_ctx.store(&ctx, std::memory_order_release);
    return true;
  }
  void stop(CaptureContext& ctx) override {
    g_ctx.store(nullptr, std::memory_order_release);
    // Calls still in flight at the end are not recorded; say how many were lost.
    uint64_t open = 0;
    for (Slot& s : g_slots) open += s.busy.load(std::memory_order_acquire);
    const uint64_t lost = g_dropped.exchange(0) + open;
    if (lost != 0) ctx.drops("NCCL profiler events (pool full or open at the end)", lost);
  }
  void fork_child() override { g_ctx.store(nullptr, std::memory_order_release); }
  void probe(bool* live, std::string* reason) override {
    *live = true;
    *reason = "loaded by NCCL (NCCL_PROFILER_PLUGIN)";
  }
};

const capture::Registered<NcclBackend> g_registered;  // lives as long as the process

}  // namespace
}  // namespace rocprof::nccl

extern "C" {
__attribute__((visibility("default"))) ncclProfiler_v5_t ncclProfiler_v5 = {
    "rocprof",
    rocprof::nccl::v5_init,
    rocprof::nccl::v5_start,
    rocprof::nccl::stop_event,
    rocprof::nccl::v5_state,
    rocprof::nccl::finalize};
__attribute__((visibility("default"))) ncclProfiler_v4_t ncclProfiler_v4 = {
    "rocprof",
    rocprof::nccl::v4_init,
    rocprof::nccl::v4_start,
    rocprof::nccl::stop_event,
    rocprof::nccl::v4_state,
    rocprof::nccl::finalize};
}
