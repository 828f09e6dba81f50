// One sampled thread's slot, shared by the two ways samples are taken: the signal method
// (sampler.cpp: a per-thread timer's SIGPROF, the thread walks its own frames) and the thread
// method (thread_reader.cpp: a reader thread walks them while the thread runs). Either way one
// producer fills the slot's ring (the thread's own handler, or the reader) and the resolver
// drains it (sample_ring.hpp).
#pragma once
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "capture/python/frames.h"
#include "capture/python/guard.hpp"
#include "capture/sampling/sample_ring.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::sampling {

inline constexpr int kMaxSlots = 512;             // concurrently sampled threads
inline constexpr int kMaxPy = 256;                // Python frames kept per sample (innermost)
inline constexpr uint64_t kRingWords = 1u << 17;  // 1 MiB per sampled thread

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 armed, 2 retired (not walked, ring being drained)
  uint32_t tid = 0;
  const void* tstate = nullptr;  // its PyThreadState (thread method; null: not readable)
  timer_t timer{};               // signal method
  std::atomic<int> reading{0};   // thread method: the reader is walking it (see reader_release)
  SampleRing ring;               // words allocated at the first arm(), reused, never freed
  std::atomic<uint64_t> taken{0}, missed{0};
  // Frame walks that faulted (they read frames another store of the same thread has not
  // finished initialising, e.g. 3.11/3.12's new _PyCFrame at eval-loop entry; or, read by the
  // thread method, a thread state freed under the read; caught by capture/python/guard.hpp):
  // counted, and as missed samples.
  std::atomic<uint64_t> faults{0};
  // Thread method: walks that met a frame popped and reused under the read (counted, missed).
  std::atomic<uint64_t> torn{0};
  bool seen = false;     // found in the latest thread scan (under the sampler's slots lock)
  bool blocked = false;  // its ring waits for the GIL (a frame not cached): resolver only
  // Scans a slot armed by its own thread may miss before disarming it: on 3.10 the thread
  // enters threading._active only after it registered.
  int grace = 0;
  CpuCredit cpu;  // CPU mode: the producer's only
};
extern Slot g_slots[kMaxSlots];
// Slots [0, g_slots_used) have ever been armed (arm() takes the first free one, and raises this
// before the slot's state says armed); the thread method's reader looks at those only, at every
// tick, instead of all kMaxSlots of them (a state word in each of 512 cache lines a look).
inline std::atomic<int> g_slots_used{0};
inline void note_slot_used(const Slot& s) {
  const int used = static_cast<int>(&s - g_slots) + 1;
  int cur = g_slots_used.load(std::memory_order_relaxed);
  while (cur < used && !g_slots_used.compare_exchange_weak(cur, used, std::memory_order_release)) {
  }
}

// Kernel encoding of a thread's CPU-time clock (glibc's MAKE_THREAD_CPUCLOCK): reads (and arms
// timers on) another thread's CPU time by its tid.
inline clockid_t thread_cpu_clock(uint32_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6);
}

// Thread `tid`'s CPU time in ns; false when it has ended.
inline bool thread_cpu_ns(uint32_t tid, uint64_t* out) {
  timespec ts{};
  if (clock_gettime(thread_cpu_clock(tid), &ts) != 0) return false;
  *out = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
  return true;
}

// CPU mode: whether the thread has used a period of CPU time since its last sample (`cpu_ns`
// its clock now; `backlog`: the thread method's CpuCredit::look). Async-signal-safe.
inline bool cpu_due(Slot& s, uint64_t cpu_ns, uint64_t period, bool backlog = false) {
  uint64_t missed = 0;
  const bool take =
      backlog ? s.cpu.look(cpu_ns, period, &missed) : s.cpu.tick(cpu_ns, period, &missed);
  if (missed) s.missed.fetch_add(missed, std::memory_order_relaxed);
  return take;
}

// Stores one walk's result in the slot's ring: `buf` holds two header words, then `npy` Python
// frames (or a python::walk error), then `nnat` native frames. Async-signal-safe.
inline void store_walk(Slot& s, int npy, int nnat, uint64_t* buf) {
  if (npy == python::kWalkFault || npy == python::kWalkBusy || npy == python::kWalkTorn) {
    if (npy == python::kWalkFault) s.faults.fetch_add(1, std::memory_order_relaxed);
    if (npy == python::kWalkTorn) s.torn.fetch_add(1, std::memory_order_relaxed);
    s.missed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (npy < 0) return;  // not (or no longer) a Python thread
  buf[0] = sample_header(npy, nnat);
  buf[1] = now_ns();  // vDSO clock_gettime: async-signal-safe
  if (!s.ring.push(buf, 2 + static_cast<uint64_t>(npy) * RP_PY_WORDS + nnat)) {
    s.missed.fetch_add(1, std::memory_order_relaxed);  // resolver behind: count, never wait
    return;
  }
  s.taken.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace rocprof::sampling
