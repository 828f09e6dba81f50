// ROCTx stamps in CPU time-stamp counter ticks, mapped to CLOCK_BOOTTIME by the drain.
//
// Every range reads the clock twice; through the vDSO CLOCK_BOOTTIME costs two to three times
// a bare counter read (the kernel orders the read and checks its clock mode), which was most
// of a recorded `with roctx.range()` besides Python's own `with`. Where the kernel trusts the
// counter (invariant, synchronised across CPUs: tsc_trusted below), the markers
// stamp raw counter values (kFlagTscTime) and the drain maps them: piecewise linear between
// calibration points (a counter reading and the clock, read together), each taken after the
// drain has taken the records it converts, so a stamp always lies between two points, and a
// segment never changes once a stamp used it (nested ranges keep their order). Elsewhere the
// markers read CLOCK_BOOTTIME as every other record does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace rocprof {

class TscMap {
 public:
  // Adds a calibration point now (drain thread; allocates).
  void calibrate() noexcept;
  // CLOCK_BOOTTIME ns of a counter reading.
  uint64_t boottime(uint64_t tsc) const noexcept;
  std::size_t points() const noexcept { return points_.size(); }

  // Points kept: past this, every other one of the older half goes (about 90 minutes of
  // points at one per drain; only the start of a range open that long maps through them).
  static constexpr std::size_t kMaxPoints = 1u << 18;

 private:
  struct Point {
    uint64_t tsc, ns;
  };
  std::vector<Point> points_;
};

// Whether the counter may stamp ranges, from the kernel's list of usable clocksources
// (/sys/.../available_clocksource) and the CPU's flags (/proc/cpuinfo): the counter must be
// invariant (constant_tsc, nonstop_tsc) and the kernel must still offer tsc as a clocksource,
// which it stops doing once it finds the counters out of step across CPUs or unstable. The
// current clocksource may be another one built on the counter (kvm-clock and Hyper-V's page in
// virtual machines, where a CLOCK_BOOTTIME read costs several counter reads): the drain's
// calibration maps the counter to CLOCK_BOOTTIME whichever source the kernel keeps time with.
bool tsc_trusted(std::string_view available_clocksources, std::string_view cpu_flags) noexcept;

}  // namespace rocprof
