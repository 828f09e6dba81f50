// Single-producer / single-consumer ring of Records.
//
// The producer is the thread that owns the ring; the consumer is the drain thread. push() is
// wait-free: two relaxed loads, one store of the slot, one release store. A full ring drops
// the record and counts it — the application is never blocked by the profiler.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

#include "rocprof/record.hpp"

namespace rocprof {

class Ring {
 public:
  explicit Ring(uint32_t capacity_pow2)
      : slots_(new Record[capacity_pow2]), mask_(capacity_pow2 - 1) {}

  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // Producer side. Returns false (and counts a drop) when the ring is full.
  bool push(const Record& r) noexcept {
    if (try_push(r)) return true;
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  // As push(), but a full ring is not a drop: for producers that can wait (a device
  // buffer being drained off the application's threads, benchmarks).
  bool try_push(const Record& r) noexcept {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - cached_tail_ > mask_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head - cached_tail_ > mask_) return false;
    }
    slots_[head & mask_] = r;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer side: hands out every record published so far, oldest first.
  template <class Fn>
  std::size_t drain(Fn&& fn) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    const uint64_t head = head_.load(std::memory_order_acquire);
    for (uint64_t i = tail; i != head; ++i) fn(slots_[i & mask_]);
    tail_.store(head, std::memory_order_release);
    return static_cast<std::size_t>(head - tail);
  }

  bool empty() const noexcept {
    return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_acquire);
  }
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  uint32_t capacity() const noexcept { return mask_ + 1; }

 private:
  std::unique_ptr<Record[]> slots_;
  const uint64_t mask_;
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;  // producer's last view of tail_
  alignas(64) std::atomic<uint64_t> tail_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace rocprof
