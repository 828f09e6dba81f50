// The one resolver thread; see resolver.hpp for the contracts.
#include "capture/python/resolver.hpp"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "capture/python/frames.h"
#include "capture/python/guard.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::python {
namespace {

constexpr uint64_t kMaxSleepNs = 50'000'000;  // a backstop: clients and waiters wake it earlier

// The clients, the thread and the pass bookkeeping. Never held while taking the GIL.
std::mutex g_mu;
std::condition_variable g_cv;  // a pass ended, a client left, the thread ended
std::vector<ResolverClient*> g_clients;
std::thread* g_thread = nullptr;
bool g_stop = false, g_in_pass = false;
uint64_t g_passes = 0;
// Wakes the thread: sem_post is lock-free and async-signal-safe.
sem_t g_wake;
bool g_wake_init = false;

void sleep_ns(uint64_t ns) {
  timespec until{};
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += static_cast<time_t>(ns / 1000000000ull);
  until.tv_nsec += static_cast<long>(ns % 1000000000ull);
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec += 1;
    until.tv_nsec -= 1000000000L;
  }
  while (sem_timedwait(&g_wake, &until) != 0 && errno == EINTR) {
  }
  while (sem_trywait(&g_wake) == 0) {
  }  // one pass serves every post so far
}

bool is_client(ResolverClient* c) {
  return std::find(g_clients.begin(), g_clients.end(), c) != g_clients.end();
}

void run() {
  // Named for `top -H` and per-thread CPU accounting (benchmarks/b3_sampling.py).
  pthread_setname_np(pthread_self(), "rocprof-resolve");
  std::vector<ResolverClient*> due;
  bool gil_failed = false;  // Python not usable (finalising): do not spin on work left
  std::unique_lock<std::mutex> lk(g_mu);
  while (!g_stop) {
    uint64_t sleep = kMaxSleepNs;
    const uint64_t now = mono_ns();
    for (ResolverClient* c : g_clients) sleep = std::min(sleep, c->due_in_ns(now));
    if (gil_failed) sleep = std::max<uint64_t>(sleep, 20'000'000);
    if (sleep > 0) {
      lk.unlock();
      sleep_ns(sleep);
      lk.lock();
      if (g_stop) break;
    }
    // The GIL only when a client has work: none in the steady state of launch sites alone.
    due.clear();
    const uint64_t then = mono_ns();
    for (ResolverClient* c : g_clients)
      if (c->due_in_ns(then) == 0) due.push_back(c);
    if (!due.empty()) {
      g_in_pass = true;
      lk.unlock();
      due.erase(std::remove_if(due.begin(), due.end(),
                               [](ResolverClient* c) { return !c->without_gil(); }),
                due.end());
      if (!due.empty()) {
        gil_failed = !rp_gil_ensure();
        if (!gil_failed) {
          for (ResolverClient* c : due) c->under_gil();
          rp_gil_release();
        }
      }
      lk.lock();
      g_in_pass = false;
    }
    ++g_passes;
    g_cv.notify_all();
  }
}

}  // namespace

void resolver_add(ResolverClient* c) {
  std::unique_lock<std::mutex> lk(g_mu);
  if (g_thread != nullptr && g_stop) {
    // The thread is ending (its last client just left): let it, GIL released (it may be
    // finishing a pass that waits for the GIL), then start a new one.
    lk.unlock();
    void* saved = rp_save_if_held();
    lk.lock();
    g_cv.wait(lk, [] { return g_thread == nullptr; });
    lk.unlock();
    rp_restore(saved);
    lk.lock();
  }
  if (!is_client(c)) g_clients.push_back(c);
  if (g_thread == nullptr) {
    if (!g_wake_init) g_wake_init = sem_init(&g_wake, 0, 0) == 0;
    while (sem_trywait(&g_wake) == 0) {
    }
    g_stop = false;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);  // the thread inherits a fully blocked mask
    g_thread = new std::thread(run);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
}

void resolver_remove(ResolverClient* c) {
  void* saved = rp_save_if_held();  // a pass may be waiting for the GIL
  std::thread* ending = nullptr;
  {
    std::unique_lock<std::mutex> lk(g_mu);
    auto it = std::find(g_clients.begin(), g_clients.end(), c);
    if (it != g_clients.end()) {
      g_clients.erase(it);
      g_cv.wait(lk, [] { return !g_in_pass; });  // a pass that runs `c` has ended
      if (g_clients.empty() && g_thread != nullptr) {
        g_stop = true;
        ending = g_thread;
      }
    }
  }
  g_cv.notify_all();  // waiters on `c` see it gone
  if (ending != nullptr) {
    sem_post(&g_wake);
    ending->join();
    delete ending;
    {
      std::lock_guard<std::mutex> g(g_mu);
      g_thread = nullptr;
    }
    g_cv.notify_all();
  }
  rp_restore(saved);
}

void resolver_wake() {
  if (g_wake_init) sem_post(&g_wake);
}

Waited resolver_wait(ResolverClient* c, bool (*done)(void*), void* ctx, int ms,
                     uint64_t* skip_until) {
  std::unique_lock<std::mutex> lk(g_mu);
  if (!is_client(c) || g_thread == nullptr || g_passes < *skip_until) return Waited::kNo;
  sem_post(&g_wake);
  const bool ok =
      g_cv.wait_for(lk, std::chrono::milliseconds(ms), [&] { return !is_client(c) || done(ctx); });
  if (ok) return Waited::kDone;
  // The thread could not get the GIL in time: no wait again before it has finished a pass.
  *skip_until = g_passes + 1;
  return Waited::kTimeout;
}

void resolver_fork_child() {
  new (&g_mu) std::mutex();
  new (&g_cv) std::condition_variable();
  g_thread = nullptr;  // the parent's thread object is abandoned, never joined
  g_clients.clear();
  g_stop = g_in_pass = false;
  if (g_wake_init) g_wake_init = sem_init(&g_wake, 0, 0) == 0;
}

void fork_child() {
  rp_gil_fork_child();
  guard_fork_child();
  resolver_fork_child();
}

}  // namespace rocprof::python
