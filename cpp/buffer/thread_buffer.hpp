// The per-thread state a producer touches: its ring and its ROCTx push/pop stack.
// Owned by the Collector; a thread finds its own through a thread-local pointer that is
// re-validated against the session generation, so a new session or fork() starts clean.
#pragma once
#include <atomic>
#include <cstdint>

#include "ring.hpp"

namespace rocprof {

struct ThreadBuffer {
  static constexpr uint32_t kMaxDepth = 256;

  explicit ThreadBuffer(uint32_t capacity, uint32_t tid_, uint64_t start_ns)
      : ring(capacity), tid(tid_), start(start_ns) {}

  Ring ring;
  const uint32_t tid;
  const uint64_t start;
  std::atomic<bool> exited{false};
  std::atomic<uint64_t> end{0};
  bool announced = false;  // drain thread: rocpd_info_thread row written

  // roctxRangePush/Pop stack. Only the owning thread touches it.
  uint32_t depth = 0;
  uint64_t starts[kMaxDepth];
  uint32_t names[kMaxDepth];
  bool paused_at_start[kMaxDepth];
};

}  // namespace rocprof
