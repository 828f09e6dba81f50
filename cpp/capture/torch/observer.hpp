// rocprof._torch_observer: names each backward op's GPU work by the forward op it
// differentiates, through PyTorch's RecordFunction callbacks and sequence numbers (the link
// torch.profiler draws between forward and backward ops).
//
// A forward op (RecordScope::FUNCTION) run in grad mode with a sequence number is the op whose
// autograd node takes that number; its thread's Python frames, keyed with the op's name, are
// kept under (RecordFunction thread id, sequence number) in a fixed ring. A backward op
// (RecordScope::BACKWARD_FUNCTION) carries its node's number and forward thread: from its start,
// launches on its thread that run no user Python code take that forward op's site
// (launch_site_api.h's set_thread_site), until the thread's next backward op (observer.cpp says
// why the engine's work in between is the op's too). Several forward ops share a number when one
// calls the other (aten::linear → aten::t): the last one started, the innermost, is kept, as
// torch.profiler links it. Only PyTorch headers and libraries are used here; nothing of
// rocprof's core is linked: _core's services come in as a table (launch_site_api.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "capture/python/launch_site_api.h"

namespace rocprof::torch_observer {

// Registers with _core's launch sites: the observer is on while they run. False: `api` is of
// another version.
bool attach(const rp_launch_site_api* api);
void detach();

struct Stats {
  uint64_t forward_ops;   // forward ops remembered (grad mode, a sequence number)
  uint64_t backward_ops;  // backward ops with a sequence number
  uint64_t linked;        // ... whose forward op was found with a Python site
  uint64_t no_python;     // ... whose forward op ran where no Python frame was
  uint64_t not_found;     // ... whose forward op was not on record (before the session, or
                          // overwritten in the ring)
  bool on;
};
Stats stats();
// "forward_ops=..,backward_ops=..,linked=..,no_python=..,not_found=.." (the session metadata).
void format_stats(const Stats& s, char* out, size_t size);

// Tests: what each op run on any thread would give a launch made inside it, in order.
// kind 'B': a backward op (its node's name and number), 'F': any other op (aten's, -1 when it
// has no number); site: launch_site_api.h's frameless_site() at the op's start.
struct DebugEntry {
  char kind;
  char name[96];
  int64_t seq;
  uint64_t site;
};
void debug_start(size_t capacity);
// Stops logging; the entries logged, valid until the next debug_start.
size_t debug_stop(const DebugEntry** entries);

// Benchmarks: adds (on) or removes a global RecordFunction callback on every op that does
// nothing, registered as the forward ops' one is: PyTorch's own cost of observing ops, the
// floor under the observer's. False: PyTorch refused it.
bool floor_callback(bool on);

inline constexpr uint32_t kRingSlots = 1u << 17;  // forward ops kept (2 MiB)

}  // namespace rocprof::torch_observer
