// rocprof._torch_observer's caching-allocator hook: each action of PyTorch's CUDA caching
// allocator (c10::cuda::CUDACachingAllocator's trace tracker; on ROCm torch the same code,
// hipified, in c10::hip::HIPCachingAllocator) goes to _core's memory capture
// (launch_site_api.h's memory_event) with the allocating thread's Python line.
//
// When: torch makes the allocator's per-device state at CUDA's lazy init, and a tracker
// attached before that is dropped (the allocator attaches it to each device's state that
// exists then, and there is none). So the hook is attached once the memory capture is on AND
// the allocator says it is initialised: from the capture's start if CUDA is up by then, else
// from torch.cuda's lazy-init queue (rocprof.capture.torch_memory registers try_attach there).
// Trackers cannot be removed: attached once per process, it forwards while the capture runs.
//
// The tracker runs with the allocator's mutex held (and maybe the GIL): on_action takes no
// lock, calls no Python and allocates nothing; _core's side is the same.
#pragma once
#include <cstdint>

#include "capture/python/launch_site_api.h"

namespace rocprof::torch_observer::memory {

// PyTorch's TraceEntry::Action numbering (checked against torch's where the hook is built).
enum Action : int {
  kAlloc = 0,
  kFreeRequested = 1,
  kFreeCompleted = 2,
  kSegmentAlloc = 3,
  kSegmentFree = 4,
  kSegmentMap = 5,
  kSegmentUnmap = 6,
  kSnapshot = 7,
  kOom = 8,
};

// The one event function: what the tracker calls for each TraceEntry, and what the CPU tests'
// stand-in calls with synthetic ones. `addr` is the free bytes for kOom (as TraceEntry's).
void on_action(int action, int device, uint64_t addr, uint64_t size, uint64_t stream) noexcept;

// The block size torch counts in allocated_bytes for a request of `size` (its 512-byte
// rounding; the roundup_power2_divisions option and an unsplit remainder are not mirrored).
uint64_t block_size(uint64_t size) noexcept;

void attach(const rp_launch_site_api* api);  // registers the memory listener
void try_attach();                           // attaches the hook if wanted and CUDA is up
// "torch-caching-allocator", "pending: ..." or "none: <why>"; `built`: this module has the hook.
const char* status();
bool built();

}  // namespace rocprof::torch_observer::memory
