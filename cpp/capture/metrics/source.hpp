// Device metrics over time: what one GPU management library (NVML, AMD SMI, ROCm SMI) gives
// the sampler thread. Vendor headers stay in each source's own folder; the sampler sees only
// this interface, so it is the same loop for every vendor.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rocprof::metrics {

// The per-GPU quantities, named as rocprofiler-systems names its AMD SMI counters
// (device_busy_gfx, device_temp, ...) and in the same style where it has none.
enum GpuMetric : uint32_t {
  kBusyGfx,        // % of the last sample period the GPU was executing (NVML util.gpu)
  kBusyUmc,        // % of it device memory was read or written (NVML util.memory)
  kMemoryUsage,    // MB (10^6 bytes) of device memory in use
  kPower,          // W
  kTemp,           // °C
  kGfxClock,       // MHz (SM clock on NVIDIA, GFX/SYS clock on AMD)
  kMemClock,       // MHz
  kThrottle,       // the library's throttle/clock-event reason bits, as a number
  kPcieTx,         // MB/s
  kPcieRx,         // MB/s
  kLinkTx,         // MB/s over NVLink / XGMI
  kLinkRx,         // MB/s
  kPcieBandwidth,  // MB/s both directions, as AMD SMI's gpu_metrics gives it (GB/s steps)
  kEnergy,         // J: the device's cumulative energy counter, unwrapped (EnergyCounter)
  kGpuMetricCount
};

// Which metrics a reading asks for: a bit per GpuMetric. --energy alone asks for kEnergy (and
// kPower of a device without the counter), so a source makes only the calls those need.
using MetricMask = uint32_t;
constexpr MetricMask metric_bit(GpuMetric m) { return MetricMask{1} << m; }
constexpr MetricMask kAllMetrics = (MetricMask{1} << kGpuMetricCount) - 1;
static_assert(kGpuMetricCount <= 32, "MetricMask has a bit per metric");

struct MetricDef {
  const char* name;    // rocpd_info_pmc.name; the track is "<name> [<ordinal>]"
  const char* symbol;  // rocpd_info_pmc.symbol: a short label
  const char* units;   // rocpd_info_pmc.units
  const char* description;
};

// The one table of GPU metric names and units (metrics_backend.cpp).
const MetricDef& gpu_metric(GpuMetric m);

struct GpuDevice {
  uint32_t index = 0;  // the library's own device index
  std::string name, uuid, pci_bus_id;
};

// One reading of one device: value[m] is NaN where the library gave nothing this time.
struct GpuReading {
  double value[kGpuMetricCount];
  void clear() {
    for (double& v : value) v = std::nan("");
  }
};

// Link traffic (NVLink, XGMI) that a library counts cumulatively: the rate between two readings
// of a device, from its second reading on (a counter that went back, a reset, gives none).
class LinkRates {
 public:
  void reset(size_t devices) { prev_.assign(devices, Prev{}); }
  // `tx`, `rx`: the counters now, in units of `unit_bytes`; sets kLinkTx/kLinkRx in MB/s.
  void update(uint32_t device, uint64_t now_ns, uint64_t tx, uint64_t rx, double unit_bytes,
              GpuReading* out) {
    Prev& p = prev_[device];
    if (p.t != 0 && now_ns > p.t && tx >= p.tx && rx >= p.rx) {
      const double seconds = static_cast<double>(now_ns - p.t) / 1e9;
      out->value[kLinkTx] = static_cast<double>(tx - p.tx) * unit_bytes / 1e6 / seconds;
      out->value[kLinkRx] = static_cast<double>(rx - p.rx) * unit_bytes / 1e6 / seconds;
    }
    p = Prev{now_ns, tx, rx};
  }

 private:
  struct Prev {
    uint64_t t = 0, tx = 0, rx = 0;
  };
  std::vector<Prev> prev_;
};

// A device's energy counter as the libraries give it (NVML: mJ since the driver loaded, 64 bits;
// AMD: counts of a resolution in µJ, 32 bits wide on older firmware, so it wraps within
// minutes at full power): joules since the driver's reference point, unwrapped, so that the
// series never decreases and a difference of two values is the energy between them.
class EnergyCounter {
 public:
  void reset(size_t devices) { state_.assign(devices, State{}); }
  // `raw`: the counter now, in units of `joules_per_count`; sets kEnergy.
  void update(uint32_t device, uint64_t raw, double joules_per_count, GpuReading* out) {
    State& s = state_[device];
    s.total = s.seen ? s.total + step(s.prev, raw) : raw;
    s.prev = raw;
    s.seen = true;
    out->value[kEnergy] = static_cast<double>(s.total) * joules_per_count;
  }
  // The counts between two readings. A counter that went back wrapped at 32 bits when the
  // step over the top is less than half that range; otherwise it restarted from zero (a
  // driver reload) and what it holds now is all that was used since.
  static uint64_t step(uint64_t prev, uint64_t raw) {
    if (raw >= prev) return raw - prev;
    constexpr uint64_t k32 = uint64_t{1} << 32;
    if (prev < k32 && k32 - prev + raw < k32 / 2) return k32 - prev + raw;
    return raw;
  }

 private:
  struct State {
    uint64_t prev = 0, total = 0;
    bool seen = false;
  };
  std::vector<State> state_;
};

// How often a value the library refreshes on its own schedule (the energy counter, power)
// actually changes: the times of the readings that saw it change, and the median interval
// between them, refined by the mean of the intervals within half to twice the median (a
// period between two multiples of the reading period alternates between them; their mean is
// the period, either one alone is not). A change is seen up to one reading late, so a value
// that changes at every reading gives the reading period: an upper bound. No allocation in
// add(); the last kKept intervals are kept.
class ChangePeriod {
 public:
  static constexpr size_t kKept = 512;
  // True when `value` differs from the reading before it (a change seen at t_ns).
  bool add(uint64_t t_ns, double value) {
    if (std::isnan(value)) return false;
    bool changed = false;
    if (!seen_) {
      seen_ = true;
    } else if (value != last_) {
      if (changed_ && t_ns > last_change_) intervals_[count_++ % kKept] = t_ns - last_change_;
      last_change_ = t_ns;
      changed_ = changed = true;
    }
    last_ = value;
    return changed;
  }
  bool seen() const { return seen_; }
  // The median of the last kRecent intervals, 0 before there are that many: the period a
  // reader can plan its next reading by. No allocation.
  static constexpr size_t kRecent = 8;
  uint64_t recent_period_ns() const {
    if (count_ < kRecent) return 0;
    std::array<uint64_t, kRecent> v{};
    for (size_t i = 0; i < kRecent; ++i) v[i] = intervals_[(count_ - 1 - i) % kKept];
    std::nth_element(v.begin(), v.begin() + kRecent / 2, v.end());
    return v[kRecent / 2];
  }
  // 0 until two changes were seen.
  uint64_t period_ns() const {
    const size_t n = std::min(count_, kKept);
    if (n == 0) return 0;
    std::vector<uint64_t> v(intervals_.begin(), intervals_.begin() + static_cast<long>(n));
    std::nth_element(v.begin(), v.begin() + static_cast<long>(n / 2), v.end());
    const uint64_t median = v[n / 2];
    double sum = 0;
    size_t near = 0;
    for (uint64_t i : v)
      if (2 * i >= median && i <= 2 * median) sum += static_cast<double>(i), ++near;
    return static_cast<uint64_t>(sum / static_cast<double>(near) + 0.5);
  }

 private:
  std::array<uint64_t, kKept> intervals_{};
  size_t count_ = 0;
  uint64_t last_change_ = 0;
  double last_ = 0;
  bool seen_ = false, changed_ = false;
};

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual const char* name() const = 0;      // "NVML", "AMD SMI", "ROCm SMI"
  virtual const char* category() const = 0;  // rocpd_event category of its samples
  virtual const char* vendor() const = 0;    // rocpd_info_agent.vendor_name
  // Opens the library (dlopen) and initialises it; false with *why (one phrase) when it
  // cannot run here. `path` is set to the library file opened, when one was.
  virtual bool open(std::string* why, std::string* path) = 0;
  virtual std::vector<GpuDevice> devices() = 0;
  // The sampler thread, after open; no allocation. `now_ns` (CLOCK_BOOTTIME) is the reading's
  // time, for the rates a source computes from cumulative counters. Only the metrics in
  // `wanted` are read (the others stay NaN).
  virtual void read(uint32_t index, uint64_t now_ns, MetricMask wanted, GpuReading* out) = 0;
  virtual void close() = 0;
  // How this process's GPU runtime numbers the devices: its ordinal k is devices()[order[k]].
  // Built from *_VISIBLE_DEVICES (visible.hpp).
  virtual std::vector<uint32_t> runtime_order(const std::vector<GpuDevice>& devices) = 0;
};

// The sources in the order they are tried. NVML's declarations are our own (nvml/), so it is
// always built; the AMD ones only where their headers were found at build time.
std::vector<std::unique_ptr<GpuSource>> gpu_sources();

// Library loading shared by the sources. A test-only variable (ROCPROF_TEST_<NAME>_LIBRARY)
// names a stand-in library to open instead of the real ones: tests/metrics/ builds stand-ins
// exporting the real entry points, for hardware this machine does not have.
struct Library {
  void* handle = nullptr;
  std::string path;
  bool stand_in = false;

  void* symbol(const char* name) const;  // null when the library lacks it
  template <class F>
  void sym(const char* name, F* out) const {
    *out = reinterpret_cast<F>(symbol(name));
  }
  // AMD's libraries load without the amdgpu driver, and their init then fails after printing
  // lines of its own: false with *why set when the driver is absent (a stand-in needs none).
  bool amd_driver_present(std::string* why) const;
};
bool open_library(const char* test_variable, const std::vector<std::string>& candidates,
                  Library* lib, std::string* why);

// For rocprof info: every metrics source, whether it is compiled in and can run here.
struct SourceStatus {
  std::string name;
  bool compiled = false, live = false;
  std::string detail;  // why not, or the library opened and its device count
};
std::vector<SourceStatus> source_statuses();

}  // namespace rocprof::metrics
