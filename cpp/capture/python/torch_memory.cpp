// The caching allocator's actions as records; see torch_memory.hpp for the design.
#include "capture/python/torch_memory.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "capture/context.hpp"
#include "capture/launch_site_stats.hpp"
#include "capture/python/launch_sites.hpp"
#include "capture/settings.hpp"
#include "rocprof/clock.hpp"
#include "rocprof/info.hpp"

namespace rocprof::torch_memory {
namespace {

namespace ls = rocprof::launch_sites;

// rocpd categories of the allocator's rows (ROCm's memory_allocations view shows them), by
// rp_alloc_kind: blocks, segments, out-of-memory.
constexpr const char* kBlock = "TORCH_ALLOCATOR_BLOCK";
constexpr const char* kSegment = "TORCH_ALLOCATOR_SEGMENT";
constexpr const char* kOom = "TORCH_ALLOCATOR_OOM";

std::atomic<bool> g_on{false};
CaptureContext* g_ctx = nullptr;  // between start and stop
uint32_t g_category[3] = {0, 0, 0};
alignas(64) std::atomic<uint64_t> g_stored{0};
alignas(64) std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_unattributed{0};

// The observer's listener and what it reported, under g_mu (session start/stop, attach).
std::recursive_mutex g_mu;  // the listener may report its source from inside
void (*g_listener)(void) = nullptr;
std::string g_source;          // "" until the observer says
bool g_started_sites = false;  // this backend started the launch sites (no GPU backend did)

// The GPU records' id of the stream the allocator named by handle (capture::stream_id: a call
// into the GPU backend), remembered per thread for the last few (handle, device) pairs: a
// thread's allocations go to one or two streams, and stream 0 means another stream on each
// device. Id 0: unknown (no GPU backend runs), asked again next time.
uint32_t stream_id_of(uint64_t handle, int32_t device) noexcept {
  struct Entry {
    uint64_t handle;
    int32_t device;
    uint32_t id;
  };
  static thread_local Entry cache[4] = {};
  static thread_local uint32_t next = 0;
  for (const Entry& e : cache)
    if (e.id != 0 && e.handle == handle && e.device == device) return e.id;
  const uint32_t id = capture::stream_id(handle);
  if (id != 0) cache[next++ & 3] = Entry{handle, device, id};
  return id;
}

uint32_t os_tid() noexcept {
  static thread_local uint32_t tid = 0;
  if (tid == 0) tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

class TorchMemoryBackend final : public Backend {
 public:
  const char* name() const override { return "torch-allocator"; }

  bool start(CaptureContext& ctx, const CaptureSettings& s, std::string*) override {
    if (!s.torch_memory.enabled) return true;
    g_ctx = &ctx;
    g_category[0] = ctx.intern(kBlock);
    g_category[1] = ctx.intern(kSegment);
    g_category[2] = ctx.intern(kOom);
    g_stored.store(0);
    g_dropped.store(0);
    g_unattributed.store(0);
    std::lock_guard<std::recursive_mutex> g(g_mu);
    // A run with no GPU backend (the CPU stand-in) still names each action's line.
    g_started_sites = !ls::running();
    if (g_started_sites) ls::start(&ctx);
    g_on.store(true, std::memory_order_release);
    if (g_listener != nullptr) g_listener();
    return true;
  }

  void stop(CaptureContext& ctx) override {
    if (!g_on.exchange(false)) return;
    std::string source;
    bool started;
    {
      std::lock_guard<std::recursive_mutex> g(g_mu);
      source = g_source.empty() ? "none: the program did not load torch's CUDA allocator "
                                  "(torch not imported, or no torch observer in this build)"
                                : g_source;
      started = g_started_sites;
      g_started_sites = false;
    }
    if (started) {
      ls::stop();  // resolves what is pending before the last drain
      uint64_t v[kLaunchSiteStats];
      ls::stats(v);  // as the GPU backends store theirs (no GPU backend ran the launch sites)
      ctx.info(MetadataInfo{"rocprof.memory.launch_sites", launch_site_stats_entry("memory", v)});
    }
    ctx.info(MetadataInfo{"rocprof.memory.source", source});
    ctx.info(MetadataInfo{"rocprof.memory.allocator_events", std::to_string(g_stored.load())});
    ctx.info(MetadataInfo{"rocprof.memory.dropped", std::to_string(g_dropped.load())});
    // Records held by the drain are named after the launch sites stop (their queue is drained
    // first): a record is only unattributed once its wait ran out, before the stop.
    const uint64_t lost = g_unattributed.load();
    ctx.info(MetadataInfo{"rocprof.memory.unattributed", std::to_string(lost)});
    if (lost > 0)
      std::fprintf(stderr,
                   "rocprof: %llu caching-allocator records were stored without their Python "
                   "line: the resolver had not reached their frames after ~5 s (the GIL held "
                   "that long?) (metadata rocprof.memory.unattributed)\n",
                   static_cast<unsigned long long>(lost));
    g_ctx = nullptr;
  }

  // A fork's child: the parent's context is not its own (a new session starts it again).
  void fork_child() override {
    g_on.store(false);
    g_ctx = nullptr;
    g_started_sites = false;
  }

  void probe(bool* live, std::string* reason) override {
    *reason = build_reason();
    *live = reason->empty();
  }
};

const capture::Registered<TorchMemoryBackend> g_registered;

}  // namespace

void event(const rp_alloc_event* e) noexcept {
  if (!g_on.load(std::memory_order_acquire)) return;
  CaptureContext* c = g_ctx;
  if (c == nullptr || e->kind > RP_ALLOC_OOM || c->paused()) return;
  const uint64_t t = now_ns();
  // The thread's Python line, as a launch here would get it (autograd's threads: the forward
  // op's, through the torch observer). Lock-free; a chain seen for the first time is resolved
  // by the drain (kFlagSiteKey), never here under the allocator's lock.
  uint32_t id = 0;
  const uint64_t key = ls::capture(&id);
  const uint32_t kind = e->kind;
  const uint32_t cat = kind <= RP_FREE_BLOCK ? 0 : kind <= RP_FREE_SEGMENT ? 1 : 2;
  Record r = make_record(RecordKind::kMemoryAlloc, t, t, os_tid(), g_category[cat], 0);
  AllocData& a = r.alloc;
  a.agent_id = gpu_agent_id(e->device < 0 ? 0u : static_cast<uint32_t>(e->device));
  a.op = (kind == RP_FREE_BLOCK || kind == RP_FREE_SEGMENT) ? 1 : 0;
  a.level = 1;  // VIRTUAL: never summed with the runtime's REAL rows
  a.address = kind == RP_ALLOC_OOM ? 0 : e->address;
  a.bytes = e->size;
  a.stream_handle = e->stream;
  a.stream_id = stream_id_of(e->stream, e->device);
  a.callsite_id = id;
  if (id == 0 && key != 0) {
    r.flags |= kFlagSiteKey;
    a.site_key = key;
  }
  if (kind == RP_ALLOC_OOM) {
    r.flags |= kFlagAllocOom;
    a.device_free = e->device_free;
  }
  (c->emit(r) ? g_stored : g_dropped).fetch_add(1, std::memory_order_relaxed);
}

void set_listener(void (*on)(void)) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  g_listener = on;
  if (on != nullptr && g_on.load(std::memory_order_acquire)) on();
}

void set_source(const char* source) {
  std::lock_guard<std::recursive_mutex> g(g_mu);
  g_source = source != nullptr ? source : "";
}

void count_unattributed() noexcept { g_unattributed.fetch_add(1, std::memory_order_relaxed); }

Counts counts() noexcept {
  return Counts{g_stored.load(), g_dropped.load(), g_unattributed.load(), g_on.load()};
}

}  // namespace rocprof::torch_memory
