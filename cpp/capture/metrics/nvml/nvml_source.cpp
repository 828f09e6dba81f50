// NVIDIA GPUs through NVML (libnvidia-ml.so.1, opened at run time; nvml_api.h says why the
// declarations are ours). Utilisation is NVML's own average over its sample period (1/6 s to
// 1 s depending on the product), so it lags a change by up to that much.

#include <climits>
#include <cstring>

#include "capture/metrics/nvml/nvml_api.h"
#include "capture/metrics/source.hpp"
#include "capture/metrics/visible.hpp"

namespace rocprof::metrics {
namespace {

struct Api {
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
  decltype(&nvmlDeviceGetCount_v2) count = nullptr;
  decltype(&nvmlDeviceGetHandleByIndex_v2) handle = nullptr;
  decltype(&nvmlDeviceGetName) name = nullptr;
  decltype(&nvmlDeviceGetUUID) uuid = nullptr;
  // Optional from here: a device or driver without one records the others.
  decltype(&nvmlDeviceGetUtilizationRates) utilization = nullptr;
  decltype(&nvmlDeviceGetMemoryInfo) memory = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power = nullptr;
  decltype(&nvmlDeviceGetTotalEnergyConsumption) energy = nullptr;
  decltype(&nvmlDeviceGetTemperature) temperature = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) reasons = nullptr;
  decltype(&nvmlDeviceGetPcieThroughput) pcie = nullptr;
  decltype(&nvmlDeviceGetFieldValues) fields = nullptr;
};

class NvmlSource final : public GpuSource {
 public:
  const char* name() const override { return "NVML"; }
  const char* category() const override { return "nvml"; }
  const char* vendor() const override { return "NVIDIA"; }

  bool open(std::string* why, std::string* path) override {
    Library lib;
    if (!open_library("ROCPROF_TEST_NVML_LIBRARY", {"libnvidia-ml.so.1", "libnvidia-ml.so"}, &lib,
                      why))
      return false;
    *path = lib.path;
    lib.sym("nvmlInit_v2", &api_.init);
    lib.sym("nvmlShutdown", &api_.shutdown);
    lib.sym("nvmlErrorString", &api_.error_string);
    lib.sym("nvmlDeviceGetCount_v2", &api_.count);
    lib.sym("nvmlDeviceGetHandleByIndex_v2", &api_.handle);
    lib.sym("nvmlDeviceGetName", &api_.name);
    lib.sym("nvmlDeviceGetUUID", &api_.uuid);
    if (!api_.init || !api_.shutdown || !api_.count || !api_.handle || !api_.name || !api_.uuid) {
      *why = lib.path + " lacks nvmlInit_v2/nvmlDeviceGetCount_v2 (older than NVML 5.319)";
      return false;
    }
    lib.sym("nvmlDeviceGetUtilizationRates", &api_.utilization);
    lib.sym("nvmlDeviceGetMemoryInfo", &api_.memory);
    lib.sym("nvmlDeviceGetPowerUsage", &api_.power);
    lib.sym("nvmlDeviceGetTotalEnergyConsumption", &api_.energy);
    lib.sym("nvmlDeviceGetTemperature", &api_.temperature);
    lib.sym("nvmlDeviceGetClockInfo", &api_.clock);
    // The same bits under the newer name (CUDA 12.2 on); drivers before it have only the old.
    lib.sym("nvmlDeviceGetCurrentClocksEventReasons", &api_.reasons);
    if (api_.reasons == nullptr)
      lib.sym("nvmlDeviceGetCurrentClocksThrottleReasons", &api_.reasons);
    lib.sym("nvmlDeviceGetPcieThroughput", &api_.pcie);
    lib.sym("nvmlDeviceGetFieldValues", &api_.fields);
    const nvmlReturn_t rc = api_.init();
    if (rc != NVML_SUCCESS) {
      *why = std::string("nvmlInit failed: ") + error(rc);
      return false;
    }
    unsigned int n = 0;
    if (api_.count(&n) != NVML_SUCCESS) n = 0;
    handles_.assign(n, nullptr);
    for (unsigned int i = 0; i < n; ++i)
      if (api_.handle(i, &handles_[i]) != NVML_SUCCESS) handles_[i] = nullptr;
    links_.reset(n);
    energy_.reset(n);
    return true;
  }

  std::vector<GpuDevice> devices() override {
    std::vector<GpuDevice> out;
    for (uint32_t i = 0; i < handles_.size(); ++i) {
      GpuDevice d;
      d.index = i;
      char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      if (handles_[i] != nullptr && api_.name(handles_[i], buf, sizeof buf) == NVML_SUCCESS)
        d.name = buf;
      std::memset(buf, 0, sizeof buf);
      if (handles_[i] != nullptr && api_.uuid(handles_[i], buf, sizeof buf) == NVML_SUCCESS)
        d.uuid = buf;
      out.push_back(d);
    }
    return out;
  }

  std::vector<uint32_t> runtime_order(const std::vector<GpuDevice>& devices) override {
    return cuda_order(devices);
  }

  void read(uint32_t index, uint64_t now_ns, MetricMask wanted, GpuReading* out) override {
    out->clear();
    if (index >= handles_.size() || handles_[index] == nullptr) return;
    nvmlDevice_t d = handles_[index];
    const auto want = [wanted](GpuMetric m) { return (wanted & metric_bit(m)) != 0; };
    nvmlUtilization_t u{};
    if (api_.utilization && (want(kBusyGfx) || want(kBusyUmc)) &&
        api_.utilization(d, &u) == NVML_SUCCESS) {
      out->value[kBusyGfx] = u.gpu;
      out->value[kBusyUmc] = u.memory;
    }
    nvmlMemory_t m{};
    if (api_.memory && want(kMemoryUsage) && api_.memory(d, &m) == NVML_SUCCESS)
      out->value[kMemoryUsage] = static_cast<double>(m.used) / 1e6;
    unsigned int v = 0;
    if (api_.power && want(kPower) && api_.power(d, &v) == NVML_SUCCESS)
      out->value[kPower] = v / 1000.0;
    unsigned long long mj = 0;
    if (api_.energy && want(kEnergy) && api_.energy(d, &mj) == NVML_SUCCESS)
      energy_.update(index, mj, 1e-3, out);
    if (api_.temperature && want(kTemp) &&
        api_.temperature(d, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
      out->value[kTemp] = v;
    if (api_.clock && want(kGfxClock) && api_.clock(d, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
      out->value[kGfxClock] = v;
    if (api_.clock && want(kMemClock) && api_.clock(d, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
      out->value[kMemClock] = v;
    unsigned long long bits = 0;
    if (api_.reasons && want(kThrottle) && api_.reasons(d, &bits) == NVML_SUCCESS)
      out->value[kThrottle] = static_cast<double>(bits);
    // KB/s: NVML's KB is 1024 bytes.
    if (api_.pcie && want(kPcieTx) && api_.pcie(d, NVML_PCIE_UTIL_TX_BYTES, &v) == NVML_SUCCESS)
      out->value[kPcieTx] = v * 1024.0 / 1e6;
    if (api_.pcie && want(kPcieRx) && api_.pcie(d, NVML_PCIE_UTIL_RX_BYTES, &v) == NVML_SUCCESS)
      out->value[kPcieRx] = v * 1024.0 / 1e6;
    if (api_.fields && (want(kLinkTx) || want(kLinkRx))) read_nvlink(index, d, now_ns, out);
  }

  void close() override {
    if (api_.shutdown != nullptr && !handles_.empty()) api_.shutdown();
    handles_.clear();
  }

 private:
  // NVLink data counters are cumulative KiB over all links (scopeId UINT_MAX).
  void read_nvlink(uint32_t index, nvmlDevice_t d, uint64_t now_ns, GpuReading* out) {
    nvmlFieldValue_t f[2] = {};
    f[0].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
    f[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
    f[0].scopeId = f[1].scopeId = UINT_MAX;
    if (api_.fields(d, 2, f) != NVML_SUCCESS || f[0].nvmlReturn != NVML_SUCCESS ||
        f[1].nvmlReturn != NVML_SUCCESS)
      return;
    links_.update(index, now_ns, value_of(f[0]), value_of(f[1]), 1024.0, out);
  }

  static unsigned long long value_of(const nvmlFieldValue_t& f) {
    switch (f.valueType) {
      case NVML_VALUE_TYPE_DOUBLE:
        return static_cast<unsigned long long>(f.value.dVal);
      case NVML_VALUE_TYPE_UNSIGNED_INT:
        return f.value.uiVal;
      case NVML_VALUE_TYPE_UNSIGNED_LONG:
        return f.value.ulVal;
      case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        return static_cast<unsigned long long>(f.value.sllVal);
      case NVML_VALUE_TYPE_SIGNED_INT:
        return static_cast<unsigned long long>(f.value.siVal);
      case NVML_VALUE_TYPE_UNSIGNED_SHORT:
        return f.value.usVal;
      default:
        return f.value.ullVal;
    }
  }

  const char* error(nvmlReturn_t rc) const {
    const char* s = api_.error_string ? api_.error_string(rc) : nullptr;
    return s != nullptr ? s : "unknown NVML error";
  }

  Api api_;
  std::vector<nvmlDevice_t> handles_;
  LinkRates links_;
  EnergyCounter energy_;
};

}  // namespace

std::unique_ptr<GpuSource> make_nvml_source() { return std::make_unique<NvmlSource>(); }

}  // namespace rocprof::metrics
