#include "tsc_map.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "rocprof/clock.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace rocprof {

namespace {
bool has_word(std::string_view text, std::string_view word) noexcept {
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    const bool starts = at == 0 || text[at - 1] == ' ' || text[at - 1] == '\t';
    const std::size_t end = at + word.size();
    const bool ends =
        end == text.size() || text[end] == ' ' || text[end] == '\t' || text[end] == '\n';
    if (starts && ends) return true;
  }
  return false;
}
}  // namespace

bool tsc_trusted(std::string_view available_clocksources, std::string_view cpu_flags) noexcept {
  return has_word(available_clocksources, "tsc") && has_word(cpu_flags, "constant_tsc") &&
         has_word(cpu_flags, "nonstop_tsc");
}

bool tsc_stamps() noexcept {
  static const bool usable = [] {
#if defined(__x86_64__)
    if (const char* env = std::getenv("ROCPROF_TSC"); env != nullptr && std::strcmp(env, "0") == 0)
      return false;
    std::string sources;
    std::getline(
        std::ifstream("/sys/devices/system/clocksource/clocksource0/available_clocksource"),
        sources);
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
      if (line.rfind("flags", 0) == 0) return tsc_trusted(sources, line);
#endif
    return false;
  }();
  return usable;
}

void TscMap::calibrate() noexcept {
#if defined(__x86_64__)
  // The tightest of a few readings: a counter read on each side of the clock, the point in the
  // middle (a preempted reading is wide and loses).
  Point best{0, 0};
  uint64_t width = UINT64_MAX;
  for (int i = 0; i < 4; ++i) {
    _mm_lfence();
    const uint64_t a = __rdtsc();
    _mm_lfence();
    const uint64_t ns = now_ns();
    _mm_lfence();
    const uint64_t b = __rdtsc();
    if (b > a && b - a < width) {
      width = b - a;
      best = Point{a + (b - a) / 2, ns};
    }
  }
  if (width == UINT64_MAX) return;
  if (!points_.empty() && (best.tsc <= points_.back().tsc || best.ns <= points_.back().ns)) return;
  if (points_.size() >= kMaxPoints) {
    const std::size_t half = points_.size() / 2;
    std::size_t out = 0;
    for (std::size_t i = 0; i < half; i += 2) points_[out++] = points_[i];
    for (std::size_t i = half; i < points_.size(); ++i) points_[out++] = points_[i];
    points_.resize(out);
  }
  try {
    points_.push_back(best);
  } catch (...) {  // out of memory: the last segment stretches, conversions go on
  }
#endif
}

uint64_t TscMap::boottime(uint64_t tsc) const noexcept {
  if (points_.empty()) return now_ns();  // never calibrated: cannot happen for a stamped record
  if (points_.size() == 1) return points_[0].ns;
  // The segment holding tsc (the first or last one, extended, outside the points).
  std::size_t hi = 1;
  if (tsc >= points_.back().tsc) {
    hi = points_.size() - 1;
  } else if (tsc > points_[0].tsc) {
    std::size_t lo = 0, up = points_.size() - 1;  // points_[lo].tsc < tsc <= points_[up].tsc
    while (up - lo > 1) {
      const std::size_t mid = lo + (up - lo) / 2;
      (points_[mid].tsc < tsc ? lo : up) = mid;
    }
    hi = up;
  }
  const Point& a = points_[hi - 1];
  const Point& b = points_[hi];
  const __int128 dt = static_cast<__int128>(tsc) - static_cast<__int128>(a.tsc);
  const __int128 ns = static_cast<__int128>(a.ns) + dt * static_cast<__int128>(b.ns - a.ns) /
                                                        static_cast<__int128>(b.tsc - a.tsc);
  return ns < 0 ? 0 : static_cast<uint64_t>(ns);
}

}  // namespace rocprof
