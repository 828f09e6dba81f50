// One clock domain for every record: CLOCK_BOOTTIME nanoseconds, the domain HSA and
// rocprofiler-sdk stamp GPU work with, so host and device records line up without conversion.
#pragma once
#include <cstdint>
#include <ctime>

namespace rocprof {

inline uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Intervals and deadlines of our own threads (clock_nanosleep, periods): CLOCK_MONOTONIC, which
// does not count suspend, unlike the records' domain.
inline uint64_t mono_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline constexpr const char* kClockDomain = "CLOCK_BOOTTIME";

// The CPU's time-stamp counter (x86-64; elsewhere CLOCK_BOOTTIME, and tsc_stamps() is false).
inline uint64_t tsc_now() noexcept {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return now_ns();
#endif
}

// Whether ROCTx stamps may be CPU time-stamp counter readings mapped to CLOCK_BOOTTIME by the
// drain (buffer/tsc_map.hpp): x86-64 with an invariant counter that the kernel trusts as a
// clocksource (tsc_trusted), unless ROCPROF_TSC=0. Decided once per process.
bool tsc_stamps() noexcept;

}  // namespace rocprof
