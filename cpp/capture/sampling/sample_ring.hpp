// The hot path of sampling, free of Python: the per-thread ring raw samples go into (written
// by the thread's own signal handler, read by the resolver) and the CPU-time filter that
// decides which timer ticks take a sample and how many samples were missed. Unit-tested in
// cpp/tests/test_sampling.cpp.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

namespace rocprof::sampling {

// Raw sample: [kMagic | npy << 8 | nnative << 24] [timestamp] then npy * py_words words of
// Python frames (capture/python/frames.h: RP_PY_WORDS) and nnative instruction pointers.
inline constexpr uint64_t kSampleMagic = 0xA5;
inline uint64_t sample_header(int npy, int nnative) {
  return kSampleMagic | (static_cast<uint64_t>(npy) << 8) | (static_cast<uint64_t>(nnative) << 24);
}
inline bool parse_header(uint64_t h, int* npy, int* nnative) {
  if ((h & 0xff) != kSampleMagic) return false;
  *npy = static_cast<int>((h >> 8) & 0xffff);
  *nnative = static_cast<int>((h >> 24) & 0xffff);
  return true;
}

// One producer (a signal handler on the ring's thread), one consumer (the resolver). The
// word array is attached once and never freed: a late signal may still look at it.
class SampleRing {
 public:
  void attach(uint64_t* words, uint64_t capacity_pow2) {
    words_ = words;
    mask_ = capacity_pow2 - 1;
    reset();
  }
  bool attached() const { return words_ != nullptr; }
  void reset() {
    head_.store(0);
    tail_.store(0);
  }
  bool empty() const { return head_.load(std::memory_order_acquire) == tail_.load(); }

  // Async-signal-safe, no locks, no allocation. False (nothing written) when the resolver
  // is behind and `n` words do not fit: the caller counts a missed sample, never waits.
  bool push(const uint64_t* w, uint64_t n) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    if (mask_ + 1 - (head - tail) < n) return false;
    for (uint64_t i = 0; i < n; ++i) words_[(head + i) & mask_] = w[i];
    head_.store(head + n, std::memory_order_release);
    return true;
  }

  // Consumer: the next whole sample (header first) copied into *out, left in the ring until
  // drop(); returns its word count, 0 when none is complete, or the words do not start with a
  // header (cannot happen with one producer; the ring is then emptied rather than misread).
  uint64_t peek(int py_words, std::vector<uint64_t>* out) {
    const uint64_t head = head_.load(std::memory_order_acquire);
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail >= head) return 0;
    int npy = 0, nnat = 0;
    if (!parse_header(words_[tail & mask_], &npy, &nnat)) {
      tail_.store(head, std::memory_order_release);
      return 0;
    }
    const uint64_t n = 2 + static_cast<uint64_t>(npy) * py_words + nnat;
    if (head - tail < n) return 0;
    out->resize(n);
    for (uint64_t i = 0; i < n; ++i) (*out)[i] = words_[(tail + i) & mask_];
    return n;
  }
  // Consumer: frees the `n` words of the sample peek() returned.
  void drop(uint64_t n) {
    tail_.store(tail_.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
  // Consumer: peek() and drop() in one.
  bool pop(int py_words, std::vector<uint64_t>* out) {
    const uint64_t n = peek(py_words, out);
    if (n != 0) drop(n);
    return n != 0;
  }

 private:
  uint64_t* words_ = nullptr;
  uint64_t mask_ = 0;
  std::atomic<uint64_t> head_{0}, tail_{0};
};

// CPU mode: ticks come every period of wall time (CLOCK_MONOTONIC); a sample is taken per
// period of CPU time the thread used. Idle ticks take nothing; CPU time that ticks could not
// keep up with (several periods between two ticks) is counted as missed samples.
struct CpuCredit {
  uint64_t last = 0, credit = 0;
  void start(uint64_t cpu_now) {
    last = cpu_now;
    credit = 0;
  }
  // Async-signal-safe. Whether this tick takes a sample; adds samples missed to *missed.
  bool tick(uint64_t cpu_now, uint64_t period, uint64_t* missed) {
    credit += cpu_now - last;
    last = cpu_now;
    if (credit < period - period / 8) return false;  // 1/8: tolerance for tick jitter
    credit = credit > period ? credit - period : 0;
    if (credit > 2 * period) {
      *missed += credit / period - 1;
      credit = period;
    }
    return true;
  }
  // The thread method's filter: CPU time that a late look of its reader left unsampled (up to
  // kBacklog periods) is sampled at the looks that follow (the reader looks again after half a
  // period while a slot owes one), each at its own moment, as a late signal would be; only
  // beyond that are samples counted missed.
  static constexpr uint64_t kBacklog = 3;
  // A sample per whole period, the rest carried: no tolerance for early looks is needed, a
  // look that comes early is followed by one that takes the sample.
  bool look(uint64_t cpu_now, uint64_t period, uint64_t* missed) {
    credit += cpu_now - last;
    last = cpu_now;
    if (credit < period) return false;
    credit -= period;
    if (credit > kBacklog * period) {
      *missed += credit / period - kBacklog;
      credit = kBacklog * period + credit % period;
    }
    return true;
  }
};

}  // namespace rocprof::sampling
