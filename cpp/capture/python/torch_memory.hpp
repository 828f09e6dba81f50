// The caching allocator's actions (PyTorch's, through rocprof._torch_observer's trace hook) as
// rocpd_memory_allocate rows of level VIRTUAL (docs/database.md, "GPU memory"),
// each with the Python line of the thread that allocated, as its launches get theirs.
//
// A backend of rocprof._core ("torch-allocator"), on with TorchMemorySettings::enabled (the
// `allocations` or `allocator` activity): it holds the session's context, tells the observer to
// attach its hook (launch_site_api.h's memory listener) and, where no GPU backend runs the launch
// sites (a CPU run through the stand-in), starts them itself. event() is what the hook calls, on
// the allocating thread with the allocator's mutex held: one launch-site capture (lock-free, no
// Python API), one record into the thread's buffer; a site key not yet resolved travels in the
// record (kFlagSiteKey) and the drain resolves it (capture::resolve_site, holding the record
// until the resolver has named it), never this thread. A thread's first record registers its
// buffer with the collector (one allocation and lock, as for every producer thread).
#pragma once
#include <cstdint>
#include <string>

#include "capture/python/launch_site_api.h"

namespace rocprof::torch_memory {

// launch_site_api.h's memory_event / set_memory_listener / memory_source.
void event(const rp_alloc_event* e) noexcept;
void set_listener(void (*on)(void));
void set_source(const char* source);

// The drain could not name a record's line: the resolver had not reached its frames when the
// record's wait ran out (stored without a line; rocprof.memory.unattributed).
void count_unattributed() noexcept;

struct Counts {
  uint64_t stored, dropped, unattributed;
  bool on;
};
Counts counts() noexcept;

// Why this build's observer has no allocator hook ("" when it has one): launch_site_api.cpp.
const char* build_reason();

}  // namespace rocprof::torch_memory
