// Fatal signals keep the session's data: SIGTERM (kill, Pool.terminate(), job schedulers),
// SIGHUP (a closed terminal) and SIGINT where nothing else handles it (C programs; Python
// installs its own SIGINT handler, which raises KeyboardInterrupt, and the normal exit path
// then closes the session).
//
// A signal handler may only call async-signal-safe functions, and closing a session takes
// locks, allocates and talks to SQLite. So the handler only writes one byte to a pipe and
// waits (nanosleep, bounded); a watcher thread that blocks every signal reads the byte, stops
// the session (drain, commit, checkpoint the WAL into the .db) and raises a flag. The handler
// then does what would have happened without rocprof: it calls the program's own handler if
// there was one (after a flush instead of a stop, since such a program may go on running),
// else restores the default action and re-raises the signal, so the process dies of the same
// signal with the same exit status. If the watcher cannot finish in time (a lock held by the
// interrupted thread), the handler gives up waiting: the process still dies as it should.
// The stop knows that limit: a burst's backlog (millions of records buffered) takes longer to
// write than it allows, so the drain ends short of it and counts what it could not write, and
// the database says so (drop metadata, a line on stderr) instead of losing it silently.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "run_manifest.hpp"
#include "session.hpp"
#include "signals.hpp"

namespace rocprof::session::signals {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGHUP, SIGINT};
constexpr long kWaitLimitMs = 5000;  // a flush of a busy session takes well under a second
// What the stop's drain may take of that: the rest is for the last commit and the report.
constexpr long kDrainLimitMs = 3000;

struct sigaction g_previous[NSIG];
bool g_ours[NSIG] = {};
int g_pipe[2] = {-1, -1};
std::atomic<int> g_requests{0};   // handler entries that asked the watcher for work
std::atomic<int> g_completed{0};  // requests the watcher finished
std::atomic<bool> g_stopping{false};
std::atomic<uint64_t> g_drain_deadline{0};  // CLOCK_BOOTTIME ns, set by the handler

uint64_t boottime_ns() {  // clock_gettime is async-signal-safe
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool has_handler(const struct sigaction& sa) {
  if (sa.sa_flags & SA_SIGINFO) return sa.sa_sigaction != nullptr;
  return sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
}

void* watcher(void*) {
  for (;;) {
    char what = 0;
    const ssize_t n = read(g_pipe[0], &what, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return nullptr;
    if (what == 's') {
      stop(g_drain_deadline.load(std::memory_order_acquire));
      manifest::finish_if_launcher();  // the launcher's own exit path will not run
    } else
      flush();
    g_completed.fetch_add(1, std::memory_order_release);
  }
}

void start_watcher() {
  if (pipe2(g_pipe, O_CLOEXEC) != 0) {
    g_pipe[0] = g_pipe[1] = -1;
    return;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);  // the handler must never run on the watcher
  pthread_t t;
  if (pthread_create(&t, nullptr, watcher, nullptr) == 0) pthread_detach(t);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// Only async-signal-safe calls below: write, nanosleep, clock_gettime, sigaction, sigprocmask,
// raise.
void wait_for(int ticket) {
  const timespec ms = {0, 1000000};
  for (long waited = 0; waited < kWaitLimitMs; ++waited) {
    if (g_completed.load(std::memory_order_acquire) >= ticket) return;
    nanosleep(&ms, nullptr);
  }
}

void on_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const struct sigaction& prev = g_previous[sig];
  const bool chain = has_handler(prev);
  const bool stopping = !chain && g_stopping.exchange(true);  // a second fatal signal waits too
  if (current() != nullptr && g_pipe[1] >= 0 && !stopping) {
    const char what = chain ? 'f' : 's';
    const int ticket = g_requests.fetch_add(1) + 1;
    if (!chain)
      g_drain_deadline.store(boottime_ns() + kDrainLimitMs * 1000000ull, std::memory_order_release);
    if (write(g_pipe[1], &what, 1) == 1) wait_for(ticket);
  } else if (stopping) {
    wait_for(g_requests.load());
  }
  errno = saved_errno;
  if (chain) {
    if (prev.sa_flags & SA_SIGINFO)
      prev.sa_sigaction(sig, info, context);
    else
      prev.sa_handler(sig);
    return;
  }
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, sig);
  sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  raise(sig);
}

void after_fork_child() {
  // The watcher thread does not exist here, and the pipe is shared with the parent: a byte
  // written to it would make the parent stop its session.
  if (g_pipe[0] >= 0) {
    close(g_pipe[0]);
    close(g_pipe[1]);
  }
  g_requests.store(0);
  g_completed.store(0);
  g_stopping.store(false);
  start_watcher();
}

}  // namespace

Deferred::Deferred() {
  sigset_t fatal;
  sigemptyset(&fatal);
  for (int sig : kSignals) sigaddset(&fatal, sig);
  pthread_sigmask(SIG_BLOCK, &fatal, &old_);
}

Deferred::~Deferred() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

void install() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  start_watcher();
  pthread_atfork(nullptr, nullptr, after_fork_child);
  for (int sig : kSignals) {
    struct sigaction prev = {};
    if (sigaction(sig, nullptr, &prev) != 0) continue;
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_IGN) continue;  // nohup, daemons
    // Python's own SIGINT handler turns Ctrl-C into KeyboardInterrupt; the launcher's exit
    // path closes the session then. Only a default SIGINT is ours.
    if (sig == SIGINT && has_handler(prev)) continue;
    struct sigaction sa = {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | (prev.sa_flags & SA_ONSTACK);
    sigemptyset(&sa.sa_mask);
    for (int other : kSignals) sigaddset(&sa.sa_mask, other);
    g_previous[sig] = prev;
    if (sigaction(sig, &sa, nullptr) == 0) g_ours[sig] = true;
  }
}

}  // namespace rocprof::session::signals
