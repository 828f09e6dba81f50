#include "markers.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "rocprof/clock.hpp"
#include "session/session.hpp"

namespace rocprof::markers {
namespace {

// Outstanding start/stop ranges: a fixed table indexed by id, claimed with atomics, so
// start/stop never lock. More than kSlots ranges open at once overwrite the oldest (counted).
constexpr uint32_t kSlots = 4096;
struct OpenRange {
  std::atomic<uint64_t> id{0};
  uint64_t start = 0;
  uint32_t name_id = 0;
  uint32_t tid = 0;
};
OpenRange g_open[kSlots];
std::atomic<uint64_t> g_next_range{1};

thread_local uint32_t t_tid = 0;

inline uint32_t tid() noexcept {
  if (t_tid == 0) t_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_tid;
}

// The forking thread is the child's only thread, and its cached id is the parent's.
struct ForgetTidInChild {
  ForgetTidInChild() { pthread_atfork(nullptr, nullptr, [] { t_tid = 0; }); }
} g_forget_tid;

inline void emit_region(Collector& c, uint32_t name_id, uint64_t start, uint64_t end, uint32_t tid_,
                        uint16_t flags) noexcept {
  Record r;
  r.kind = RecordKind::kRegion;
  r.flags = static_cast<uint16_t>(flags | kFlagMessage);
  r.tid = tid_;
  r.start = start;
  r.end = end;
  // Strings are never forgotten by the process, so the id is fixed once interned.
  static const uint32_t category = session::category_id(kCategory);
  r.category_id = category;
  r.name_id = name_id;
  r.correlation_id = 0;
  r.region = RegionData{};
  c.emit(r);
}

}  // namespace

uint32_t intern(std::string_view s) noexcept { return session::strings().intern_cached(s); }

int push_id(uint32_t name_id) noexcept {
  Collector* c = session::current();
  if (c == nullptr) return -1;
  ThreadBuffer* b = c->thread_buffer();
  if (b == nullptr) return -1;
  const uint32_t d = b->depth++;
  if (d >= ThreadBuffer::kMaxDepth) {
    // Deeper than the stack keeps: counted, and its pop is matched without recording, so
    // the ranges below still end at their own pops.
    c->add_drops("roctx_depth", 1);
    return static_cast<int>(d);
  }
  b->names[d] = name_id;
  b->paused_at_start[d] = session::g_paused.load(std::memory_order_relaxed);
  b->starts[d] = now_ns();
  return static_cast<int>(d);
}

int push(std::string_view message) noexcept {
  if (session::current() == nullptr) return -1;
  return push_id(intern(message));
}

int pop() noexcept {
  const uint64_t end = now_ns();
  Collector* c = session::current();
  if (c == nullptr) return -1;
  ThreadBuffer* b = c->thread_buffer();
  if (b == nullptr || b->depth == 0) return -1;
  const uint32_t d = --b->depth;
  if (d >= ThreadBuffer::kMaxDepth) return static_cast<int>(d);
  // Pause drops what happens between pause and resume: a range touching a pause is dropped.
  if (!b->paused_at_start[d] && !session::g_paused.load(std::memory_order_relaxed))
    emit_region(*c, b->names[d], b->starts[d], end, b->tid, kFlagNone);
  return static_cast<int>(d);
}

uint32_t current_range_name_id() noexcept {
  Collector* c = session::current();
  if (c == nullptr) return 0;
  ThreadBuffer* b = c->thread_buffer();
  if (b == nullptr || b->depth == 0) return 0;
  return b->names[b->depth <= ThreadBuffer::kMaxDepth ? b->depth - 1 : ThreadBuffer::kMaxDepth - 1];
}

void mark(std::string_view message) noexcept {
  if (!session::recording()) return;
  Collector* c = session::current();
  if (c == nullptr) return;
  const uint64_t t = now_ns();
  emit_region(*c, intern(message), t, t, tid(), kFlagInstant);
}

uint64_t start(std::string_view message) noexcept {
  if (!session::recording()) return 0;
  const uint64_t id = g_next_range.fetch_add(1, std::memory_order_relaxed);
  OpenRange& slot = g_open[id % kSlots];
  if (slot.id.load(std::memory_order_relaxed) != 0) {
    if (Collector* c = session::current()) c->add_drops("roctx_open_ranges", 1);
  }
  slot.name_id = intern(message);
  slot.tid = tid();
  slot.start = now_ns();
  slot.id.store(id, std::memory_order_release);
  return id;
}

void stop(uint64_t range_id) noexcept {
  const uint64_t end = now_ns();
  if (range_id == 0) return;
  OpenRange& slot = g_open[range_id % kSlots];
  uint64_t expected = range_id;
  const uint64_t start_ns = slot.start;
  const uint32_t name_id = slot.name_id, start_tid = slot.tid;
  // Claim the slot; a second stop of the same id, or an overwritten slot, records nothing.
  if (!slot.id.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
  if (!session::recording()) return;
  if (Collector* c = session::current()) emit_region(*c, name_id, start_ns, end, start_tid, kFlagNone);
}

void close_open_ranges(Collector& c, uint64_t end_ns) noexcept {
  // Not the thread-local cache: this may run from an exit handler, after thread-local
  // destructors.
  const uint32_t category = session::strings().intern(kCategory);
  auto closed = [&](uint32_t name_id, uint64_t start_ns, uint32_t tid_) {
    Record r{};
    r.kind = RecordKind::kRegion;
    r.flags = kFlagMessage | kFlagOpenAtExit;
    r.tid = tid_;
    r.start = start_ns;
    r.end = end_ns > start_ns ? end_ns : start_ns;
    r.category_id = category;
    r.name_id = name_id;
    c.add_closed_at_exit(r);
  };
  // Outermost first, as they were opened. A pause at push time means the range would not
  // have been recorded at its pop either.
  c.for_each_buffer([&](ThreadBuffer& b) {
    const uint32_t depth = b.depth < ThreadBuffer::kMaxDepth ? b.depth : ThreadBuffer::kMaxDepth;
    for (uint32_t d = 0; d < depth; ++d)
      if (!b.paused_at_start[d]) closed(b.names[d], b.starts[d], b.tid);
    b.depth = 0;
  });
  for (OpenRange& slot : g_open) {
    const uint64_t id = slot.id.exchange(0, std::memory_order_acq_rel);
    if (id != 0) closed(slot.name_id, slot.start, slot.tid);
  }
}

void pause() noexcept { session::g_paused.store(true, std::memory_order_relaxed); }
void resume() noexcept { session::g_paused.store(false, std::memory_order_relaxed); }

void name_thread(std::string_view name) noexcept {
  Collector* c = session::current();
  if (c == nullptr) return;
  Record r{};
  r.kind = RecordKind::kThreadName;
  r.tid = tid();
  r.start = r.end = now_ns();
  r.name_id = intern(name);
  c->emit(r);
}

uint32_t thread_id() noexcept { return tid(); }

}  // namespace rocprof::markers
