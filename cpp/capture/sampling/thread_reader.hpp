// The thread method of call-stack sampling (`rocprof run --sampling-method thread`): no
// signals. One reader thread of ours wakes HZ times a second and walks, while they run, the
// frames of every armed slot's thread (capture/python/frames.h: rp_walk_thread, under the
// fault guard), into the slot's ring as the signal handler would. The sampled threads pay no
// interrupt, no handler and no syscall; the price is that a stack is read while it changes: a
// walk that meets a frame popped and reused under it is counted (torn) and not stored, and the
// innermost frames of a stack may be a call or two behind. No native frames (their registers
// are the running thread's).
#pragma once
#include <cstdint>

#include "capture/sampling/slot.hpp"

namespace rocprof {
class CaptureContext;
}

namespace rocprof::sampling {

// Starts the reader thread (all signals blocked). `cpu_period`: CPU mode's period in ns of a
// thread's CPU time (a slot is walked once it has used one), 0 in wall mode. While `ctx` is
// paused (roctxProfilerPause) nothing is walked: nothing would be kept.
void reader_start(uint32_t hz, uint64_t cpu_period, const CaptureContext* ctx);
// Ends it: no walk runs once this returns.
void reader_stop();
// Takes an armed slot out of the walks (state 1 -> 2); returns once no walk of it runs, so its
// thread state may be freed after.
void reader_release(Slot& s);
// Fork child: the reader thread is not there; forget it.
void reader_fork_child();

}  // namespace rocprof::sampling
