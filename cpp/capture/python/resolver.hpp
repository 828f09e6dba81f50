// The one resolver thread of the Python-frames module: the only thread of ours that takes the
// GIL on its own. Its clients (the sampler, GPU launch sites) leave raw frames in lock-free
// structures from places where Python cannot be called (a signal handler, a GPU runtime
// callback); in each pass the thread asks every client whether it has work, takes the GIL once
// for all that do, and runs them. It runs while it has a client, with every signal blocked
// (no timer tick or application signal ever lands on it).
#pragma once
#include <cstdint>

namespace rocprof::python {

class ResolverClient {
 public:
  // Resolver thread, without the GIL, cheap: 0 when under_gil() should run in this pass; else
  // the longest the thread may sleep before asking again (resolver_wake() ends a sleep early).
  virtual uint64_t due_in_ns(uint64_t now_ns) = 0;
  // Resolver thread, without the GIL, once due: the part of the client's work that needs no
  // Python (every GIL pass stalls the interpreter's threads while it runs). Returns whether
  // under_gil() is still needed in this pass.
  virtual bool without_gil() { return true; }
  // Resolver thread, GIL held: the client's work.
  virtual void under_gil() = 0;

 protected:
  ~ResolverClient() = default;
};

// Starts running `c` (and the thread, with its first client). Never waits for the GIL, except
// in the window where the thread is still ending after its last client left. Not for signal
// handlers.
void resolver_add(ResolverClient* c);
// Stops running `c`: returns once no pass runs it. Releases the GIL around the wait when the
// caller holds it (a pass may be waiting for it); the thread ends with its last client.
void resolver_remove(ResolverClient* c);
// Async-signal-safe, lock-free: an early pass.
void resolver_wake();

enum class Waited { kNo, kDone, kTimeout };
// Without the GIL: wakes the thread and waits up to `ms` for done(ctx), checked after every
// pass, while `c` is a client. kNo (no wait) when `c` is not one, or while *skip_until says an
// earlier wait timed out and no pass has ended since (bounds the stall when the GIL holder
// waits on the caller); a timeout sets *skip_until so. *skip_until is guarded by the resolver.
Waited resolver_wait(ResolverClient* c, bool (*done)(void*), void* ctx, int ms,
                     uint64_t* skip_until);

// Fork child (one thread left, inside fork()): forgets the parent's thread, clients and locks.
void resolver_fork_child();

// Fork child: the guard's and the resolver's after-fork reset (guard.hpp, above).
void fork_child();

}  // namespace rocprof::python
