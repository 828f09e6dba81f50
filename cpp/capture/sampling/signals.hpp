// The sampler's process-wide signal dispositions: SIGPROF (timer ticks) and a fault guard
// (SIGSEGV/SIGBUS) for the frame walk. Installed when a sampling session starts, restored
// when it stops, and shared fairly with handlers installed before ours: signals that are not
// the sampler's go to the previous handler. Not thread-safe: called from start/stop only.
#pragma once
#include <setjmp.h>
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

// Fault guard: while a thread's frame walk runs, a SIGSEGV/SIGBUS it raises jumps back to the
// jmp_buf that `find(tid)` returns for it (the walk reads interpreter memory that another
// store may not have finished initialising). A fault of any other thread, or outside a walk,
// goes to the previous disposition: a program handler is called (another guard's walk is
// thereby still caught by that guard), SIG_DFL/SIG_IGN are put back for the fault to recur.
void install_fault_guard(sigjmp_buf* (*find)(pid_t tid));
void restore_fault_guard();

}  // namespace rocprof::sampling
