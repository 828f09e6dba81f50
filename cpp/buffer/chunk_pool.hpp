// Per-thread record buffers that grow in a burst instead of dropping (Tracy's and Kineto's
// answer to the same problem): a thread writes into a chain of fixed-size chunks; a full
// chunk is followed by another taken from a pool shared by the session's threads, up to a
// memory budget. Only past the budget is a record dropped (and counted).
//
// Hot path (ChunkChain::push): as the old ring's, one slot store and one release store;
// once per chunk (16,384 records by default) a lock-free pop from the pool. The pool is kept
// stocked with pre-faulted chunks by the drain thread, and drained chunks go back to it, so
// a producer allocates only when a burst outruns both (then once per chunk, within budget).
// After a burst the drain thread gives memory beyond a small reserve back to the system.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "rocprof/record.hpp"
#include "rocprof/thread_records.hpp"

namespace rocprof {

struct alignas(64) Chunk {
  std::atomic<uint32_t> count{0};     // records published by the producer
  std::atomic<Chunk*> next{nullptr};  // set by the producer once this chunk is full
  Chunk* free_next = nullptr;         // link on the pool's free list
  Record* slots() noexcept { return reinterpret_cast<Record*>(this + 1); }
};

class ChunkPool {
 public:
  ChunkPool(uint32_t records_per_chunk, uint64_t budget_bytes);
  ~ChunkPool();
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  // Any thread. A chunk from the free list, else a new one while the budget allows; null
  // past the budget. `force` allocates past it (a thread's first chunk: it must have one).
  Chunk* take(bool force = false) noexcept;
  // Any thread: a drained chunk back to the free list.
  void give(Chunk* c) noexcept;
  // Drain thread: keep `reserve` pre-faulted chunks ready; trim=true frees those beyond it.
  void restock(uint32_t reserve, bool trim) noexcept;

  uint32_t records_per_chunk() const noexcept { return records_; }
  uint64_t chunk_bytes() const noexcept { return bytes_; }
  uint64_t budget_bytes() const noexcept { return budget_; }
  // Memory held for records now (chunks in use or ready), and the most it ever was.
  uint64_t resident_bytes() const noexcept { return resident_.load(std::memory_order_relaxed); }
  uint64_t peak_bytes() const noexcept { return peak_.load(std::memory_order_relaxed); }
  // Whether a thread has needed a chunk beyond its first: until then no reserve is kept (a
  // short program's session would spend its start faulting in megabytes it never uses).
  bool grown() const noexcept { return grown_.load(std::memory_order_relaxed); }

 private:
  Chunk* allocate(bool force) noexcept;
  void note_peak(uint64_t now) noexcept;
  Chunk* pop() noexcept;
  // Free list: a Treiber stack whose head packs a 16-bit tag above a 48-bit pointer (x86-64
  // and AArch64 user addresses fit), so a pop racing a pop-and-push of the same chunk (ABA)
  // fails its compare-exchange instead of corrupting the list.
  std::atomic<uint64_t> head_{0};
  std::atomic<uint32_t> free_count_{0};
  const uint32_t records_;
  const uint64_t bytes_;
  const uint64_t budget_;
  std::atomic<uint64_t> resident_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<bool> grown_{false};
  Chunk* cold_ = nullptr;  // drain thread only: trimmed chunks, pages given back
};

// One producer thread's chain. push/try_push/claim/publish: owner thread only; drain: drain
// thread only. The producer's side of the current chunk is ThreadRecords' (its slots, count).
class ChunkChain final : public ThreadRecords {
 public:
  explicit ChunkChain(std::shared_ptr<ChunkPool> pool);
  ~ChunkChain();
  ChunkChain(const ChunkChain&) = delete;
  ChunkChain& operator=(const ChunkChain&) = delete;

  // False (and one drop counted) only when the memory budget is spent.
  bool push(const Record& r) noexcept {
    if (try_push(r)) return true;
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // As push(), but a refusal is not a drop: for producers that can wait (benchmarks).
  bool try_push(const Record& r) noexcept {
    if (pos_ == cap_ && !grow()) return false;
    slots_[pos_] = r;
    published_->store(++pos_, std::memory_order_release);
    return true;
  }

  // Hands out up to `limit` of the records published so far, oldest first; full chunks go
  // back to the pool. A backlog is taken in slices so the drain's batch stays small.
  template <class Fn>
  std::size_t drain(Fn&& fn, std::size_t limit = SIZE_MAX) {
    std::size_t n = 0;
    for (;;) {
      uint32_t count = head_->count.load(std::memory_order_acquire);
      if (count - read_ > limit - n) count = read_ + static_cast<uint32_t>(limit - n);
      Record* slots = head_->slots();
      for (uint32_t i = read_; i < count; ++i) fn(slots[i]);
      n += count - read_;
      read_ = count;
      if (count < cap_ || n == limit) return n;
      Chunk* next = head_->next.load(std::memory_order_acquire);
      if (next == nullptr) return n;  // the producer has not needed the next chunk yet
      pool_->give(head_);
      head_ = next;
      read_ = 0;
    }
  }

  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  uint32_t capacity() const noexcept { return cap_; }  // records per chunk

 private:
  friend class ThreadRecords;  // claim_next
  bool grow() noexcept;

  std::shared_ptr<ChunkPool> keep_;  // outlives the collector when buffers are retired
  ChunkPool* const pool_;
  Chunk* tail_;              // producer
  alignas(64) Chunk* head_;  // consumer
  uint32_t read_ = 0;        // consumer
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace rocprof
