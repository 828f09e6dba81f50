// The one fault guard of every Python frame walk (the sampler's, in its SIGPROF handler, and
// the launch sites', in the GPU runtime's API callback).
//
// A walk reads interpreter memory that the walking thread itself may be changing (a frame
// another store has not finished initialising, e.g. 3.11/3.12's new _PyCFrame at eval-loop
// entry) or a foreign/corrupt thread state: such a walk must be abandoned, never crash the
// application. walk() claims a jump buffer for the calling thread, sets it with sigsetjmp and
// walks; a SIGSEGV/SIGBUS raised by that thread while it is walking siglongjmps back to the
// thread's innermost armed buffer (a sampler tick landing in a launch-site walk nests). A
// fault of any other thread, or outside a walk, goes to the disposition installed before
// ours: a program handler (faulthandler, another guard) is called as if it had been installed
// alone; SIG_DFL/SIG_IGN are put back for the faulting instruction to run again under them.
//
// The buffers live in a fixed table keyed by pthread_self() (a register read): no TLS, which a
// handler in a dlopen'ed library may not touch first (its first use can allocate), no locks,
// no allocation.
#pragma once
#include <cstdint>

namespace rocprof::python {

// Whoever needs the handler installed; it is installed while any user holds it, and put back
// (when still ours) once none does and no walk is running.
enum GuardUser : unsigned { kGuardSampler = 1u, kGuardLaunchSites = 2u, kGuardTests = 4u };
// Not async-signal-safe; from session start/stop paths. Acquiring twice is harmless, and a
// handler inherited across fork keeps the disposition the parent remembered.
void guard_acquire(GuardUser user);
void guard_release(GuardUser user);
// Whether our handler is the process's SIGSEGV disposition now (tests).
bool guard_installed();

// walk()'s results besides a frame count >= 0.
inline constexpr int kWalkNoThread = -1;  // no Python thread state (not a Python thread, exiting)
inline constexpr int kWalkFault = -2;     // the walk faulted and was abandoned
inline constexpr int kWalkBusy = -3;      // every jump buffer in use: not walked
inline constexpr int kWalkTorn = -4;      // another thread's frames changed under the walk

// Async-signal-safe: copies the calling thread's Python frames (frames.h: RP_PY_WORDS words
// each, innermost first, at most `max_frames`) under the guard. `first` null: from the
// thread's current frame; else from that frame (test hooks: a deliberately bad pointer).
int walk(uint64_t* out, int max_frames, const void* first = nullptr) noexcept;

// Another thread's frames, read while it runs (frames.h: rp_walk_thread), under the calling
// thread's guard: a state freed under the read faults into kWalkFault, not a crash.
int walk_thread(const void* tstate, unsigned long tid, uint64_t* out, int max_frames) noexcept;

// As walk() from the thread's current frame, with frames.h's rp_walk_keys_current (a chain's
// identity only, RP_PY_KEY_WORDS words a frame).
int walk_keys(uint64_t* out, int max_frames) noexcept;

// Fork child (one thread left): forgets the buffers claimed by the parent's other threads and
// the lock the parent may have held. Called before the child's session restarts.
void guard_fork_child();

}  // namespace rocprof::python
