// The one fault guard of Python frame walks; see guard.hpp for the design and contracts.
#include "capture/python/guard.hpp"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <thread>

#include "capture/python/frames.h"

namespace rocprof::python {
namespace {

constexpr uint32_t kBuffers = 1024;  // walks running at once: sampled threads, launches, nesting

struct Buffer {
  std::atomic<uintptr_t> owner{0};  // pthread_self() of the walking thread; 0: free
  std::atomic<uint64_t> seq{0};     // claim order: a thread's innermost nested walk is highest
  std::atomic<bool> armed{false};   // env is set
  sigjmp_buf env;
};
Buffer g_buffers[kBuffers];
std::atomic<uint64_t> g_seq{0};
std::atomic<int> g_walking{0};  // walks between their claim and their release

std::mutex g_mu;  // the dispositions below and g_users; never taken in a handler
unsigned g_users = 0;
bool g_installed = false;
struct sigaction g_prev_segv{}, g_prev_bus{};

uintptr_t self_id() { return static_cast<uintptr_t>(pthread_self()); }

void on_fault(int sig, siginfo_t* si, void* uc);

bool is_ours(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) != 0 && a.sa_sigaction == on_fault;
}

bool is_program_handler(const struct sigaction& a) {
  if (a.sa_flags & SA_SIGINFO) return a.sa_sigaction != nullptr;
  return a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
}

void on_fault(int sig, siginfo_t* si, void* uc) {
  if (g_walking.load(std::memory_order_acquire) > 0) {
    const uintptr_t self = self_id();
    Buffer* inner = nullptr;
    for (Buffer& b : g_buffers)
      if (b.owner.load(std::memory_order_relaxed) == self &&
          b.armed.load(std::memory_order_relaxed) &&
          (inner == nullptr ||
           b.seq.load(std::memory_order_relaxed) > inner->seq.load(std::memory_order_relaxed)))
        inner = &b;
    if (inner != nullptr) siglongjmp(inner->env, 1);
  }
  // Not a frame walk. A program handler installed before ours (faulthandler, another
  // guard) is called as if it had been installed alone, and ours stays in place for the
  // walks still to come; for SIG_DFL/SIG_IGN the previous disposition is put back and the
  // faulting instruction runs again under it (a signal sent by kill/raise would not recur:
  // it is sent again).
  const struct sigaction& prev = sig == SIGSEGV ? g_prev_segv : g_prev_bus;
  if (is_program_handler(prev)) {
    if (prev.sa_flags & SA_SIGINFO)
      prev.sa_sigaction(sig, si, uc);
    else
      prev.sa_handler(sig);
    return;
  }
  sigaction(sig, &prev, nullptr);
  if (si == nullptr || si->si_code <= 0) raise(sig);
}

Buffer* claim(uintptr_t self) noexcept {
  const uint32_t h = static_cast<uint32_t>((self >> 12) ^ (self >> 28));
  for (uint32_t i = 0; i < kBuffers; ++i) {
    Buffer& b = g_buffers[(h + i) & (kBuffers - 1)];
    uintptr_t free = 0;
    if (b.owner.load(std::memory_order_relaxed) == 0 &&
        b.owner.compare_exchange_strong(free, self, std::memory_order_acq_rel)) {
      b.seq.store(g_seq.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return &b;
    }
  }
  return nullptr;
}

void release(Buffer* b) noexcept {
  b->armed.store(false, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  b->owner.store(0, std::memory_order_release);
  g_walking.fetch_sub(1, std::memory_order_acq_rel);
}

void install_locked() {
  struct sigaction cur{};
  sigaction(SIGSEGV, nullptr, &cur);
  if (is_ours(cur)) {  // inherited across fork: the remembered dispositions hold
    g_installed = true;
    return;
  }
  struct sigaction sa{};
  sa.sa_sigaction = on_fault;
  // NODEFER: a walk left by siglongjmp (no mask restore) must not leave SIGSEGV blocked;
  // ONSTACK: a stack overflow still reaches the previous handler (faulthandler's alt stack).
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_prev_segv);
  sigaction(SIGBUS, &sa, &g_prev_bus);
  g_installed = true;
}

void restore_locked() {
  // Walks still running in other threads (a sampler tick, a launch) must still find the
  // guard if they fault: wait for them (bounded; their users stopped starting new ones).
  for (int i = 0; i < 1000 && g_walking.load() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  g_installed = false;
  struct sigaction cur{};
  sigaction(SIGSEGV, nullptr, &cur);
  if (is_ours(cur)) sigaction(SIGSEGV, &g_prev_segv, nullptr);
  sigaction(SIGBUS, nullptr, &cur);
  if (is_ours(cur)) sigaction(SIGBUS, &g_prev_bus, nullptr);
}

}  // namespace

void guard_acquire(GuardUser user) {
  std::lock_guard<std::mutex> g(g_mu);
  g_users |= user;
  if (!g_installed) install_locked();
}

void guard_release(GuardUser user) {
  std::lock_guard<std::mutex> g(g_mu);
  g_users &= ~static_cast<unsigned>(user);
  if (g_users == 0 && g_installed) restore_locked();
}

bool guard_installed() {
  struct sigaction cur{};
  sigaction(SIGSEGV, nullptr, &cur);
  return is_ours(cur);
}

namespace {

template <typename Walker>
int guarded(Walker&& walker) noexcept {
  g_walking.fetch_add(1, std::memory_order_acq_rel);
  Buffer* const b = claim(self_id());
  if (b == nullptr) {
    g_walking.fetch_sub(1, std::memory_order_acq_rel);
    return kWalkBusy;
  }
  if (sigsetjmp(b->env, 0) != 0) {  // the walk faulted (on_fault)
    release(b);
    return kWalkFault;
  }
  b->armed.store(true, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const int n = walker();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  release(b);
  return n;
}

}  // namespace

int walk(uint64_t* out, int max_frames, const void* first) noexcept {
  return guarded([&] {
    return first != nullptr ? rp_walk_from(first, out, max_frames)
                            : rp_walk_current(out, max_frames);
  });
}

int walk_thread(const void* tstate, unsigned long tid, uint64_t* out, int max_frames) noexcept {
  static_assert(kWalkTorn == RP_WALK_TORN, "frames.h and guard.hpp name one result");
  return guarded([&] { return rp_walk_thread(tstate, tid, out, max_frames); });
}

int walk_keys(uint64_t* out, int max_frames) noexcept {
  return guarded([&] { return rp_walk_keys_current(out, max_frames); });
}

void guard_fork_child() {
  new (&g_mu) std::mutex();
  const uintptr_t self = self_id();
  int left = 0;
  for (Buffer& b : g_buffers) {
    if (b.owner.load() == 0) continue;
    if (b.owner.load() == self) {
      ++left;
      continue;
    }
    b.armed.store(false);
    b.owner.store(0);
  }
  g_walking.store(left);
}

}  // namespace rocprof::python
