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

inline constexpr const char* kClockDomain = "CLOCK_BOOTTIME";

}  // namespace rocprof
