// The RecordFunction callbacks of rocprof._torch_observer; see observer.hpp for the design.
#include "capture/torch/observer.hpp"

#include "capture/torch/memory.hpp"

#include <ATen/record_function.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

namespace rocprof::torch_observer {
namespace {

const rp_launch_site_api* g_api = nullptr;

// (thread, sequence number) → the forward op's site key. Direct-mapped: consecutive numbers of
// one thread take consecutive slots, so the ring holds the last kRingSlots forward ops of a
// pass; older ones are overwritten (a backward op that finds another tag counts as not found).
// The tag is written last (seqlock style): a reader that sees the same tag around its read of
// the key read that tag's key.
struct Slot {
  std::atomic<uint64_t> tag{0};
  std::atomic<uint64_t> key{0};
};
Slot g_ring[kRingSlots];
// Bumped at each start: keys of an earlier session name strings of its own table.
std::atomic<uint64_t> g_generation{0};

uint64_t tag_of(uint64_t thread, int64_t seq) {
  return (g_generation.load(std::memory_order_relaxed) << 56) | ((thread & 0xffff) << 40) |
         (static_cast<uint64_t>(seq) & ((1ull << 40) - 1));
}

Slot& slot_of(uint64_t thread, int64_t seq) {
  return g_ring[(static_cast<uint64_t>(seq) + thread * 0x9e3779b1ull) & (kRingSlots - 1)];
}

// The forward ops' counter on a line of its own: the forward thread bumps it at every forward
// op, while autograd's threads bump the others.
alignas(64) std::atomic<uint64_t> g_forward_ops{0};
alignas(64) std::atomic<uint64_t> g_backward_ops{0}, g_linked{0}, g_no_python{0}, g_not_found{0};
std::atomic<bool> g_on{false};
at::CallbackHandle g_forward_cb = 0, g_backward_cb = 0;
// Set by an exit handler registered after torch's callback registry exists: past it, that
// registry may be destroyed, so a session stopped at exit leaves the callbacks in place.
std::atomic<bool> g_exiting{false};

// ---- tests' log ------------------------------------------------------------------------------
std::atomic<bool> g_debug{false};
std::vector<DebugEntry> g_log;
std::atomic<size_t> g_log_n{0};

void log_op(char kind, const at::RecordFunction& fn) {
  const size_t i = g_log_n.fetch_add(1, std::memory_order_relaxed);
  if (i >= g_log.size()) return;
  DebugEntry& e = g_log[i];
  e.kind = kind;
  std::snprintf(e.name, sizeof e.name, "%s", fn.name());
  e.seq = fn.seqNr();
  e.site = g_api->frameless_site();
}

// ---- the callbacks ---------------------------------------------------------------------------
// While a backward op runs, its thread's frameless launches take its forward op's site. The site
// stays after the op (not the one before it), until the thread's next backward op with a
// number: the engine's work between nodes — reducing a node's gradients to its inputs' shapes,
// adding them into the next nodes' input buffers — is that op's too; AccumulateGrad (no number)
// keeps the site of the node that produced its gradient, which the engine runs just before it
// (it takes the highest priority). A nested backward op (a reentrant backward pass inside one)
// gives back the outer op's site at its end.
constexpr int kDepth = 32;
thread_local uint64_t t_saved[kDepth];
thread_local int t_depth = 0;

std::unique_ptr<at::ObserverContext> on_forward(const at::RecordFunction& fn) {
  if (g_debug.load(std::memory_order_relaxed)) log_op('F', fn);
  const int64_t seq = fn.seqNr();
  if (seq < 0 || !c10::GradMode::is_enabled()) return nullptr;  // no node can take its number
  const uint64_t key = g_api->capture_forward(fn.name());
  const uint64_t thread = fn.threadId();
  Slot& s = slot_of(thread, seq);
  s.tag.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.key.store(key, std::memory_order_relaxed);
  s.tag.store(tag_of(thread, seq), std::memory_order_release);
  g_forward_ops.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

std::unique_ptr<at::ObserverContext> on_backward(const at::RecordFunction& fn) {
  const int64_t seq = fn.seqNr();
  uint64_t before = 0;
  if (seq < 0) {  // AccumulateGrad and other nodes made outside a forward op
    before = g_api->set_thread_site(0);
    g_api->set_thread_site(before);
  } else {
    const uint64_t thread = fn.forwardThreadId();
    const uint64_t want = tag_of(thread, seq);
    Slot& s = slot_of(thread, seq);
    const uint64_t t1 = s.tag.load(std::memory_order_acquire);
    uint64_t key = s.key.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint64_t t2 = s.tag.load(std::memory_order_relaxed);
    g_backward_ops.fetch_add(1, std::memory_order_relaxed);
    if (t1 != want || t2 != want) {
      key = 0;
      g_not_found.fetch_add(1, std::memory_order_relaxed);
    } else {
      (key != 0 ? g_linked : g_no_python).fetch_add(1, std::memory_order_relaxed);
    }
    before = g_api->set_thread_site(key);
  }
  if (t_depth < kDepth) t_saved[t_depth] = before;
  ++t_depth;
  if (g_debug.load(std::memory_order_relaxed)) log_op('B', fn);
  return nullptr;
}

void on_backward_end(const at::RecordFunction&, at::ObserverContext*) {
  if (t_depth == 0) return;  // started before the callback was added
  --t_depth;
  if (t_depth > 0) g_api->set_thread_site(t_depth < kDepth ? t_saved[t_depth] : 0);
}

// ---- the floor (benchmarks) -----------------------------------------------------------------
// A callback that does nothing, registered as the forward one is: what any RecordFunction
// observer of every op costs in PyTorch itself, against which the observer's own work is told.
std::unique_ptr<at::ObserverContext> on_nothing(const at::RecordFunction&) { return nullptr; }
at::CallbackHandle g_floor_cb = 0;

// ---- on/off with _core's launch sites (under its listener lock) ----------------------------
void on() {
  if (g_on.load()) return;
  uint64_t gen = (g_generation.load() + 1) & 0xff;
  g_generation.store(gen == 0 ? 1 : gen);
  for (auto* c : {&g_forward_ops, &g_backward_ops, &g_linked, &g_no_python, &g_not_found})
    c->store(0);
  try {
    g_forward_cb = at::addGlobalCallback(at::RecordFunctionCallback(&on_forward)
                                             .needsInputs(false)
                                             .scopes({at::RecordScope::FUNCTION}));
    g_backward_cb = at::addGlobalCallback(at::RecordFunctionCallback(&on_backward, &on_backward_end)
                                              .needsInputs(false)
                                              .scopes({at::RecordScope::BACKWARD_FUNCTION}));
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "rocprof: backward kernels are not linked to their forward ops (PyTorch "
                 "refused a RecordFunction callback: %s)\n",
                 e.what());
    if (g_forward_cb != 0) at::removeCallback(g_forward_cb);
    g_forward_cb = g_backward_cb = 0;
    return;
  }
  g_on.store(true);
}

void off(char* value, size_t size) {
  if (!g_on.exchange(false)) return;
  if (!g_exiting.load()) {
    at::removeCallback(g_forward_cb);
    at::removeCallback(g_backward_cb);
  }
  g_forward_cb = g_backward_cb = 0;
  const Stats s = stats();
  format_stats(s, value, size);
  if (s.not_found > 0)
    std::fprintf(stderr,
                 "rocprof: %llu of %llu backward ops had no forward op on record (run before the "
                 "session started, or more than %u forward ops back): their kernels carry the "
                 "backward() call's line (metadata " ROCPROF_LAUNCH_SITE_API_METADATA ")\n",
                 static_cast<unsigned long long>(s.not_found),
                 static_cast<unsigned long long>(s.backward_ops), kRingSlots);
}

const rp_launch_site_listener g_listener{&on, &off};

void mark_exiting() { g_exiting.store(true); }

}  // namespace

bool attach(const rp_launch_site_api* api) {
  if (api == nullptr || api->version != ROCPROF_LAUNCH_SITE_API_VERSION) return false;
  static const bool exit_handler = [] {
    at::hasGlobalCallbacks();  // torch's registry exists before the handler is registered
    return std::atexit(mark_exiting) == 0;
  }();
  (void)exit_handler;
  if (g_api != nullptr && g_api != api) g_api->set_listener(nullptr);
  g_api = api;
  api->set_listener(&g_listener);
  memory::attach(api);  // the caching allocator's actions while the memory capture runs
  return true;
}

void detach() {
  if (g_api != nullptr) {
    g_api->set_listener(nullptr);
    g_api->set_memory_listener(nullptr);
  }
}

Stats stats() {
  return Stats{g_forward_ops.load(), g_backward_ops.load(), g_linked.load(),
               g_no_python.load(),   g_not_found.load(),    g_on.load()};
}

void format_stats(const Stats& s, char* out, size_t size) {
  std::snprintf(
      out, size,
      "forward_ops=%llu,backward_ops=%llu,linked=%llu,no_python=%llu,"
      "not_found=%llu",
      static_cast<unsigned long long>(s.forward_ops),
      static_cast<unsigned long long>(s.backward_ops), static_cast<unsigned long long>(s.linked),
      static_cast<unsigned long long>(s.no_python), static_cast<unsigned long long>(s.not_found));
}

bool floor_callback(bool on) {
  if (on == (g_floor_cb != 0)) return true;
  if (!on) {
    at::removeCallback(g_floor_cb);
    g_floor_cb = 0;
    return true;
  }
  try {
    g_floor_cb = at::addGlobalCallback(at::RecordFunctionCallback(&on_nothing)
                                           .needsInputs(false)
                                           .scopes({at::RecordScope::FUNCTION}));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

void debug_start(size_t capacity) {
  g_debug.store(false);
  g_log.assign(capacity, DebugEntry{});
  g_log_n.store(0);
  g_debug.store(capacity > 0);
}

size_t debug_stop(const DebugEntry** entries) {
  g_debug.store(false);
  *entries = g_log.data();
  return std::min(g_log_n.load(), g_log.size());
}

}  // namespace rocprof::torch_observer
