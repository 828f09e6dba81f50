// The sampler's process-wide SIGPROF disposition (timer ticks). Installed when a sampling
// session starts, restored when it stops, and shared fairly with a handler installed before
// ours: signals that are not the sampler's go to the previous handler. Not thread-safe:
// called from start/stop only. (The frame walk's SIGSEGV/SIGBUS guard is capture/python/'s.)
#pragma once
#include <signal.h>
#include <sys/types.h>

namespace rocprof::sampling {

using SigAction = void (*)(int, siginfo_t*, void*);

// Installs `handler` for SIGPROF, remembering the disposition it replaces. When that was
// another program handler (not SIG_DFL/SIG_IGN), says so in one stderr line. A second call
// while installed (a fork child's restarted session) keeps the first remembered disposition.
void install_sigprof(SigAction handler);
// Async-signal-safe: hands a SIGPROF that is not one of the sampler's ticks to the handler
// installed before ours (nothing when that was SIG_DFL or SIG_IGN: SIGPROF's default would
// kill the process for a signal the sampler's presence let through).
void forward_sigprof(int sig, siginfo_t* si, void* uc);
// Puts the previous SIGPROF disposition back, first discarding ticks still pending in any
// thread (a timer deleted after it fired leaves its signal queued; delivered to SIG_DFL it
// would kill the process). Leaves a handler installed after ours alone.
void restore_sigprof();
// Whether our SIGPROF handler is installed now (tests, `rocprof info`).
bool sigprof_installed();

}  // namespace rocprof::sampling
