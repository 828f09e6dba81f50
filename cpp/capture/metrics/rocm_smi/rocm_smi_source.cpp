// AMD GPUs through ROCm SMI (librocm_smi64, opened at run time), built on the rocm_smi.h of
// Debian's librocm-smi-dev (ROCm 5.2) or an /opt/rocm install. Two structures grew after 5.2
// and are read defensively: rsmi_gpu_metrics_t (appended to; read into a buffer far larger
// than any version of it, only its 5.2 prefix used) and rsmi_frequencies_t (ROCm 6 put a bool
// has_deep_sleep first; the layout is chosen by the library's version and checked).
#include <rocm_smi/rocm_smi.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "capture/metrics/source.hpp"
#include "capture/metrics/visible.hpp"

namespace rocprof::metrics {
namespace {

struct Api {
  decltype(&rsmi_init) init = nullptr;
  decltype(&rsmi_shut_down) shut_down = nullptr;
  decltype(&rsmi_status_string) status_string = nullptr;
  decltype(&rsmi_version_get) version = nullptr;
  decltype(&rsmi_num_monitor_devices) count = nullptr;
  decltype(&rsmi_dev_name_get) name = nullptr;
  decltype(&rsmi_dev_unique_id_get) unique_id = nullptr;
  decltype(&rsmi_dev_pci_id_get) pci_id = nullptr;
  decltype(&rsmi_dev_busy_percent_get) busy = nullptr;
  decltype(&rsmi_dev_memory_busy_percent_get) memory_busy = nullptr;
  decltype(&rsmi_dev_memory_usage_get) memory_usage = nullptr;
  decltype(&rsmi_dev_power_ave_get) power = nullptr;
  decltype(&rsmi_dev_energy_count_get) energy = nullptr;
  decltype(&rsmi_dev_temp_metric_get) temperature = nullptr;
  decltype(&rsmi_dev_gpu_clk_freq_get) clock = nullptr;
  decltype(&rsmi_dev_gpu_metrics_info_get) gpu_metrics = nullptr;
};

// Larger than rsmi_gpu_metrics_t and rsmi_frequencies_t of any ROCm version so far.
constexpr size_t kScratch = 16384;

class RocmSmiSource final : public GpuSource {
 public:
  const char* name() const override { return "ROCm SMI"; }
  const char* category() const override { return "rocm_smi"; }
  const char* vendor() const override { return "AMD"; }

  bool open(std::string* why, std::string* path) override {
    Library lib;
    if (!open_library("ROCPROF_TEST_ROCM_SMI_LIBRARY",
                      {"/opt/rocm/lib/librocm_smi64.so", "librocm_smi64.so.7", "librocm_smi64.so.6",
                       "librocm_smi64.so.5", "librocm_smi64.so.1", "librocm_smi64.so"},
                      &lib, why))
      return false;
    *path = lib.path;
    if (!lib.amd_driver_present(why)) return false;
    lib.sym("rsmi_init", &api_.init);
    lib.sym("rsmi_shut_down", &api_.shut_down);
    lib.sym("rsmi_status_string", &api_.status_string);
    lib.sym("rsmi_version_get", &api_.version);
    lib.sym("rsmi_num_monitor_devices", &api_.count);
    lib.sym("rsmi_dev_name_get", &api_.name);
    lib.sym("rsmi_dev_unique_id_get", &api_.unique_id);
    lib.sym("rsmi_dev_pci_id_get", &api_.pci_id);
    lib.sym("rsmi_dev_busy_percent_get", &api_.busy);
    lib.sym("rsmi_dev_memory_busy_percent_get", &api_.memory_busy);
    lib.sym("rsmi_dev_memory_usage_get", &api_.memory_usage);
    lib.sym("rsmi_dev_power_ave_get", &api_.power);
    lib.sym("rsmi_dev_energy_count_get", &api_.energy);
    lib.sym("rsmi_dev_temp_metric_get", &api_.temperature);
    lib.sym("rsmi_dev_gpu_clk_freq_get", &api_.clock);
    lib.sym("rsmi_dev_gpu_metrics_info_get", &api_.gpu_metrics);
    if (!api_.init || !api_.shut_down || !api_.count) {
      *why = lib.path + " lacks rsmi_init/rsmi_num_monitor_devices";
      return false;
    }
    rsmi_status_t rc = api_.init(0);
    if (rc != RSMI_STATUS_SUCCESS) {
      *why = std::string("rsmi_init failed: ") + status(rc);
      return false;
    }
    rsmi_version_t v{};
    if (api_.version != nullptr && api_.version(&v) == RSMI_STATUS_SUCCESS)
      deep_sleep_layout_ = v.major >= 6;
    uint32_t n = 0;
    if (api_.count(&n) != RSMI_STATUS_SUCCESS) n = 0;
    count_ = n;
    energy_.reset(n);
    scratch_.assign(kScratch / sizeof(uint64_t), 0);
    return true;
  }

  std::vector<GpuDevice> devices() override {
    std::vector<GpuDevice> out;
    for (uint32_t i = 0; i < count_; ++i) {
      GpuDevice d;
      d.index = i;
      char buf[256] = {};
      if (api_.name && api_.name(i, buf, sizeof buf - 1) == RSMI_STATUS_SUCCESS) d.name = buf;
      uint64_t id = 0;
      // The form ROCR_VISIBLE_DEVICES takes ("GPU-" and the unique id in hex).
      if (api_.unique_id && api_.unique_id(i, &id) == RSMI_STATUS_SUCCESS) {
        std::snprintf(buf, sizeof buf, "GPU-%016llx", static_cast<unsigned long long>(id));
        d.uuid = buf;
      }
      if (api_.pci_id && api_.pci_id(i, &id) == RSMI_STATUS_SUCCESS) {
        // BDFID: domain << 32 | bus << 8 | device << 3 | function.
        std::snprintf(buf, sizeof buf, "%04llx:%02llx:%02llx.%llx",
                      static_cast<unsigned long long>(id >> 32),
                      static_cast<unsigned long long>((id >> 8) & 0xff),
                      static_cast<unsigned long long>((id >> 3) & 0x1f),
                      static_cast<unsigned long long>(id & 0x7));
        d.pci_bus_id = buf;
      }
      out.push_back(d);
    }
    return out;
  }

  std::vector<uint32_t> runtime_order(const std::vector<GpuDevice>& devices) override {
    return rocm_order(devices);
  }

  void read(uint32_t i, uint64_t, MetricMask wanted, GpuReading* out) override {
    out->clear();
    if (i >= count_) return;
    const auto want = [wanted](GpuMetric m) { return (wanted & metric_bit(m)) != 0; };
    uint32_t pct = 0;
    if (api_.busy && want(kBusyGfx) && api_.busy(i, &pct) == RSMI_STATUS_SUCCESS)
      out->value[kBusyGfx] = pct;
    if (api_.memory_busy && want(kBusyUmc) && api_.memory_busy(i, &pct) == RSMI_STATUS_SUCCESS)
      out->value[kBusyUmc] = pct;
    uint64_t used = 0;
    if (api_.memory_usage && want(kMemoryUsage) &&
        api_.memory_usage(i, RSMI_MEM_TYPE_VRAM, &used) == RSMI_STATUS_SUCCESS)
      out->value[kMemoryUsage] = static_cast<double>(used) / 1e6;
    uint64_t microwatts = 0;
    if (api_.power && want(kPower) && api_.power(i, 0, &microwatts) == RSMI_STATUS_SUCCESS)
      out->value[kPower] = static_cast<double>(microwatts) / 1e6;
    uint64_t counts = 0, stamp = 0;
    float microjoules = 0;  // per count
    if (api_.energy && want(kEnergy) &&
        api_.energy(i, &counts, &microjoules, &stamp) == RSMI_STATUS_SUCCESS && microjoules > 0)
      energy_.update(i, counts, static_cast<double>(microjoules) * 1e-6, out);
    int64_t millicelsius = 0;
    if (api_.temperature && want(kTemp)) {
      // Edge where the board has that sensor, else junction (MI200/MI300 have no edge).
      if (api_.temperature(i, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &millicelsius) ==
              RSMI_STATUS_SUCCESS ||
          api_.temperature(i, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT, &millicelsius) ==
              RSMI_STATUS_SUCCESS)
        out->value[kTemp] = static_cast<double>(millicelsius) / 1000.0;
    }
    if (want(kGfxClock)) out->value[kGfxClock] = clock_mhz(i, RSMI_CLK_TYPE_SYS);
    if (want(kMemClock)) out->value[kMemClock] = clock_mhz(i, RSMI_CLK_TYPE_MEM);
    if (api_.gpu_metrics && want(kThrottle)) {
      std::memset(scratch_.data(), 0, kScratch);
      auto* m = reinterpret_cast<rsmi_gpu_metrics_t*>(scratch_.data());
      if (api_.gpu_metrics(i, m) == RSMI_STATUS_SUCCESS)
        out->value[kThrottle] = static_cast<double>(m->throttle_status);
    }
  }

  void close() override {
    if (api_.shut_down != nullptr) api_.shut_down();
    count_ = 0;
  }

 private:
  // The current clock in MHz (NaN when unknown), read in whichever rsmi_frequencies_t layout
  // the library writes: 5.x {u32 num_supported, u32 current, u64 frequency[32]}, 6.x and later
  // {bool has_deep_sleep, u32 num_supported, u32 current, u64 frequency[32]} (Hz).
  double clock_mhz(uint32_t i, rsmi_clk_type_t type) {
    if (api_.clock == nullptr) return std::nan("");
    std::memset(scratch_.data(), 0, kScratch);
    if (api_.clock(i, type, reinterpret_cast<rsmi_frequencies_t*>(scratch_.data())) !=
        RSMI_STATUS_SUCCESS)
      return std::nan("");
    const auto* bytes = reinterpret_cast<const unsigned char*>(scratch_.data());
    auto read_layout = [&](bool deep_sleep, double* mhz) {
      uint32_t num = 0, cur = 0;
      const size_t base = deep_sleep ? 4 : 0;
      std::memcpy(&num, bytes + base, 4);
      std::memcpy(&cur, bytes + base + 4, 4);
      if (num == 0 || num > RSMI_MAX_NUM_FREQUENCIES || cur >= num) return false;
      if (deep_sleep && bytes[0] > 1) return false;
      uint64_t hz = 0;
      std::memcpy(&hz, bytes + (deep_sleep ? 16 : 8) + 8 * cur, 8);
      *mhz = static_cast<double>(hz) / 1e6;
      return true;
    };
    double mhz = 0;
    if (read_layout(deep_sleep_layout_, &mhz) || read_layout(!deep_sleep_layout_, &mhz)) return mhz;
    return std::nan("");
  }

  const char* status(rsmi_status_t rc) const {
    const char* s = nullptr;
    if (api_.status_string != nullptr) api_.status_string(rc, &s);
    return s != nullptr ? s : "unknown ROCm SMI error";
  }

  Api api_;
  uint32_t count_ = 0;
  bool deep_sleep_layout_ = false;
  EnergyCounter energy_;
  std::vector<uint64_t> scratch_;  // 8-byte aligned; allocated at open, reused by read
};

}  // namespace

std::unique_ptr<GpuSource> make_rocm_smi_source() { return std::make_unique<RocmSmiSource>(); }

}  // namespace rocprof::metrics
