// Device metrics over time: what one GPU management library (NVML, AMD SMI, ROCm SMI) gives
// the sampler thread. Vendor headers stay in each source's own folder; the sampler sees only
// this interface, so it is the same loop for every vendor.
#pragma once
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
  kGpuMetricCount
};

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
  // time, for the rates a source computes from cumulative counters.
  virtual void read(uint32_t index, uint64_t now_ns, GpuReading* out) = 0;
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
