#include "chunk_pool.hpp"

#include <sys/mman.h>

#include <new>

namespace rocprof {
namespace {

constexpr uint64_t kPtrMask = (1ull << 48) - 1;
constexpr uint64_t kPage = 4096;

inline Chunk* ptr_of(uint64_t head) { return reinterpret_cast<Chunk*>(head & kPtrMask); }
inline uint64_t pack(Chunk* c, uint64_t tag) {
  return (reinterpret_cast<uint64_t>(c) & kPtrMask) | (tag << 48);
}

}  // namespace

ChunkPool::ChunkPool(uint32_t records_per_chunk, uint64_t budget_bytes)
    : records_(records_per_chunk),
      bytes_(
          (sizeof(Chunk) + static_cast<uint64_t>(records_per_chunk) * sizeof(Record) + kPage - 1) /
          kPage * kPage),
      budget_(budget_bytes) {}

ChunkPool::~ChunkPool() {
  // Only now is memory unmapped: a producer's pop may read a listed chunk's link at any time.
  while (Chunk* c = pop()) munmap(c, bytes_);
  while (Chunk* c = cold_) {
    cold_ = c->free_next;
    munmap(c, bytes_);
  }
}

Chunk* ChunkPool::allocate(bool force) noexcept {
  const uint64_t now = resident_.fetch_add(bytes_, std::memory_order_relaxed) + bytes_;
  if (now > budget_ && !force) {
    resident_.fetch_sub(bytes_, std::memory_order_relaxed);
    return nullptr;
  }
  void* mem = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    resident_.fetch_sub(bytes_, std::memory_order_relaxed);
    return nullptr;
  }
  note_peak(now);
  return new (mem) Chunk();
}

void ChunkPool::note_peak(uint64_t now) noexcept {
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

Chunk* ChunkPool::pop() noexcept {
  uint64_t head = head_.load(std::memory_order_acquire);
  for (;;) {
    Chunk* c = ptr_of(head);
    if (c == nullptr) return nullptr;
    // Another thread may take `c` first: then this read is of a chunk still mapped (chunks
    // are unmapped only by the destructor) and the tag makes the exchange below fail.
    Chunk* next = c->free_next;
    if (head_.compare_exchange_weak(head, pack(next, (head >> 48) + 1), std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      free_count_.fetch_sub(1, std::memory_order_relaxed);
      c->count.store(0, std::memory_order_relaxed);
      c->next.store(nullptr, std::memory_order_relaxed);
      return c;
    }
  }
}

void ChunkPool::give(Chunk* c) noexcept {
  uint64_t head = head_.load(std::memory_order_relaxed);
  do {
    c->free_next = ptr_of(head);
  } while (!head_.compare_exchange_weak(head, pack(c, (head >> 48) + 1), std::memory_order_release,
                                        std::memory_order_relaxed));
  free_count_.fetch_add(1, std::memory_order_relaxed);
}

Chunk* ChunkPool::take(bool force) noexcept {
  if (!force && !grown_.load(std::memory_order_relaxed))
    grown_.store(true, std::memory_order_relaxed);
  if (Chunk* c = pop()) return c;
  return allocate(force);
}

void ChunkPool::restock(uint32_t reserve, bool trim) noexcept {
  while (free_count_.load(std::memory_order_relaxed) < reserve) {
    Chunk* c = cold_;
    if (c != nullptr) {
      const uint64_t now = resident_.fetch_add(bytes_ - kPage, std::memory_order_relaxed);
      if (now + bytes_ - kPage > budget_) {
        resident_.fetch_sub(bytes_ - kPage, std::memory_order_relaxed);
        return;
      }
      cold_ = c->free_next;
    } else if ((c = allocate(false)) == nullptr) {
      return;
    }
    // Fault the pages in here, on the drain thread, not in a producer's first stores.
    auto* bytes = reinterpret_cast<volatile unsigned char*>(c);
    for (uint64_t off = kPage; off < bytes_; off += kPage) bytes[off] = 0;
    give(c);
  }
  if (!trim) return;
  // After a burst: the memory beyond the reserve goes back to the system. The chunk itself
  // stays mapped (its first page holds the list link a racing pop may read) on a list only
  // this thread uses.
  while (free_count_.load(std::memory_order_relaxed) > reserve) {
    Chunk* c = pop();
    if (c == nullptr) return;
    madvise(reinterpret_cast<char*>(c) + kPage, bytes_ - kPage, MADV_DONTNEED);
    resident_.fetch_sub(bytes_ - kPage, std::memory_order_relaxed);
    c->free_next = cold_;
    cold_ = c;
  }
}

ChunkChain::ChunkChain(std::shared_ptr<ChunkPool> pool)
    : ThreadRecords(pool->records_per_chunk()), keep_(std::move(pool)), pool_(keep_.get()) {
  tail_ = head_ = pool_->take(/*force=*/true);
  if (tail_ == nullptr) throw std::bad_alloc();
  slots_ = tail_->slots();
  published_ = &tail_->count;
}

ChunkChain::~ChunkChain() {
  for (Chunk* c = head_; c != nullptr;) {
    Chunk* next = c->next.load(std::memory_order_acquire);
    pool_->give(c);
    c = next;
  }
}

bool ChunkChain::grow() noexcept {
  Chunk* c = pool_->take();
  if (c == nullptr) return false;
  tail_->next.store(c, std::memory_order_release);
  tail_ = c;
  slots_ = c->slots();
  published_ = &c->count;
  pos_ = 0;
  return true;
}

Record* ThreadRecords::claim_next() noexcept {
  auto* chain = static_cast<ChunkChain*>(this);
  if (!chain->grow()) {
    chain->dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return slots_;
}

}  // namespace rocprof
