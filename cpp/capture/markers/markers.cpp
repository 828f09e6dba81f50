#include "markers.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "capture/context.hpp"
#include "capture/settings.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::markers {
namespace {

// The running session's context (null: not recording) and its number: a thread's push stack
// from an earlier session (or from before a fork) is stale and starts empty.
std::atomic<CaptureContext*> g_ctx{nullptr};
std::atomic<uint64_t> g_generation{1};
std::atomic<bool> g_paused{false};
// Range times: the CPU's counter where the kernel keeps time with it (a third of the cost of
// reading CLOCK_BOOTTIME through the vDSO; the drain maps it, buffer/tsc_map.hpp), else
// CLOCK_BOOTTIME. Decided at the first session's start, fixed for the process.
bool g_tsc = false;
uint16_t g_clock_flag = 0;
// The rarely taken branches of push and pop live out of line (here and below), so the hot
// functions keep a small frame: no clock struct, no record copy, no string on their stack.
[[gnu::noinline]] uint64_t clock_stamp() noexcept { return now_ns(); }
inline uint64_t stamp() noexcept { return g_tsc ? tsc_now() : clock_stamp(); }
// Interned at start, on the starting thread (never at exit): the domain and, as rocprofv3
// names ROCTx regions, the API function of each kind (the message goes into extdata).
uint32_t g_category = 0, g_fn_push = 0, g_fn_start = 0, g_fn_mark = 0;
// Threads get a serial number on their first ROCTx record: the high half of the correlation
// ids they make (see Stack::next_corr).
std::atomic<uint32_t> g_thread_serial{0};

// Outstanding start/stop ranges: a fixed table indexed by id, claimed with atomics, so
// start/stop never lock. More than kSlots ranges open at once overwrite the oldest (counted).
constexpr uint32_t kSlots = 4096;
struct OpenRange {
  std::atomic<uint64_t> id{0};
  uint64_t start = 0;
  uint64_t corr = 0, parent = 0;
  uint32_t name_id = 0;
  uint32_t tid = 0;
};
OpenRange g_open[kSlots];
std::atomic<uint64_t> g_next_range{1};

// One open push range: what its pop needs, together (one cache line touched per push).
struct Frame {
  uint64_t start;
  uint64_t corr;  // its correlation id, given at push: launches inside point at it before the
                  // range ends
  uint32_t name;
  bool paused_at_start;
};

// roctxRangePush/Pop stack of one thread, and the thread's ROCTx numbering. Only the owning
// thread touches it while a session runs; the session's end reads every stack (closing what
// is still open) after producers can no longer reach the context.
struct Stack {
  static constexpr uint32_t kMaxDepth = 256;
  std::atomic<bool> exited{false};  // its thread ended: freed when the next session starts
  uint64_t generation = 0;
  uint32_t depth = 0;
  uint32_t tid = 0;
  // This thread's buffer in the running session, fetched at its first pop: a pop fills its
  // record there in place (no virtual call, thread lookup or copy). Reset with the generation.
  ThreadRecords* records = nullptr;
  // Each ROCTx record's own correlation id, as rocprofv3 gives every API record one: unique
  // in the process without an atomic on the hot path (the thread's serial in the high half, a
  // per-thread count in the low half). Not the OS tid: a tid is reused by a later thread,
  // whose count starts again. Always >= 2^32, so never equal to a GPU runtime's correlation
  // id; the writer uses it as the range's rocpd_region id (ROCm keys regions by correlation id).
  uint32_t serial = 0, corr = 0;
  Frame frames[kMaxDepth];

  uint64_t next_corr() noexcept { return (static_cast<uint64_t>(serial) << 32) | ++corr; }
};

// Every thread's stack, for the session's end. Leaked on purpose (exit handlers walk it).
std::mutex& stacks_mu() {
  static auto* m = new std::mutex();
  return *m;
}
std::vector<Stack*>& stacks() {
  static auto* v = new std::vector<Stack*>();
  return *v;
}

void free_exited_stacks() {
  std::lock_guard<std::mutex> g(stacks_mu());
  auto& v = stacks();
  for (auto it = v.begin(); it != v.end();) {
    if ((*it)->exited.load(std::memory_order_acquire)) {
      delete *it;
      it = v.erase(it);
    } else {
      ++it;
    }
  }
}

// The calling thread's stack: a plain pointer, so reaching it costs one thread-local lookup
// and no initialisation guard (a thread_local with a destructor pays both on every use).
// The thread's end is seen through a pthread key instead: its stack is marked exited and
// stays until the next session starts, so its open ranges are still closed at this
// session's end.
thread_local Stack* t_stack = nullptr;
thread_local uint32_t t_tid = 0;

pthread_key_t exit_key() {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    pthread_key_create(
        &k, [](void* s) { static_cast<Stack*>(s)->exited.store(true, std::memory_order_release); });
    return k;
  }();
  return key;
}

inline uint32_t tid() noexcept {
  if (t_tid == 0) t_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_tid;
}

// Registers the calling thread's stack (the one lock and allocation a thread pays).
Stack* new_stack() noexcept {
  Stack* s = new (std::nothrow) Stack();
  if (s == nullptr) return nullptr;
  s->tid = tid();
  s->serial = g_thread_serial.fetch_add(1, std::memory_order_relaxed) + 1;
  {
    std::lock_guard<std::mutex> g(stacks_mu());
    stacks().push_back(s);
  }
  pthread_setspecific(exit_key(), s);
  t_stack = s;
  return s;
}

// This thread's stack for the running session (a stack from an earlier session, or from
// before a fork, starts empty), or null when none can be made.
[[gnu::noinline]] Stack* fresh_stack(Stack* s, uint64_t gen) noexcept {
  if (s == nullptr && (s = new_stack()) == nullptr) return nullptr;
  s->generation = gen;
  s->depth = 0;
  s->tid = tid();
  s->records = nullptr;
  return s;
}

inline Stack* stack() noexcept {
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  Stack* s = t_stack;
  if (s != nullptr && s->generation == gen) [[likely]]
    return s;
  return fresh_stack(s, gen);
}

// After fork: the child has one thread (the forking one). Other threads' stacks belong to
// threads that do not exist here; their memory is the parent's image, dropped, never freed.
struct ForkReset {
  ForkReset() {
    pthread_atfork(nullptr, nullptr, [] {
      t_tid = 0;
      new (&stacks_mu()) std::mutex();
      stacks().clear();
      if (t_stack != nullptr) stacks().push_back(t_stack);
      g_generation.fetch_add(1, std::memory_order_acq_rel);
    });
  }
} g_fork_reset;

// One ROCTx record, filled where it lies: `fn` the API function (rocpd_region.name),
// `message_id` the message, `corr` its own correlation id, `parent` the enclosing push range's.
inline void fill_roctx(Record& r, uint32_t fn, uint32_t message_id, uint64_t start, uint64_t end,
                       uint32_t tid_, uint16_t flags, uint64_t corr, uint64_t parent) noexcept {
  r.kind = RecordKind::kRegion;
  r.flags = static_cast<uint16_t>(flags | kFlagMessage | g_clock_flag);
  r.tid = tid_;
  r.start = start;
  r.end = end;
  r.category_id = g_category;
  r.name_id = fn;
  r.correlation_id = corr;
  r.region = RegionData{};
  r.region.message_id = message_id;
  r.region.range_corr = parent;
}

inline Record roctx_record(uint32_t fn, uint32_t message_id, uint64_t start, uint64_t end,
                           uint32_t tid_, uint16_t flags, uint64_t corr, uint64_t parent) noexcept {
  Record r;
  fill_roctx(r, fn, message_id, start, end, tid_, flags, corr, parent);
  return r;
}

// pop()'s record where the context hands out no thread buffer (tests' fakes).
[[gnu::noinline]] void emit_copy(CaptureContext* c, uint32_t fn, uint32_t message_id,
                                 uint64_t start, uint64_t end, uint32_t tid_, uint64_t corr,
                                 uint64_t parent) noexcept {
  c->emit(roctx_record(fn, message_id, start, end, tid_, kFlagNone, corr, parent));
}

// Records made while a session is stopping: none is stored, each is counted (see
// take_late_records).
std::atomic<bool> g_counting_late{false};
std::atomic<uint64_t> g_late{0};
[[gnu::noinline, gnu::cold]] void late() noexcept {
  if (g_counting_late.load(std::memory_order_relaxed) && !g_paused.load(std::memory_order_relaxed))
    g_late.fetch_add(1, std::memory_order_relaxed);
}

[[gnu::noinline, gnu::cold]] void too_deep(CaptureContext* c) noexcept {
  c->drops("roctx_depth", 1);
}

inline CaptureContext* recording_ctx() noexcept {
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  return c != nullptr && !g_paused.load(std::memory_order_relaxed) ? c : nullptr;
}

// Markers as a capture backend: the session starts it with every other backend; its stop
// closes what is still open. ROCTx is always on (--marker-trace); its one setting is whether
// the session starts paused (--selected-regions).
class MarkersBackend final : public Backend {
 public:
  const char* name() const override { return "markers"; }
  bool start(CaptureContext& ctx, const CaptureSettings& settings, std::string*) override {
    g_category = ctx.intern(kCategory);
    g_fn_push = ctx.intern("roctxRangePushA");
    g_fn_start = ctx.intern("roctxRangeStartA");
    g_fn_mark = ctx.intern("roctxMarkA");
    free_exited_stacks();
    g_tsc = tsc_stamps();
    g_clock_flag = g_tsc ? kFlagTscTime : kFlagNone;
    g_paused.store(settings.markers.start_paused, std::memory_order_relaxed);
    g_generation.fetch_add(1, std::memory_order_acq_rel);
    g_ctx.store(&ctx, std::memory_order_release);
    return true;
  }
  void stop(CaptureContext& ctx) override {
    g_late.store(0, std::memory_order_relaxed);
    g_counting_late.store(true, std::memory_order_release);
    g_ctx.store(nullptr, std::memory_order_release);
    close_open_ranges(ctx, stamp());
  }
  void fork_child() override {
    g_ctx.store(nullptr, std::memory_order_release);
    g_counting_late.store(false, std::memory_order_relaxed);
  }
  void probe(bool* live, std::string* reason) override {
    *live = true;
    reason->clear();
  }
};

// Registered first of all backends (this file is part of the core), so its ranges frame
// what the others record.
const capture::Registered<MarkersBackend> g_registered;

}  // namespace

uint32_t intern(std::string_view s) noexcept { return capture::intern(s); }

bool paused() noexcept { return g_paused.load(std::memory_order_relaxed); }
bool recording() noexcept { return recording_ctx() != nullptr; }

int push_id(uint32_t name_id) noexcept {
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) [[unlikely]] {
    late();
    return -1;
  }
  Stack* b = stack();
  if (b == nullptr) return -1;
  const uint32_t d = b->depth++;
  if (d >= Stack::kMaxDepth) {
    // Deeper than the stack keeps: counted, and its pop is matched without recording, so
    // the ranges below still end at their own pops.
    too_deep(c);
    return static_cast<int>(d);
  }
  Frame& f = b->frames[d];
  f.name = name_id;
  f.corr = b->next_corr();
  f.paused_at_start = g_paused.load(std::memory_order_relaxed);
  f.start = stamp();
  return static_cast<int>(d);
}

int push(std::string_view message) noexcept {
  if (g_ctx.load(std::memory_order_acquire) == nullptr) {
    late();
    return -1;
  }
  return push_id(intern(message));
}

int pop() noexcept {
  const uint64_t end = stamp();
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) return -1;
  Stack* b = stack();
  if (b == nullptr || b->depth == 0) return -1;
  const uint32_t d = --b->depth;
  if (d >= Stack::kMaxDepth) return static_cast<int>(d);
  // Pause drops what happens between pause and resume: a range touching a pause is dropped.
  const Frame& f = b->frames[d];
  if (f.paused_at_start || g_paused.load(std::memory_order_relaxed)) return static_cast<int>(d);
  const uint64_t parent = d > 0 ? b->frames[d - 1].corr : 0;
  if (b->records == nullptr) b->records = c->thread_records();
  if (b->records == nullptr) {
    emit_copy(c, g_fn_push, f.name, f.start, end, b->tid, f.corr, parent);
  } else if (Record* r = b->records->claim()) {
    fill_roctx(*r, g_fn_push, f.name, f.start, end, b->tid, kFlagNone, f.corr, parent);
    b->records->publish();
  }
  return static_cast<int>(d);
}

uint32_t current_range(uint64_t* corr) noexcept {
  *corr = 0;
  if (g_ctx.load(std::memory_order_acquire) == nullptr) return 0;
  const Stack* b = t_stack;
  if (b == nullptr || b->depth == 0 ||
      b->generation != g_generation.load(std::memory_order_acquire))
    return 0;
  const uint32_t d = b->depth <= Stack::kMaxDepth ? b->depth - 1 : Stack::kMaxDepth - 1;
  *corr = b->frames[d].corr;
  return b->frames[d].name;
}

void mark(std::string_view message) noexcept {
  CaptureContext* c = recording_ctx();
  Stack* b = c != nullptr ? stack() : nullptr;
  if (b == nullptr) {
    if (c == nullptr) late();
    return;
  }
  const uint64_t t = stamp();
  uint64_t parent;
  current_range(&parent);
  c->emit(
      roctx_record(g_fn_mark, intern(message), t, t, b->tid, kFlagInstant, b->next_corr(), parent));
}

uint64_t start(std::string_view message) noexcept {
  CaptureContext* c = recording_ctx();
  Stack* b = c != nullptr ? stack() : nullptr;
  if (b == nullptr) {
    if (c == nullptr) late();
    return 0;
  }
  const uint64_t id = g_next_range.fetch_add(1, std::memory_order_relaxed);
  OpenRange& slot = g_open[id % kSlots];
  if (slot.id.load(std::memory_order_relaxed) != 0) c->drops("roctx_open_ranges", 1);
  slot.name_id = intern(message);
  slot.tid = b->tid;
  slot.corr = b->next_corr();
  current_range(&slot.parent);
  slot.start = stamp();
  slot.id.store(id, std::memory_order_release);
  return id;
}

void stop(uint64_t range_id) noexcept {
  const uint64_t end = stamp();
  if (range_id == 0) return;
  OpenRange& slot = g_open[range_id % kSlots];
  uint64_t expected = range_id;
  const uint64_t start_ns = slot.start;
  const uint32_t name_id = slot.name_id, start_tid = slot.tid;
  const uint64_t corr = slot.corr, parent = slot.parent;
  // Claim the slot; a second stop of the same id, or an overwritten slot, records nothing.
  if (!slot.id.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
  if (CaptureContext* c = recording_ctx())
    c->emit(roctx_record(g_fn_start, name_id, start_ns, end, start_tid, kFlagNone, corr, parent));
}

void close_open_ranges(CaptureContext& c, uint64_t end_ns) noexcept {
  auto closed = [&](uint32_t fn, uint32_t name_id, uint64_t start_ns, uint32_t tid_, uint64_t corr,
                    uint64_t parent) {
    Record r = roctx_record(fn, name_id, start_ns, end_ns > start_ns ? end_ns : start_ns, tid_,
                            kFlagOpenAtExit, corr, parent);
    c.closed_at_exit(r);
  };
  // Outermost first, as they were opened. A pause at push time means the range would not
  // have been recorded at its pop either.
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  {
    std::lock_guard<std::mutex> g(stacks_mu());
    for (Stack* b : stacks()) {
      if (b->generation != gen) continue;
      const uint32_t depth = b->depth < Stack::kMaxDepth ? b->depth : Stack::kMaxDepth;
      for (uint32_t d = 0; d < depth; ++d)
        if (!b->frames[d].paused_at_start)
          closed(g_fn_push, b->frames[d].name, b->frames[d].start, b->tid, b->frames[d].corr,
                 d > 0 ? b->frames[d - 1].corr : 0);
      b->depth = 0;
    }
  }
  for (OpenRange& slot : g_open) {
    const uint64_t id = slot.id.exchange(0, std::memory_order_acq_rel);
    if (id != 0) closed(g_fn_start, slot.name_id, slot.start, slot.tid, slot.corr, slot.parent);
  }
}

uint64_t take_late_records() noexcept {
  g_counting_late.store(false, std::memory_order_relaxed);
  return g_late.exchange(0, std::memory_order_relaxed);
}

void pause() noexcept { g_paused.store(true, std::memory_order_relaxed); }
void resume() noexcept { g_paused.store(false, std::memory_order_relaxed); }

void name_thread(std::string_view name) noexcept {
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) return;
  Record r{};
  r.kind = RecordKind::kThreadName;
  r.tid = tid();
  r.start = r.end = now_ns();
  r.name_id = intern(name);
  c->emit(r);
}

void name_object(uint32_t target, uint64_t object, std::string_view name) noexcept {
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr) return;
  Record r{};
  r.kind = RecordKind::kName;
  r.tid = tid();
  r.start = r.end = now_ns();
  r.name_id = intern(name);
  r.name.object = object;
  r.name.target = target;
  c->emit(r);
}

uint32_t thread_id() noexcept { return tid(); }

}  // namespace rocprof::markers
