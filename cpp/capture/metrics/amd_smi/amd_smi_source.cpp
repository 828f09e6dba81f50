// AMD GPUs through AMD SMI (libamd_smi, ROCm >= 6; opened at run time), built only where
// amd_smi/amdsmi.h is found at build time: its structures change between releases, so the
// library opened must be the one those headers came with (the same /opt/rocm). Preferred
// over ROCm SMI where both are present, as rocprofiler-systems prefers it. Not run on AMD
// hardware, and not built on the project's CI (no amdsmi.h there): compile-checked only.
#include <amd_smi/amdsmi.h>

#include <cstdio>
#include <cstring>

#include "capture/metrics/source.hpp"
#include "capture/metrics/visible.hpp"

namespace rocprof::metrics {
namespace {

// A release of 2024 took a sensor index in amdsmi_get_power_info; rocprofiler-systems keys
// the same two versions on these numbers.
#if (AMDSMI_LIB_VERSION_MAJOR == 2 && AMDSMI_LIB_VERSION_MINOR == 0) || \
    (AMDSMI_LIB_VERSION_MAJOR == 25 && AMDSMI_LIB_VERSION_MINOR == 2)
#define ROCPROF_AMDSMI_POWER_INDEX 1
using PowerFn = amdsmi_status_t (*)(amdsmi_processor_handle, uint32_t, amdsmi_power_info_t*);
#else
#define ROCPROF_AMDSMI_POWER_INDEX 0
using PowerFn = amdsmi_status_t (*)(amdsmi_processor_handle, amdsmi_power_info_t*);
#endif

struct Api {
  decltype(&amdsmi_init) init = nullptr;
  decltype(&amdsmi_shut_down) shut_down = nullptr;
  decltype(&amdsmi_status_code_to_string) status_string = nullptr;
  decltype(&amdsmi_get_socket_handles) sockets = nullptr;
  decltype(&amdsmi_get_processor_handles) processors = nullptr;
  decltype(&amdsmi_get_gpu_device_uuid) uuid = nullptr;
  decltype(&amdsmi_get_gpu_device_bdf) bdf = nullptr;
  decltype(&amdsmi_get_gpu_asic_info) asic = nullptr;
  decltype(&amdsmi_get_gpu_activity) activity = nullptr;
  decltype(&amdsmi_get_gpu_memory_usage) memory_usage = nullptr;
  PowerFn power = nullptr;
  decltype(&amdsmi_get_energy_count) energy = nullptr;
  decltype(&amdsmi_get_temp_metric) temperature = nullptr;
  decltype(&amdsmi_get_clock_info) clock = nullptr;
  decltype(&amdsmi_get_gpu_metrics_info) gpu_metrics = nullptr;
};

class AmdSmiSource final : public GpuSource {
 public:
  const char* name() const override { return "AMD SMI"; }
  const char* category() const override { return "amd_smi"; }
  const char* vendor() const override { return "AMD"; }

  bool open(std::string* why, std::string* path) override {
    Library lib;
    if (!open_library("ROCPROF_TEST_AMD_SMI_LIBRARY",
                      {"/opt/rocm/lib/libamd_smi.so", "libamd_smi.so.26", "libamd_smi.so.25",
                       "libamd_smi.so.24", "libamd_smi.so"},
                      &lib, why))
      return false;
    *path = lib.path;
    if (!lib.amd_driver_present(why)) return false;
    lib.sym("amdsmi_init", &api_.init);
    lib.sym("amdsmi_shut_down", &api_.shut_down);
    lib.sym("amdsmi_status_code_to_string", &api_.status_string);
    lib.sym("amdsmi_get_socket_handles", &api_.sockets);
    lib.sym("amdsmi_get_processor_handles", &api_.processors);
    lib.sym("amdsmi_get_gpu_device_uuid", &api_.uuid);
    lib.sym("amdsmi_get_gpu_device_bdf", &api_.bdf);
    lib.sym("amdsmi_get_gpu_asic_info", &api_.asic);
    lib.sym("amdsmi_get_gpu_activity", &api_.activity);
    lib.sym("amdsmi_get_gpu_memory_usage", &api_.memory_usage);
    lib.sym("amdsmi_get_power_info", &api_.power);
    lib.sym("amdsmi_get_energy_count", &api_.energy);
    lib.sym("amdsmi_get_temp_metric", &api_.temperature);
    lib.sym("amdsmi_get_clock_info", &api_.clock);
    lib.sym("amdsmi_get_gpu_metrics_info", &api_.gpu_metrics);
    if (!api_.init || !api_.shut_down || !api_.sockets || !api_.processors) {
      *why = lib.path + " lacks amdsmi_init/amdsmi_get_processor_handles";
      return false;
    }
    const amdsmi_status_t rc = api_.init(AMDSMI_INIT_AMD_GPUS);
    if (rc != AMDSMI_STATUS_SUCCESS) {
      *why = std::string("amdsmi_init failed: ") + status(rc);
      return false;
    }
    // Processors socket by socket, in the library's order.
    uint32_t n_sockets = 0;
    if (api_.sockets(&n_sockets, nullptr) == AMDSMI_STATUS_SUCCESS && n_sockets > 0) {
      std::vector<amdsmi_socket_handle> sockets(n_sockets);
      if (api_.sockets(&n_sockets, sockets.data()) == AMDSMI_STATUS_SUCCESS)
        for (uint32_t s = 0; s < n_sockets; ++s) {
          uint32_t n = 0;
          if (api_.processors(sockets[s], &n, nullptr) != AMDSMI_STATUS_SUCCESS || n == 0) continue;
          std::vector<amdsmi_processor_handle> procs(n);
          if (api_.processors(sockets[s], &n, procs.data()) == AMDSMI_STATUS_SUCCESS)
            handles_.insert(handles_.end(), procs.begin(), procs.begin() + n);
        }
    }
    metrics_.assign((sizeof(amdsmi_gpu_metrics_t) + 7) / 8, 0);
    links_.reset(handles_.size());
    energy_.reset(handles_.size());
    return true;
  }

  std::vector<GpuDevice> devices() override {
    std::vector<GpuDevice> out;
    for (uint32_t i = 0; i < handles_.size(); ++i) {
      GpuDevice d;
      d.index = i;
      char buf[AMDSMI_GPU_UUID_SIZE + 1] = {};
      unsigned int len = AMDSMI_GPU_UUID_SIZE;
      if (api_.uuid && api_.uuid(handles_[i], &len, buf) == AMDSMI_STATUS_SUCCESS)
        d.uuid = std::string("GPU-") + buf;
      amdsmi_asic_info_t asic{};
      if (api_.asic && api_.asic(handles_[i], &asic) == AMDSMI_STATUS_SUCCESS)
        d.name = asic.market_name;
      amdsmi_bdf_t bdf{};
      if (api_.bdf && api_.bdf(handles_[i], &bdf) == AMDSMI_STATUS_SUCCESS) {
        char pci[32];
        std::snprintf(
            pci, sizeof pci, "%04x:%02x:%02x.%x", static_cast<unsigned>(bdf.domain_number),
            static_cast<unsigned>(bdf.bus_number), static_cast<unsigned>(bdf.device_number),
            static_cast<unsigned>(bdf.function_number));
        d.pci_bus_id = pci;
      }
      out.push_back(d);
    }
    return out;
  }

  std::vector<uint32_t> runtime_order(const std::vector<GpuDevice>& devices) override {
    return rocm_order(devices);
  }

  void read(uint32_t i, uint64_t now_ns, MetricMask wanted, GpuReading* out) override {
    out->clear();
    if (i >= handles_.size()) return;
    amdsmi_processor_handle h = handles_[i];
    const auto want = [wanted](GpuMetric m) { return (wanted & metric_bit(m)) != 0; };
    amdsmi_engine_usage_t use{};
    if (api_.activity && (want(kBusyGfx) || want(kBusyUmc)) &&
        api_.activity(h, &use) == AMDSMI_STATUS_SUCCESS) {
      out->value[kBusyGfx] = use.gfx_activity;
      out->value[kBusyUmc] = use.umc_activity;
    }
    uint64_t used = 0;
    if (api_.memory_usage && want(kMemoryUsage) &&
        api_.memory_usage(h, AMDSMI_MEM_TYPE_VRAM, &used) == AMDSMI_STATUS_SUCCESS)
      out->value[kMemoryUsage] = static_cast<double>(used) / 1e6;
    if (want(kPower)) read_power(h, out);
    uint64_t counts = 0, stamp = 0;
    float microjoules = 0;  // per count
    if (api_.energy && want(kEnergy) &&
        api_.energy(h, &counts, &microjoules, &stamp) == AMDSMI_STATUS_SUCCESS && microjoules > 0)
      energy_.update(i, counts, static_cast<double>(microjoules) * 1e-6, out);
    int64_t celsius = 0;  // the library's own conversion from ROCm SMI's millidegrees
    if (api_.temperature && want(kTemp) &&
        (api_.temperature(h, AMDSMI_TEMPERATURE_TYPE_EDGE, AMDSMI_TEMP_CURRENT, &celsius) ==
             AMDSMI_STATUS_SUCCESS ||
         api_.temperature(h, AMDSMI_TEMPERATURE_TYPE_HOTSPOT, AMDSMI_TEMP_CURRENT, &celsius) ==
             AMDSMI_STATUS_SUCCESS))
      out->value[kTemp] = static_cast<double>(celsius);
    amdsmi_clk_info_t clk{};
    if (api_.clock && want(kGfxClock) &&
        api_.clock(h, AMDSMI_CLK_TYPE_GFX, &clk) == AMDSMI_STATUS_SUCCESS)
      out->value[kGfxClock] = clk.clk;
    if (api_.clock && want(kMemClock) &&
        api_.clock(h, AMDSMI_CLK_TYPE_MEM, &clk) == AMDSMI_STATUS_SUCCESS)
      out->value[kMemClock] = clk.clk;
    constexpr MetricMask kFromGpuMetrics = metric_bit(kThrottle) | metric_bit(kPcieBandwidth) |
                                           metric_bit(kLinkTx) | metric_bit(kLinkRx);
    if (api_.gpu_metrics && (wanted & kFromGpuMetrics) != 0) {
      std::memset(metrics_.data(), 0, metrics_.size() * 8);
      auto* m = reinterpret_cast<amdsmi_gpu_metrics_t*>(metrics_.data());
      if (api_.gpu_metrics(h, m) == AMDSMI_STATUS_SUCCESS) {
        out->value[kThrottle] = static_cast<double>(m->throttle_status);
        // GB/s, both directions; UINT64_MAX where the board does not report it.
        if (m->pcie_bandwidth_inst != UINT64_MAX)
          out->value[kPcieBandwidth] = static_cast<double>(m->pcie_bandwidth_inst) * 1e3;
        xgmi_rates(i, *m, now_ns, out);
      }
    }
  }

  void close() override {
    if (api_.shut_down != nullptr) api_.shut_down();
    handles_.clear();
  }

 private:
  // XGMI data counters accumulate KB per link: all links together, what is written as sent
  // (tx) and what is read as received (rx).
  void xgmi_rates(uint32_t i, const amdsmi_gpu_metrics_t& m, uint64_t now_ns, GpuReading* out) {
    uint64_t rd = 0, wr = 0;
    bool any = false;
    for (uint32_t l = 0; l < AMDSMI_MAX_NUM_XGMI_LINKS; ++l) {
      if (m.xgmi_read_data_acc[l] == UINT64_MAX || m.xgmi_write_data_acc[l] == UINT64_MAX) continue;
      rd += m.xgmi_read_data_acc[l];
      wr += m.xgmi_write_data_acc[l];
      any = true;
    }
    if (any) links_.update(i, now_ns, wr, rd, 1e3, out);
  }

  void read_power(amdsmi_processor_handle h, GpuReading* out) {
    amdsmi_power_info_t power{};
#if ROCPROF_AMDSMI_POWER_INDEX
    const bool have_power = api_.power && api_.power(h, 0, &power) == AMDSMI_STATUS_SUCCESS;
#else
    const bool have_power = api_.power && api_.power(h, &power) == AMDSMI_STATUS_SUCCESS;
#endif
    // MI300 reports the current socket power, older boards the average (0xFFFF: none).
    if (have_power) {
      const uint32_t w = power.current_socket_power != 0 && power.current_socket_power != 0xFFFF
                             ? power.current_socket_power
                             : power.average_socket_power;
      if (w != 0xFFFF) out->value[kPower] = w;
    }
  }

  const char* status(amdsmi_status_t rc) const {
    const char* s = nullptr;
    if (api_.status_string != nullptr) api_.status_string(rc, &s);
    return s != nullptr ? s : "unknown AMD SMI error";
  }

  Api api_;
  std::vector<amdsmi_processor_handle> handles_;
  std::vector<uint64_t> metrics_;  // one amdsmi_gpu_metrics_t, 8-byte aligned
  LinkRates links_;
  EnergyCounter energy_;
};

}  // namespace

std::unique_ptr<GpuSource> make_amd_smi_source() { return std::make_unique<AmdSmiSource>(); }

}  // namespace rocprof::metrics
