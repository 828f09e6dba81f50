// Call-stack sampling. The signal method (the default): per-thread POSIX timers
// (SIGEV_THREAD_ID, CLOCK_MONOTONIC) deliver SIGPROF to the sampled thread itself; the handler
// copies frame identities into that thread's preallocated ring (slot.hpp; no Python API, no
// locks, no allocation). The thread method (thread_reader.hpp) fills the same rings from a
// reader thread instead, without signals.
// The resolver thread (capture/python/, all signals blocked) wakes every tick: without the GIL
// it stores every sample whose frames are all in its caches (code object -> name and file,
// (code object, instruction) -> line), deduplicating stacks into a tree of nodes stored once
// (StackInfo) and emitting one kSample Record per sample; then it takes the GIL briefly to
// resolve the code objects and lines not seen before (and the samples that wait on them) and
// to find new and finished Python threads.
//
// Linked into rocprof._core (needs the Python headers of the interpreter it is built for);
// the Python-specific reads live in capture/python/frames.c.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "capture/sampling/native.hpp"
#include "capture/python/frames.h"
#include "capture/python/guard.hpp"
#include "capture/python/resolver.hpp"
#include "capture/sampling/sample_ring.hpp"
#include "capture/sampling/signals.hpp"
#include "capture/sampling/slot.hpp"
#include "capture/sampling/stack.hpp"
#include "capture/sampling/thread_reader.hpp"
#include "rocprof/clock.hpp"
#include "capture/context.hpp"
#include "capture/settings.hpp"

namespace rocprof::sampling {

Slot g_slots[kMaxSlots];

namespace {

constexpr int kTickMs = 50;            // resolver period: GIL taken ~20 times a second
constexpr int kFirstScanWaitMs = 500;  // a session started off Python waits this for it

std::atomic<bool> g_native{false};
// CPU mode: > 0 is the sampling period in ns of thread CPU time (see arm() for why the timer
// itself runs on CLOCK_MONOTONIC); 0 in wall mode.
std::atomic<uint64_t> g_cpu_period{0};

void on_signal(int sig, siginfo_t* si, void* uc) {
  const int saved_errno = errno;
  auto* s = static_cast<Slot*>(si->si_value.sival_ptr);
  if (si->si_code != SI_TIMER || s < g_slots || s >= g_slots + kMaxSlots) {
    forward_sigprof(sig, si, uc);  // not one of our ticks: whoever had SIGPROF before us
    errno = saved_errno;
    return;
  }
  if (s->state.load(std::memory_order_acquire) != 1) {  // a late tick of a disarmed slot
    errno = saved_errno;
    return;
  }
  const uint64_t cpu_period = g_cpu_period.load(std::memory_order_relaxed);
  if (cpu_period != 0) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);  // async-signal-safe (POSIX list)
    if (!cpu_due(*s, static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec, cpu_period)) {
      errno = saved_errno;
      return;
    }
  } else if (si->si_overrun > 0) {
    // Expirations the kernel folded into this one (timer overruns) are samples not taken.
    s->missed.fetch_add(si->si_overrun, std::memory_order_relaxed);
  }
  uint64_t buf[2 + kMaxPy * RP_PY_WORDS + kMaxNative];
  const int npy = python::walk(buf + 2, kMaxPy);
  int nnat = 0;
  if (npy >= 0 && g_native.load(std::memory_order_relaxed))
    nnat = native_walk(uc, buf + 2 + npy * RP_PY_WORDS, kMaxNative);
  store_walk(*s, npy, nnat, buf);
  errno = saved_errno;
}

class Sampler final : private python::ResolverClient {
 public:
  void start(CaptureContext& c, const SamplingSettings& settings) {
    collector_ = &c;
    texts_.clear();
    hz_ = static_cast<int>(std::max<uint32_t>(1, settings.hz));
    armed_ = 0;
    cpu_at_start_ns_ = process_cpu_ns();
    wall_ = settings.wall;
    thread_method_ = settings.method == "thread";
    // Native frames need the sampled thread's own registers: the signal method only.
    native_ = settings.native && native_available() && !thread_method_;
    g_native.store(native_);
    g_cpu_period.store(wall_ ? 0 : 1000000000ull / hz_);
    if (native_) rp_eval_range(&eval_lo_, &eval_hi_);
    cat_sample_ = intern(native_ ? "CPU_SAMPLE" : "PYTHON_SAMPLE");
    cat_stack_ = intern(native_ ? "CPU_SAMPLE_STACK" : "PYTHON_SAMPLE_STACK");
    // Samples of `rocprof run script.py` start at the script's <module> (stack.hpp); the
    // Python side names the launcher's files (none for the in-process API: nothing to cut).
    launcher_ = LauncherFrames{};
    const std::string& lf = settings.launcher_file;
    const std::string& rf = settings.runpy_file;
    launcher_dir_.clear();
    own_files_.clear();
    if (!lf.empty() && !rf.empty()) {
      launcher_ = LauncherFrames{intern("run_target"), intern(lf), intern("_run_code"), intern(rf),
                                 intern("<module>")};
      // rocprof's package folder: <dir>/cli/target.py → <dir>/
      const size_t cli = lf.rfind("/cli/");
      if (cli != std::string::npos) launcher_dir_ = lf.substr(0, cli + 1);
      launcher_frame_ = FrameRef{intern("<rocprof launcher>"), intern("<rocprof>"), 0, false};
    }
    python::guard_acquire(python::kGuardSampler);
    if (!thread_method_) install_sigprof(on_signal);
    if (after_fork_) {
      // In a fork child this runs inside fork() (pthread_atfork), before the interpreter has
      // re-initialised its locks and thread states: a resolver taking the GIL now would wait
      // on a lock that is about to be re-created, or get a thread state that is about to be
      // deleted. Python's own after-fork hook (capture/sampling.py) starts it instead; a
      // child that never runs Python (a C fork, or subprocess before exec) samples nothing.
      after_fork_ = false;
      pending_ = true;
      return;
    }
    launch();
    if (rp_is_python_thread()) {
      // The thread starting the session (a Python child's main thread, in its sitecustomize)
      // is sampled from now, not from the resolver's first scan: that scan needs the resolver
      // thread scheduled and the GIL, which a short child under CPU contention (a parent's
      // busy threads) may not give it before the child's work is done.
      register_thread(static_cast<uint32_t>(syscall(SYS_gettid)));
      return;
    }
    // Started from a thread without Python (the on-demand control thread opening a window):
    // that thread runs no Python and blocks SIGPROF, so it is not sampled; the process's
    // Python threads are, from the resolver's first scan, which is waited for so that they
    // are armed before the session counts as started, as the starting thread is above. The
    // wait is bounded: a GIL holder that waits on this session leaves them to the next scan.
    // A process without a running interpreter has no thread to sample: no wait.
    if (!rp_python_running()) return;
    uint64_t no_wait_until = 0;
    python::resolver_wait(
        this, [](void* self) { return static_cast<Sampler*>(self)->scanned_.load(); }, this,
        kFirstScanWaitMs, &no_wait_until);
  }

  // From Python's os.register_at_fork(after_in_child=...) hook, with the GIL held: starts
  // the resolver a forked session deferred and samples the calling (only) thread from now.
  int resume_after_fork() {
    after_fork_ = false;
    if (!pending_) return 0;
    pending_ = false;
    launch();
    return register_thread(static_cast<uint32_t>(syscall(SYS_gettid)));
  }

  void launch() {
    // The one resolver thread of capture/python/ (all signals blocked: no tick lands on it).
    last_pass_ns_ = 0;
    scanned_.store(false);
    python::resolver_add(this);
    launched_ = true;
    if (thread_method_) reader_start(static_cast<uint32_t>(hz_), g_cpu_period.load(), collector_);
    std::lock_guard<std::mutex> g(slots_mu_);
    active_ = true;
  }

  // A Python thread registering itself as it starts (the hook in rocprof/capture/sampling.py),
  // so that it is sampled from its first instruction rather than from the resolver's next
  // scan. Called with the GIL held. Returns 1 when armed now, 0 when already sampled (or no
  // slot is free), -1 when no sampling session runs.
  int register_thread(uint32_t tid) {
    std::lock_guard<std::mutex> g(slots_mu_);
    if (!active_) return -1;
    for (Slot& s : g_slots)
      if (s.state.load() == 1 && s.tid == tid) return 0;
    for (Slot& s : g_slots)
      if (s.state.load() == 0) {
        if (!arm(s, tid, rp_this_thread_state())) return 0;
        s.grace = 2;
        return 1;
      }
    collector_->drops("sampling.threads_not_sampled", 1);
    return 0;
  }

  // A Python thread ending (the same hook, after its run()), with the GIL held: the thread
  // method stops reading its frames before its thread state is freed. Returns 1 when it was
  // sampled; 0 otherwise and under the signal method (its timer goes at the next scan).
  int unregister_thread(uint32_t tid) {
    std::lock_guard<std::mutex> g(slots_mu_);
    if (!active_ || !thread_method_) return 0;
    for (Slot& s : g_slots)
      if (s.state.load() == 1 && s.tid == tid) {
        disarm(s);
        return 1;
      }
    return 0;
  }

  void stop(CaptureContext& c) {
    pending_ = false;
    if (!launched_) {
      restore_signals();
      return;
    }
    python::resolver_remove(this);  // the GIL is released while a tick finishes
    launched_ = false;
    if (thread_method_) reader_stop();
    {
      std::lock_guard<std::mutex> g(slots_mu_);
      active_ = false;
      for (Slot& s : g_slots)
        if (s.state.load() == 1) disarm(s);
    }
    restore_signals();
    if (rp_gil_ensure()) {
      drain_all();
      rp_gil_release();
    }
    uint64_t taken = 0, missed = 0, left = 0, faults = 0, torn = 0;
    for (Slot& s : g_slots) {
      taken += s.taken.exchange(0);
      missed += s.missed.exchange(0);
      faults += s.faults.exchange(0);
      torn += s.torn.exchange(0);
      if (s.ring.attached() && !s.ring.empty()) ++left;  // unresolvable now
      s.state.store(0);
    }
    c.info(MetadataInfo{"rocprof.sampling.hz", std::to_string(hz_)});
    c.info(MetadataInfo{"rocprof.sampling.mode", wall_ ? "wall" : "cpu"});
    c.info(MetadataInfo{"rocprof.sampling.method", thread_method_ ? "thread" : "signal"});
    c.info(MetadataInfo{"rocprof.sampling.native", native_ ? "1" : "0"});
    c.info(MetadataInfo{"rocprof.sampling.samples_taken", std::to_string(taken)});
    c.info(MetadataInfo{"rocprof.sampling.samples_missed", std::to_string(missed)});
    c.info(MetadataInfo{"rocprof.sampling.unresolved_frames", std::to_string(unresolved_)});
    c.info(MetadataInfo{"rocprof.sampling.walk_faults", std::to_string(faults)});
    if (thread_method_) c.info(MetadataInfo{"rocprof.sampling.walks_torn", std::to_string(torn)});
    // What the sampler cost the interpreter's threads (B3's breakdown): threads sampled, and
    // the time its resolver held the GIL (they cannot run Python meanwhile).
    c.info(MetadataInfo{"rocprof.sampling.threads_sampled", std::to_string(armed_)});
    c.info(MetadataInfo{"rocprof.sampling.gil_passes", std::to_string(gil_passes_)});
    c.info(MetadataInfo{"rocprof.sampling.gil_held_us", std::to_string(gil_ns_ / 1000)});
    c.info(
        MetadataInfo{"rocprof.sampling.stored_without_gil", std::to_string(stored_without_gil_)});
    if (missed + left) c.drops("sampling", missed + left);
    if (taken == 0) {
      const std::string why = why_no_samples();
      c.info(MetadataInfo{"rocprof.sampling.no_samples", why});
      std::fprintf(stderr, "rocprof: pid %d took no call-stack samples at %d Hz: %s\n", getpid(),
                   hz_, why.c_str());
    }
    reset_tables();
    collector_ = nullptr;
  }

  // 1 when SIGPROF is blocked in thread `tid` of this process, 0 when not, -1 when it has
  // ended (its /proc entry is gone).
  static int sigprof_blocked(uint32_t tid) {
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/status";
    FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return -1;
    char line[256];
    int out = -1;
    unsigned long long mask = 0;
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::sscanf(line, "SigBlk: %llx", &mask) == 1) {
        out = (mask >> (SIGPROF - 1)) & 1u ? 1 : 0;
        break;
      }
    std::fclose(f);
    return out;
  }

  static uint64_t process_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
  }

  // A process that asked for samples and got none hears which of the usual causes it was.
  std::string why_no_samples() const {
    if (armed_ == 0)
      return "no Python thread was sampled (the process ended before the sampler found one)";
    // The sampled threads' own masks (stop() may run on a thread that was never sampled:
    // the on-demand control thread blocks every signal). Threads that have ended are skipped.
    int blocked = 0, alive = 0;
    for (uint64_t i = 0; i < std::min<uint64_t>(thread_method_ ? 0 : armed_, kMaxSlots); ++i) {
      const int b = sigprof_blocked(armed_tids_[i]);
      if (b >= 0) ++alive;
      if (b == 1) ++blocked;
    }
    if (blocked > 0 && blocked == alive)
      return "SIGPROF is blocked in the sampled threads (inherited signal mask): timer ticks "
             "never arrived";
    const uint64_t cpu_ms = (process_cpu_ns() - cpu_at_start_ns_) / 1000000;
    if (!wall_)
      return "the process used " + std::to_string(cpu_ms) + " ms of CPU while sampled, and " +
             "--sampling-mode cpu samples only running Python code (wall mode also samples " +
             "waiting threads)";
    return "its threads ran no Python code while sampled";
  }

  // All timers are deleted: give the signals back (the guard waits for walks still running
  // in other threads' handlers: a fault there must still find it).
  void restore_signals() {
    restore_sigprof();
    python::guard_release(python::kGuardSampler);
  }

  // After fork the child has one thread, no timers (POSIX timers are not inherited) and no
  // resolver: forget all of it without touching locks the parent's threads may have held.
  void fork_child() {
    python::fork_child();  // the guard's buffers, the resolver thread (abandoned, never joined)
    reader_fork_child();
    launched_ = false;
    new (&slots_mu_) std::mutex();
    active_ = false;
    pending_ = false;
    after_fork_ = true;  // the session's restart in this child (start()) defers the resolver
    for (Slot& s : g_slots) {
      s.state.store(0);
      s.ring.reset();
      s.taken.store(0);
      s.missed.store(0);
      s.faults.store(0);
      s.torn.store(0);
      s.reading.store(0);
      s.blocked = false;
    }
    reset_tables();
  }

 private:
  // The resolver's tick (capture/python/resolver.hpp), every kTickMs.
  uint64_t due_in_ns(uint64_t now) override {
    const uint64_t next = last_pass_ns_ + kTickMs * 1000000ull;
    return now >= next ? 0 : next - now;
  }
  // Everything the caches can resolve is stored before the GIL is taken: the interpreter's
  // threads wait while the resolver holds it (at 10 kHz a pass has ~500 samples to store).
  bool without_gil() override {
    last_pass_ns_ = mono_ns();
    for (Slot& s : g_slots)
      if (s.state.load(std::memory_order_acquire) != 0 && s.ring.attached())
        s.blocked = !drain(s, /*gil=*/false);
    return true;  // the thread scan needs the GIL every pass
  }
  void under_gil() override {
    const uint64_t t0 = mono_ns();
    // Only the rings stopped at a frame the caches lack: what the others took while the GIL
    // was awaited is stored by the next pass, without it.
    for (Slot& s : g_slots)
      if (s.blocked) {
        s.blocked = false;
        if (s.state.load(std::memory_order_acquire) != 0 && s.ring.attached()) drain(s, true);
      }
    scan_threads();
    gil_ns_ += mono_ns() - t0;
    ++gil_passes_;
  }

  void scan_threads() {
    std::lock_guard<std::mutex> g(slots_mu_);
    for (Slot& s : g_slots) s.seen = false;
    rp_for_each_thread([](void* ctx, unsigned long tid,
                          const void* ts) { static_cast<Sampler*>(ctx)->saw(tid, ts); },
                       this);
    for (Slot& s : g_slots) {
      const int st = s.state.load();
      if (st == 1 && !s.seen && s.grace > 0)
        --s.grace;
      else if (st == 1 && !s.seen)
        disarm(s);  // the thread's Python state is gone
      else if (st == 2 && s.ring.empty())
        s.state.store(0);
      if (s.seen) s.grace = 0;
    }
    scanned_.store(true);
  }

  void saw(unsigned long tid, const void* tstate) {
    if (tid == static_cast<unsigned long>(syscall(SYS_gettid))) return;  // the resolver
    for (Slot& s : g_slots)
      if (s.state.load() == 1 && s.tid == tid) {
        s.seen = true;
        return;
      }
    if (thread_method_ && tstate == nullptr) return;  // no state to read (3.10: not in threading)
    for (Slot& s : g_slots)
      if (s.state.load() == 0) {
        arm(s, static_cast<uint32_t>(tid), tstate);
        return;
      }
    collector_->drops("sampling.threads_not_sampled", 1);
  }

  // Under slots_mu_. Returns whether the thread is sampled now (its timer runs, or the reader
  // walks it).
  bool arm(Slot& s, uint32_t tid, const void* tstate) {
    if (!s.ring.attached()) s.ring.attach(new uint64_t[kRingWords], kRingWords);
    s.ring.reset();
    s.tid = tid;
    s.tstate = tstate;
    s.seen = true;
    s.grace = 0;
    uint64_t cpu0 = 0;
    thread_cpu_ns(tid, &cpu0);
    s.cpu.start(cpu0);
    note_slot_used(s);  // before the state says armed: the reader then finds it
    if (thread_method_)
      s.state.store(1, std::memory_order_release);  // the reader walks it from its next tick
    else if (!arm_timer(s, tid))
      return false;
    collector_->info(ThreadInfo{tid, now_ns(), 0, {}});
    if (armed_ < kMaxSlots) armed_tids_[armed_] = tid;
    ++armed_;
    return true;
  }

  // The signal method's per-thread timer.
  bool arm_timer(Slot& s, uint32_t tid) {
    sigevent sev{};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_value.sival_ptr = &s;
    sev._sigev_un._tid = static_cast<pid_t>(tid);
    // Both modes tick on CLOCK_MONOTONIC: timers on a thread's CPU clock are only checked at
    // the scheduler tick (CONFIG_HZ, often 250), so at 1 kHz they would fold 3 of 4 expirations
    // into overruns. CPU mode instead filters the ticks by the thread's CPU time (on_signal).
    if (timer_create(CLOCK_MONOTONIC, &sev, &s.timer) != 0) return false;
    s.state.store(1, std::memory_order_release);
    const long period = 1000000000L / hz_;
    itimerspec its{};
    its.it_interval.tv_sec = its.it_value.tv_sec = period / 1000000000L;
    its.it_interval.tv_nsec = its.it_value.tv_nsec = period % 1000000000L;
    if (timer_settime(s.timer, 0, &its, nullptr) != 0) {
      timer_delete(s.timer);
      s.state.store(0);
      return false;
    }
    return true;
  }

  void disarm(Slot& s) {
    if (thread_method_) {
      reader_release(s);
      return;
    }
    timer_delete(s.timer);
    s.state.store(2, std::memory_order_release);
  }

  // Under the GIL.
  void drain_all() {
    for (Slot& s : g_slots)
      if (s.state.load(std::memory_order_acquire) != 0 && s.ring.attached()) drain(s, true);
  }

  // Stores the slot's samples in ring order. With the GIL every code object named by a sample
  // still alive gets resolved; without it, only while the caches resolve every frame of the
  // next sample: the first they cannot stays in the ring, with the ones after it, for the GIL
  // (returns false then).
  bool drain(Slot& s, bool gil) {
    if (s.tid != prev_.tid) prev_.clear(s.tid);
    uint64_t n = 0;
    while ((n = s.ring.peek(RP_PY_WORDS, &raw_)) != 0) {
      int npy = 0, nnat = 0;
      parse_header(raw_[0], &npy, &nnat);
      const uint64_t* w = raw_.data() + 2;
      // The outer frames this sample shares word for word with the thread's previous one are
      // that sample's frames (a cached code object is referenced: its address names it).
      const size_t same = prev_.same_outer(w, static_cast<size_t>(npy));
      const size_t fresh = static_cast<size_t>(npy) - same;
      const uint64_t unresolved = unresolved_;
      py_.resize(static_cast<size_t>(npy));
      for (size_t i = 0; i < fresh; ++i) {
        const uint64_t* f = w + i * RP_PY_WORDS;
        if (!cached_py(f[0], f[1], f[2], &py_[i])) {
          if (!gil) return false;
          py_[i] = resolve_py(f[0], f[1], f[2]);
        }
      }
      std::copy(prev_.py.end() - static_cast<std::ptrdiff_t>(same), prev_.py.end(),
                py_.begin() + static_cast<std::ptrdiff_t>(fresh));
      if (native_) {
        py_entry_.resize(static_cast<size_t>(npy));
        for (size_t i = 0; i < static_cast<size_t>(npy); ++i)
          py_entry_[i] = (w[i * RP_PY_WORDS + 2] & RP_PY_ENTRY) != 0;
      }
      if (unresolved_ == unresolved) {
        prev_.raw.assign(w, w + static_cast<size_t>(npy) * RP_PY_WORDS);
        prev_.py.assign(py_.begin(), py_.end());
      } else {  // a code object freed before it was named: each sample tries (and counts) it
        prev_.raw.clear();
        prev_.py.clear();
      }
      w += static_cast<size_t>(npy) * RP_PY_WORDS;
      ips_.assign(w, w + nnat);
      s.ring.drop(n);
      emit_sample(s.tid, raw_[1]);
      if (!gil) ++stored_without_gil_;
    }
    return true;
  }

  static uint64_t line_key(uint64_t code, uint32_t lasti) {
    return code ^ (static_cast<uint64_t>(lasti) << 48) ^ lasti;  // injective in lasti
  }

  // Without the GIL: a frame whose code object (held by a strong reference since it was
  // first resolved, so its address names the same object) and line are both cached.
  bool cached_py(uint64_t code, uint64_t name_ptr, uint64_t w, FrameRef* out) const {
    const auto it = codes_.find(code);
    if (it == codes_.end() || it->second.name_ptr != name_ptr) return false;
    const auto li = lines_.find(line_key(code, static_cast<uint32_t>(w >> 32)));
    if (li == lines_.end() || li->second.first != code) return false;
    *out = FrameRef{it->second.func_id, it->second.file_id, li->second.second, false};
    return true;
  }

  // Under the GIL.
  FrameRef resolve_py(uint64_t code, uint64_t name_ptr, uint64_t w) {
    const uint32_t lasti = static_cast<uint32_t>(w >> 32);
    const uint32_t first = static_cast<uint32_t>(w & 0x7fffffffu);
    auto it = codes_.find(code);
    if (it == codes_.end() || it->second.name_ptr != name_ptr) {
      const char *func = nullptr, *file = nullptr;
      CodeEntry e{name_ptr, 0, 0, false};
      if (rp_code_info(code, name_ptr, first, &func, &file)) {
        e = CodeEntry{name_ptr, intern(func), intern(file), true};
      } else {
        ++unresolved_;
        return FrameRef{intern("<code freed before resolution>"), 0, 0, false};
      }
      it = codes_.insert_or_assign(code, e).first;
    }
    const uint64_t lkey = line_key(code, lasti);
    auto li = lines_.find(lkey);
    int32_t line;
    if (li != lines_.end() && li->second.first == code) {
      line = li->second.second;
    } else {
      line = rp_code_line(code, lasti);
      lines_[lkey] = {code, line};
    }
    return FrameRef{it->second.func_id, it->second.file_id, line, false};
  }

  void emit_sample(uint32_t tid, uint64_t ts) {
    frames_.clear();  // innermost first
    if (native_ && !ips_.empty()) {
      merge_native();
    } else {
      frames_.assign(py_.begin(), py_.end());
    }
    const size_t keep = launcher_keep(frames_.data(), frames_.size(), launcher_);
    if (keep == frames_.size() &&
        launcher_time(frames_.data(), keep, launcher_, [this](uint32_t f) { return own(f); }))
      frames_.assign(1, launcher_frame_);
    else
      frames_.resize(keep);
    // A stack's nodes are a function of its frames from the outermost: those it shares with
    // the thread's previous sample are that sample's nodes, not looked up in the tree again.
    const size_t nf = frames_.size();
    size_t k = 0;
    while (k < nf && k < prev_.nodes.size() && same_frame(frames_[nf - 1 - k], prev_.kept[k])) ++k;
    prev_.kept.resize(k);
    prev_.nodes.resize(k);
    uint64_t node = k == 0 ? 0 : prev_.nodes[k - 1];
    for (size_t i = k; i < nf; ++i) {
      const FrameRef& f = frames_[nf - 1 - i];
      node = node_for(node, f);
      prev_.kept.push_back(f);
      prev_.nodes.push_back(node);
    }
    Record r{};
    r.kind = RecordKind::kSample;
    r.tid = tid;
    r.start = r.end = ts;
    r.category_id = cat_sample_;
    r.sample.stack_id = node;
    r.sample.value = std::nan("");
    collector_->emit(r);
  }

  // Native frames innermost first; each activation of the eval loop is replaced by the
  // Python frames it runs (capture/python/frames.c marks each activation's outermost frame).
  void merge_native() {
    size_t p = 0;
    for (uint64_t ip : ips_) {
      if (ip >= eval_lo_ && ip < eval_hi_) {
        while (p < py_.size()) {
          frames_.push_back(py_[p]);
          if (py_entry_[p++]) break;
        }
        continue;
      }
      frames_.push_back(native_frame(ip));
    }
    while (p < py_.size()) frames_.push_back(py_[p++]);
  }

  FrameRef native_frame(uint64_t ip) {
    auto it = natives_.find(ip);
    if (it != natives_.end()) return it->second;
    std::string func, file;
    native_symbol(ip, &func, &file);
    FrameRef f{intern(func), intern(file), 0, true};
    natives_.emplace(ip, f);
    return f;
  }

  uint64_t node_for(uint64_t parent, const FrameRef& f) {
    bool is_new = false;
    const uint64_t id = nodes_.node(parent, f, &is_new);
    if (!is_new) return id;
    collector_->info(
        stack_node(id, parent, cat_stack_, text(f.func_id), text(f.file_id), f.line, f.native));
    return id;
  }

  void reset_tables() {
    // Strong references taken by rp_code_info are left alone (the interpreter may be gone);
    // a session's worth of code objects is a bounded, small leak.
    prev_.clear(0);
    codes_.clear();
    lines_.clear();
    natives_.clear();
    nodes_.clear();
    unresolved_ = 0;
    gil_ns_ = gil_passes_ = stored_without_gil_ = 0;
  }

  struct CodeEntry {
    uint64_t name_ptr;
    uint32_t func_id, file_id;
    bool ok;
  };

  CaptureContext* collector_ = nullptr;
  // Text of the ids this sampler interned (the context gives ids, not text back): the stack
  // rows it writes name their frames. Resolver thread only.
  std::unordered_map<uint32_t, std::string> texts_;
  uint32_t intern(const std::string& s) {
    const uint32_t id = collector_->intern(s);
    texts_.emplace(id, s);
    return id;
  }
  const std::string& text(uint32_t id) {
    static const std::string unknown = "?";
    auto it = texts_.find(id);
    return it == texts_.end() ? unknown : it->second;
  }
  int hz_ = 1000;
  bool wall_ = false, native_ = false;
  bool thread_method_ = false;  // --sampling-method thread: thread_reader.hpp, no timers
  uint64_t eval_lo_ = 0, eval_hi_ = 0;
  uint32_t cat_sample_ = 0, cat_stack_ = 0;
  // Guards arming and disarming (slot states 0 -> 1 -> 2) and active_: the resolver's scan,
  // threads registering themselves, stop(). Taken with the GIL held or without it, never
  // while waiting for the GIL. The signal handler never takes it.
  std::mutex slots_mu_;
  bool active_ = false;
  // Fork child: after_fork_ from the atfork handler until Python's after-fork hook runs;
  // pending_ while the restarted session waits for that hook to start the resolver.
  bool after_fork_ = false, pending_ = false;
  bool launched_ = false;      // a client of the resolver thread
  uint64_t last_pass_ns_ = 0;  // the resolver thread's only
  uint64_t unresolved_ = 0;
  uint64_t gil_ns_ = 0, gil_passes_ = 0;  // the resolver's GIL passes (resolver thread only)
  uint64_t stored_without_gil_ = 0;       // samples its caches resolved (resolver thread only)
  uint64_t armed_ = 0;                    // threads armed this session (under slots_mu_)
  uint32_t armed_tids_[kMaxSlots] = {};   // the first kMaxSlots of them (why_no_samples)
  std::atomic<bool> scanned_{false};      // the resolver has scanned the threads since launch()
  uint64_t cpu_at_start_ns_ = 0;          // process CPU time at start (why_no_samples)
  std::unordered_map<uint64_t, CodeEntry> codes_;
  std::unordered_map<uint64_t, std::pair<uint64_t, int32_t>> lines_;
  std::unordered_map<uint64_t, FrameRef> natives_;
  StackTree nodes_;
  LauncherFrames launcher_;
  FrameRef launcher_frame_{};  // what a sample of the launcher's own time is stored as
  std::string launcher_dir_;   // rocprof's package folder, with its final '/'
  std::unordered_map<uint32_t, bool> own_files_;
  // A file of the launcher's side: rocprof's package, runpy, the import system.
  bool own(uint32_t file_id) {
    const auto it = own_files_.find(file_id);
    if (it != own_files_.end()) return it->second;
    const std::string& f = text(file_id);
    const bool mine =
        file_id == launcher_.run_code_file ||
        (!launcher_dir_.empty() && f.compare(0, launcher_dir_.size(), launcher_dir_) == 0) ||
        f.compare(0, 17, "<frozen importlib") == 0;
    own_files_.emplace(file_id, mine);
    return mine;
  }
  static bool same_frame(const FrameRef& a, const FrameRef& b) {
    return a.func_id == b.func_id && a.file_id == b.file_id && a.line == b.line &&
           a.native == b.native;
  }
  // The previous sample drained, of thread `tid` (the resolver thread's only): its raw Python
  // words and their frames (innermost first), its stored frames and their nodes (outermost
  // first). At 10 kHz most of a sample's frames are its predecessor's: they cost a comparison
  // of words here instead of two cache lookups and a tree lookup each.
  struct Previous {
    uint32_t tid = 0;
    std::vector<uint64_t> raw;
    std::vector<FrameRef> py, kept;
    std::vector<uint64_t> nodes;
    void clear(uint32_t t) {
      tid = t;
      raw.clear();
      py.clear();
      kept.clear();
      nodes.clear();
    }
    // How many of the `npy` frames at `w` (innermost first), counted from the outermost, have
    // the same words as the previous sample's.
    size_t same_outer(const uint64_t* w, size_t npy) const {
      const size_t prev = raw.size() / RP_PY_WORDS;
      size_t k = 0;
      while (k < npy && k < prev &&
             std::equal(w + (npy - 1 - k) * RP_PY_WORDS, w + (npy - k) * RP_PY_WORDS,
                        raw.data() + (prev - 1 - k) * RP_PY_WORDS))
        ++k;
      return k;
    }
  };
  Previous prev_;
  std::vector<FrameRef> py_, frames_;
  std::vector<bool> py_entry_;
  std::vector<uint64_t> ips_, raw_;
};

Sampler* g_sampler = new Sampler();  // never destroyed: a late signal or atexit may touch it

void probe(bool* live, std::string* reason) {
  *live = true;
  *reason = native_available()
                ? ""
                : std::string("native stacks unavailable: ") + native_unavailable_reason();
}

class SamplingBackend final : public Backend {
 public:
  const char* name() const override { return "sampling"; }
  bool start(CaptureContext& ctx, const CaptureSettings& s, std::string*) override {
    if (s.sampling.hz == 0) return true;  // sampling not requested
    g_sampler->start(ctx, s.sampling);
    return true;
  }
  void stop(CaptureContext& ctx) override { g_sampler->stop(ctx); }
  void fork_child() override { g_sampler->fork_child(); }
  void probe(bool* live, std::string* reason) override { sampling::probe(live, reason); }
};

const capture::Registered<SamplingBackend> g_registered;  // lives as long as the process

}  // namespace

int register_current_thread() {
  return g_sampler->register_thread(static_cast<uint32_t>(syscall(SYS_gettid)));
}

int unregister_current_thread() {
  return g_sampler->unregister_thread(static_cast<uint32_t>(syscall(SYS_gettid)));
}

int resume_after_fork() { return g_sampler->resume_after_fork(); }

// For tests and `rocprof info`: samples taken / missed since the session started.
void counters(uint64_t* taken, uint64_t* missed) {
  *taken = *missed = 0;
  for (Slot& s : g_slots) {
    *taken += s.taken.load();
    *missed += s.missed.load();
  }
}

}  // namespace rocprof::sampling
