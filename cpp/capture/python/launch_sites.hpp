// Python launch sites of GPU work (kernels, copies, sets), for the CUPTI backend.
//
// The CUPTI ENTER callback runs on the launching thread, which has usually released the GIL
// (PyTorch does before it launches). capture() copies that thread's Python frames — (code
// object, instruction offset) pairs, found through the same thread-state TLS slot and frame
// walk as the sampler (capture/python/frames.c), under a fault guard — and returns a 64-bit key of
// the chain: no Python API, no locks, no allocation. A key seen before maps to its call site id
// through a lock-free table; a new key's frames go to a preallocated lock-free queue that a
// resolver thread drains under the GIL (validating the code objects as the sampler does) and
// numbers `[{"file","line","function"}, ...]`: the site (innermost user frame) first, with the
// library frames inside it as its "library_frames", then the rest of the stack outward; each
// new one goes to the writer as CallsiteInfo.
// resolve(key), called when the GPU activity record is processed, returns the id (it may wait
// briefly for the resolver; never on the launching thread).
//
// Compiled into rocprof._core (it uses the CPython frame reader); librocprof_core, which never
// links libpython, reaches it through the function pointers in capture/cupti/callsite.hpp.
#pragma once
#include <cstdint>
#include <string>

#include "capture/launch_site_stats.hpp"

struct rp_launch_site_listener;

namespace rocprof {
class CaptureContext;
}

namespace rocprof::launch_sites {

// Launching thread, GIL held or not. Returns the frame chain's key (0: not a Python thread,
// or a chain already known to hold no user frame); *id is its call site id when already
// resolved, else 0.
uint64_t capture(uint32_t* id) noexcept;
// Off the hot path (activity-record processing): the call site id for `key` (0: none).
uint32_t resolve(uint64_t key);
// Never waits: the id when resolved (0: none), or *pending when the key is queued and the
// resolver has not reached it yet.
uint32_t peek(uint64_t key, bool* pending) noexcept;
// Lends the chain `key` (from capture() on the lending thread; 0: lend none) to every launch
// made on a thread without Python frames, and returns the key lent before. PyTorch runs a
// backward pass on its own device threads while the calling thread waits in backward(): the
// kernels they launch get that call's line (rocprof.capture.cupti wraps torch.autograd).
uint64_t borrow(uint64_t key) noexcept;
uint64_t borrowed_uses() noexcept;  // launches that took the lent site
// Backward work named by its forward op, for the torch observer (launch_site_api.h, through
// which it calls these): capture_forward keys the calling thread's frames with the op's name;
// set_thread_site makes a key what frameless launches on this thread get (before the lent
// site), returning the one set before; frameless_site is what such a launch gets now.
uint64_t capture_forward(const char* op) noexcept;
uint64_t set_thread_site(uint64_t key) noexcept;
uint64_t frameless_site() noexcept;
uint64_t thread_site_uses() noexcept;  // launches that took a thread's forward op site
// The observer's on/off, run with start/stop (see launch_site_api.h); nullptr detaches.
void set_listener(const struct rp_launch_site_listener* listener);
// Session lifecycle (the CUPTI backend's start/stop). stop() resolves everything pending.
// Call sites go to `ctx` as CallsiteInfo (valid until stop returns).
void start(CaptureContext* ctx);
void stop();
bool running() noexcept;  // between start and stop
// Tests: the JSON list of frames of a call site id (resolve's), "" for none.
std::string site_json(uint32_t id);
// The site filter, '\n'-separated entries: a path prefix or a glob (fnmatch, '*' crossing '/')
// of library code, whose frames are never sites; an entry starting with '!' marks user code
// that no other entry can make library code (rocprof/capture/site_filter.py builds it).
void set_library_prefixes(const std::string& prefixes);

// The counters, in capture/launch_site_stats.hpp's order (both backends' metadata).
void stats(uint64_t out[kLaunchSiteStats]);

}  // namespace rocprof::launch_sites
