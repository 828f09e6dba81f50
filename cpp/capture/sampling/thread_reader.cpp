#include "capture/sampling/thread_reader.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <new>
#include <thread>

#include "capture/context.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::sampling {
namespace {

constexpr int kReads = 4;  // reads of one sample's stack before it counts as torn
std::thread g_thread;
std::atomic<bool> g_stop{false};

// One slot at one look. `restart`: CPU mode's credit starts again from now (after a pause,
// whose CPU time intended no samples). Returns whether the slot still owes a sample (CPU mode:
// a whole period of CPU time left unsampled by a late look).
bool read_slot(Slot& s, uint64_t cpu_period, bool restart, uint64_t* buf) {
  if (s.state.load(std::memory_order_acquire) != 1) return false;
  bool owes = false;
  // Dekker with reader_release(): it stores state then loads reading; we store reading then
  // load state. Either it sees us walking and waits, or we see the slot retired.
  s.reading.store(1, std::memory_order_seq_cst);
  if (s.state.load(std::memory_order_seq_cst) == 1 && s.tstate != nullptr) {
    uint64_t cpu = 0;
    bool take = true;
    if (cpu_period != 0) {
      take = thread_cpu_ns(s.tid, &cpu);
      if (take && restart) {
        s.cpu.start(cpu);
        take = false;
      } else if (take) {
        take = cpu_due(s, cpu, cpu_period, /*backlog=*/true);
        owes = s.cpu.credit >= cpu_period;
      }
    }
    if (take) {
      // A torn read (the thread changed its frames under it: a generator yielded) is read
      // again at once; only a sample whose every read tore is lost (counted as torn).
      int npy = python::kWalkTorn;
      for (int attempt = 0; attempt < kReads && npy == python::kWalkTorn; ++attempt)
        npy = python::walk_thread(s.tstate, s.tid, buf + 2, kMaxPy);
      store_walk(s, npy, 0, buf);
    }
  }
  s.reading.store(0, std::memory_order_release);
  return owes;
}

void run(uint64_t period, uint64_t cpu_period, const CaptureContext* ctx) {
  static uint64_t buf[2 + kMaxPy * RP_PY_WORDS];  // the one reader thread's
  uint64_t next = mono_ns();
  bool was_paused = false;
  while (!g_stop.load(std::memory_order_acquire)) {
    const bool paused = ctx->paused();
    bool owed = false;
    const int used = g_slots_used.load(std::memory_order_acquire);
    if (!paused)
      for (int i = 0; i < used; ++i) owed |= read_slot(g_slots[i], cpu_period, was_paused, buf);
    was_paused = paused;
    // A slot a late look left owing samples is looked at again after half a period, so the
    // backlog is taken at moments of its own (CpuCredit::look) while the reader costs one
    // wake-up a period otherwise.
    next += owed ? period / 2 : period;
    const uint64_t now = mono_ns();
    if (now > next + period) {
      // Ticks that passed while this one ran (or the reader was not scheduled) are not caught
      // up. Wall mode counts them as missed for every armed slot; CPU mode's credits already
      // count the CPU time they let pass.
      const uint64_t ticks = (now - next) / period;
      next += ticks * period;
      if (cpu_period == 0 && !paused)
        for (int i = 0; i < used; ++i)
          if (g_slots[i].state.load(std::memory_order_relaxed) == 1)
            g_slots[i].missed.fetch_add(ticks, std::memory_order_relaxed);
    }
    timespec until{static_cast<time_t>(next / 1000000000ull),
                   static_cast<long>(next % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) == EINTR) {
    }
  }
}

}  // namespace

void reader_start(uint32_t hz, uint64_t cpu_period, const CaptureContext* ctx) {
  reader_stop();
  g_stop.store(false);
  const uint64_t period = 1000000000ull / std::max<uint32_t>(1, hz);
  // No signal of the process lands on the reader (Ctrl-C and timers are the program's), but
  // the faults of its own walks must reach the guard: a SIGSEGV raised while blocked kills
  // the process instead of running any handler.
  sigset_t all, old;
  sigfillset(&all);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) sigdelset(&all, sig);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  g_thread = std::thread([=] {
    pthread_setname_np(pthread_self(), "rocprof-reader");
    // The default 50 us of timer slack lets the kernel wake the reader half a 10 kHz period
    // late; a tick that comes later than two periods leaves CPU time unsampled (missed).
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    run(period, cpu_period, ctx);
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void reader_stop() {
  g_stop.store(true, std::memory_order_release);
  if (g_thread.joinable()) g_thread.join();
}

void reader_release(Slot& s) {
  s.state.store(2, std::memory_order_seq_cst);
  while (s.reading.load(std::memory_order_seq_cst) != 0) sched_yield();  // one walk: microseconds
}

void reader_fork_child() {
  new (&g_thread) std::thread();  // the parent's reader does not exist here: never joined
  g_stop.store(false);
}

}  // namespace rocprof::sampling
