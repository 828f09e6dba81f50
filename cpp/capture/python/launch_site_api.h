// The launch-site services rocprof._core lends to rocprof._torch_observer (cpp/capture/torch/),
// handed over as a PyCapsule named ROCPROF_LAUNCH_SITE_API_NAME (_core._launch_site_api()), so
// that the observer, which links libtorch, links no part of _core and _core no part of torch.
// Plain C: the two modules may be built by different compilers' C++ runtimes and ABIs.
//
// The observer maps each backward op to the forward op it differentiates:
//  capture_forward  forward thread, GIL held or not, no locks or allocation: the key of the
//                   calling thread's Python frames tagged with the forward op's name `op` (the
//                   site of the key names it as "backward_of"); 0 when launch sites are off or
//                   the thread has no Python frames.
//  set_thread_site  any thread: from now on, a launch made on the calling thread while it runs
//                   no Python code, or Python code known to hold no user frame, takes `key` (0:
//                   back to the site lent by backward(), if any); returns the key set before.
//                   Keys of an earlier session are dropped when launch sites start again.
//  frameless_site   what a launch on the calling thread without Python frames gets now (tests).
//  set_listener     `on` runs when launch sites start (at once if they run), `off` when they
//                   stop; `off` may fill `value` (up to `size` bytes, NUL-terminated) with the
//                   session's metadata value for ROCPROF_LAUNCH_SITE_API_METADATA ("": none).
//                   NULL detaches. on/off run under a lock of _core: they must not call back
//                   into set_listener.
// Version 2 adds the caching allocator's actions (--memory-allocation-trace):
//  memory_event     the allocator's thread, with the allocator's own mutex held: no Python, no
//                   locks, no allocation. Stores the action (an rp_alloc_event) with the calling
//                   thread's Python line (as a launch made there gets it, backward work its
//                   forward op's) while the memory capture runs; else does nothing.
//  set_memory_listener  `on` runs when the memory capture starts (at once if it runs); NULL
//                   detaches. Under a lock of _core: `on` must not call back into it.
//  memory_source    what this process's allocator capture is: "torch-caching-allocator", or
//                   "none: <why>" (the session's rocprof.memory.source). Not on a hot path.
#ifndef ROCPROF_LAUNCH_SITE_API_H
#define ROCPROF_LAUNCH_SITE_API_H
#include <stddef.h>
#include <stdint.h>

#define ROCPROF_LAUNCH_SITE_API_NAME "rocprof._core.launch_site_api"
#define ROCPROF_LAUNCH_SITE_API_VERSION 2u
#define ROCPROF_LAUNCH_SITE_API_METADATA "rocprof.torch.backward_links"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rp_launch_site_listener {
  void (*on)(void);
  void (*off)(char* value, size_t size);
} rp_launch_site_listener;

/* A caching allocator's action (PyTorch's TraceEntry, the kinds the session stores). */
enum rp_alloc_kind {
  RP_ALLOC_BLOCK = 0,   /* a block handed out (TraceEntry ALLOC) */
  RP_FREE_BLOCK = 1,    /* a block given back (FREE_REQUESTED: allocated bytes drop) */
  RP_ALLOC_SEGMENT = 2, /* device memory taken (SEGMENT_ALLOC, SEGMENT_MAP) */
  RP_FREE_SEGMENT = 3,  /* device memory returned (SEGMENT_FREE, SEGMENT_UNMAP) */
  RP_ALLOC_OOM = 4      /* a request that failed: size, device_free */
};

typedef struct rp_alloc_event {
  uint32_t kind; /* rp_alloc_kind */
  int32_t device;
  uint64_t address;
  uint64_t size;
  uint64_t stream; /* the stream handle (0: the default stream) */
  uint64_t device_free;
} rp_alloc_event;

typedef struct rp_launch_site_api {
  uint32_t version; /* ROCPROF_LAUNCH_SITE_API_VERSION */
  uint64_t (*capture_forward)(const char* op);
  uint64_t (*set_thread_site)(uint64_t key);
  uint64_t (*frameless_site)(void);
  void (*set_listener)(const rp_launch_site_listener* listener);
  void (*memory_event)(const rp_alloc_event* event);
  void (*set_memory_listener)(void (*on)(void));
  void (*memory_source)(const char* source);
} rp_launch_site_api;

#ifdef __cplusplus
}
#endif
#endif /* ROCPROF_LAUNCH_SITE_API_H */
