// One producer thread's record buffer, as a producer that fills records in place sees it: the
// buffer stage's per-thread chain (buffer/chunk_pool.hpp) is one, and a capture backend reaches
// it through its context (capture/context.hpp: thread_records()) without seeing the chain.
// claim() and publish() are inline, so the ROCTx pop that keeps this per thread and session
// pays no call, thread lookup or copy; only past the end of a chunk does it call out.
#pragma once
#include <atomic>
#include <cstdint>

#include "rocprof/record.hpp"

namespace rocprof {

class ThreadRecords {
 public:
  // The next slot, to fill and then publish(); null when the session's memory budget is spent
  // (one drop counted). Owner thread only.
  Record* claim() noexcept { return pos_ != cap_ ? slots_ + pos_ : claim_next(); }
  void publish() noexcept { published_->store(++pos_, std::memory_order_release); }

 protected:
  explicit ThreadRecords(uint32_t capacity) noexcept : cap_(capacity) {}
  ~ThreadRecords() = default;
  ThreadRecords(const ThreadRecords&) = delete;
  ThreadRecords& operator=(const ThreadRecords&) = delete;
  // The current chunk is full: the first slot of the next one (buffer/chunk_pool.cpp).
  Record* claim_next() noexcept;

  // The current chunk as the producer writes it: its slots and the count the drain reads.
  Record* slots_ = nullptr;
  std::atomic<uint32_t>* published_ = nullptr;
  uint32_t pos_ = 0;
  const uint32_t cap_;
};

}  // namespace rocprof
