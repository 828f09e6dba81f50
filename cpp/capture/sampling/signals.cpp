// Signal dispositions of the sampler; see signals.hpp for the contracts.
#include "capture/sampling/signals.hpp"

#include <cstdio>

namespace rocprof::sampling {
namespace {

SigAction g_prof_handler = nullptr;
struct sigaction g_prev_prof{};
bool g_prof_installed = false;

bool is_ours(const struct sigaction& a, SigAction h) {
  return (a.sa_flags & SA_SIGINFO) != 0 && a.sa_sigaction == h;
}

bool is_program_handler(const struct sigaction& a) {
  if (a.sa_flags & SA_SIGINFO) return a.sa_sigaction != nullptr;
  return a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
}

}  // namespace

void install_sigprof(SigAction handler) {
  g_prof_handler = handler;
  struct sigaction cur{};
  sigaction(SIGPROF, nullptr, &cur);
  if (is_ours(cur, handler)) {  // inherited across fork: the remembered disposition holds
    g_prof_installed = true;
    return;
  }
  struct sigaction sa{};
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, &g_prev_prof);
  g_prof_installed = true;
  if (is_program_handler(g_prev_prof))
    std::fprintf(stderr,
                 "rocprof: SIGPROF already had a handler (another profiler or signal.signal); "
                 "sampling uses its own timer signals and passes every other SIGPROF on to it\n");
}

void forward_sigprof(int sig, siginfo_t* si, void* uc) {
  const struct sigaction& p = g_prev_prof;
  if (p.sa_flags & SA_SIGINFO) {
    if (p.sa_sigaction != nullptr) p.sa_sigaction(sig, si, uc);
  } else if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
    p.sa_handler(sig);
  }
}

void restore_sigprof() {
  if (!g_prof_installed) return;
  g_prof_installed = false;
  struct sigaction cur{};
  sigaction(SIGPROF, nullptr, &cur);
  if (!is_ours(cur, g_prof_handler)) return;  // replaced after us: that handler stays
  // Setting SIG_IGN discards SIGPROF pending in every thread of the process (POSIX; Linux
  // flushes the shared and all per-thread queues), so no tick of a deleted timer outlives us.
  struct sigaction ign{};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPROF, &ign, nullptr);
  sigaction(SIGPROF, &g_prev_prof, nullptr);
}

bool sigprof_installed() {
  struct sigaction cur{};
  sigaction(SIGPROF, nullptr, &cur);
  return g_prof_handler != nullptr && is_ours(cur, g_prof_handler);
}

}  // namespace rocprof::sampling
