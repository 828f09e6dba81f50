// The per-thread state a producer touches: its record chain (the ROCTx push/pop stack is the
// markers backend's own).
// Owned by the Collector; a thread finds its own through a thread-local pointer that is
// re-validated against the session generation, so a new session or fork() starts clean.
#pragma once
#include <atomic>
#include <cstdint>

#include <memory>

#include "chunk_pool.hpp"

namespace rocprof {

struct ThreadBuffer {
  ThreadBuffer(std::shared_ptr<ChunkPool> pool, uint32_t tid_, uint64_t start_ns)
      : ring(std::move(pool)), tid(tid_), start(start_ns) {}

  ChunkChain ring;  // grows by chunks up to the session's budget (named as the ring it replaced)
  const uint32_t tid;
  const uint64_t start;
  std::atomic<bool> exited{false};
  std::atomic<uint64_t> end{0};
  bool announced = false;  // drain thread: rocpd_info_thread row written
};

}  // namespace rocprof
