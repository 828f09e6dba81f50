// The two AMD capture layers of one process, and the little they share: the HSA backend
// (capture/hsa/: queue interception, kernel timing, the rocpd dispatch rows) and the
// rocprofiler-sdk backend (capture/rocprofiler_sdk/: PC sampling). No vendor header here.
//
// rocprofiler-sdk's PC sampling attributes samples only to dispatches on queues of its own
// making (it writes a marker packet before each dispatch), and names them by its own dispatch
// ids. So, while it samples:
//  - the HSA backend creates GPU queues through the layer below it (rocprofiler-sdk's
//    hsa_queue_create, installed before our HSA tool loads) and adds its interceptor to the
//    intercept queue that returns, instead of making a queue of its own; the HSA runtime runs
//    the interceptor registered last first, so ours sees each packet before the SDK's;
//  - before writing a batch down, the HSA backend's interceptor hands over, on the submitting
//    thread, the rocpd dispatch id and correlation id of each kernel packet in it, in order;
//    the SDK calls its kernel-dispatch callback for each kernel packet it then sees, on that
//    thread and in that order, and the SDK backend takes the next pair.
#pragma once
#include <atomic>
#include <cstdint>

namespace rocprof::amd_layers {

// Set (before the first queue is made) when rocprofiler-sdk samples PCs in this process.
inline std::atomic<bool> g_sdk_makes_queues{false};

// One batch of kernel packets on its way down (the HSA backend writes at most this many at
// once). dispatch 0: a kernel packet the HSA backend did not record.
struct Handoff {
  static constexpr uint32_t kMax = 32;
  uint64_t dispatch[kMax], correlation[kMax];
  uint32_t count = 0, taken = 0;
};
inline thread_local Handoff t_handoff;

}  // namespace rocprof::amd_layers
