// The counter catalogue (counters_api.hpp) and the `rocprof info` line of counter collection.
#include <dlfcn.h>

#include "capture/context.hpp"
#include "counters_api.hpp"
#include "counters_host.hpp"

namespace rocprof::cupti {
namespace {

const Api* cupti_for_counters(std::string* why) {
  const Api* a = load("", why);
  if (a == nullptr) return nullptr;
  if (!a->counters_missing.empty()) {
    *why = a->path + " lacks " + a->counters_missing +
           " (per-kernel counters need CUPTI's range profiler, CUDA 12.6 or newer)";
    return nullptr;
  }
  return a;
}

bool fill(const MetricHost& host, bool submetrics, CounterDevice* out, std::string* why) {
  out->chip = host.chip();
  for (int type = CUPTI_METRIC_TYPE_COUNTER; type < CUPTI_METRIC_TYPE__COUNT; ++type) {
    std::vector<std::string> names;
    if (!host.base_metrics(type, &names, why)) return false;
    for (const std::string& n : names) {
      CounterMetric m;
      m.name = n;
      m.type = metric_type_name(type);
      MetricProps p;
      if (host.properties(n, &p)) {
        m.description = p.description;
        m.hw_unit = p.hw_unit;
        m.dim_unit = p.dim_unit;
      }
      if (submetrics) host.sub_metrics(type, n, &m.submetrics);
      out->metrics.push_back(std::move(m));
    }
  }
  return true;
}

// The few driver entry points `rocprof avail` needs, from libcuda opened here (never linked).
struct Driver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDeviceGetCount) count = nullptr;
  decltype(&::cuDeviceGet) get = nullptr;
  decltype(&::cuDeviceGetName) name = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) release = nullptr;
};

bool open_driver(Driver* d, std::string* why) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    *why = std::string("libcuda.so.1 cannot be opened: ") + (dlerror() ?: "unknown");
    return false;
  }
  d->init = reinterpret_cast<decltype(d->init)>(dlsym(h, "cuInit"));
  d->count = reinterpret_cast<decltype(d->count)>(dlsym(h, "cuDeviceGetCount"));
  d->get = reinterpret_cast<decltype(d->get)>(dlsym(h, "cuDeviceGet"));
  d->name = reinterpret_cast<decltype(d->name)>(dlsym(h, "cuDeviceGetName"));
  d->retain = reinterpret_cast<decltype(d->retain)>(dlsym(h, "cuDevicePrimaryCtxRetain_v2"));
  if (d->retain == nullptr)
    d->retain = reinterpret_cast<decltype(d->retain)>(dlsym(h, "cuDevicePrimaryCtxRetain"));
  d->release = reinterpret_cast<decltype(d->release)>(dlsym(h, "cuDevicePrimaryCtxRelease_v2"));
  if (d->release == nullptr)
    d->release = reinterpret_cast<decltype(d->release)>(dlsym(h, "cuDevicePrimaryCtxRelease"));
  if (!d->init || !d->count || !d->get || !d->name || !d->retain || !d->release) {
    *why = "libcuda.so.1 lacks a device or context entry point";
    return false;
  }
  return true;
}

}  // namespace

bool list_chip(const std::string& chip, bool submetrics, CounterDevice* out, std::string* why) {
  const Api* a = cupti_for_counters(why);
  if (a == nullptr) return false;
  MetricHost host(*a);
  if (!host.init(chip, nullptr, why)) return false;
  out->index = -1;
  out->name = chip;
  return fill(host, submetrics, out, why);
}

bool counter_chips(std::vector<std::string>* out, std::string* why) {
  const Api* a = cupti_for_counters(why);
  return a != nullptr && supported_chips(*a, out, why);
}

bool check_metrics(const std::string& chip, const std::vector<std::string>& names,
                   std::vector<std::string>* problems, std::string* why) {
  const Api* a = cupti_for_counters(why);
  if (a == nullptr) return false;
  problems->clear();
  for (const std::string& n : names) problems->push_back(check_metric(*a, chip, n));
  return true;
}

bool list_devices(bool submetrics, std::vector<CounterDevice>* out, std::string* why) {
  int gpus = 0;
  if (!driver_present(&gpus, why)) return false;
  const Api* a = cupti_for_counters(why);
  if (a == nullptr) return false;
  Driver d;
  if (!open_driver(&d, why)) return false;
  CUresult cr = d.init(0);
  int count = 0;
  if (cr != CUDA_SUCCESS || (cr = d.count(&count)) != CUDA_SUCCESS) {
    *why = "cuInit/cuDeviceGetCount failed (CUresult " + std::to_string(cr) + ")";
    return false;
  }
  const CounterApi& f = a->counters;
  auto init =
      params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  CUptiResult r = f.cuptiProfilerInitialize(&init);
  if (r != CUPTI_SUCCESS) return *why = call_error(*a, "cuptiProfilerInitialize", r), false;
  for (int i = 0; i < count; ++i) {
    CounterDevice dev;
    dev.index = i;
    CUdevice cu = 0;
    char name[256] = {};
    if (d.get(&cu, i) != CUDA_SUCCESS) continue;
    d.name(name, sizeof name, cu);
    dev.name = name;
    auto chip =
        params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<size_t>(i);
    if ((r = f.cuptiDeviceGetChipName(&chip)) != CUPTI_SUCCESS)
      return *why = call_error(*a, "cuptiDeviceGetChipName", r), false;
    // The availability image leaves out counters this device cannot give now (MIG, vGPU).
    std::vector<uint8_t> availability;
    CUcontext ctx = nullptr;
    if (d.retain(&ctx, cu) == CUDA_SUCCESS) {
      auto av = params<CUpti_Profiler_GetCounterAvailability_Params>(
          CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
      av.ctx = ctx;
      if (f.cuptiProfilerGetCounterAvailability(&av) == CUPTI_SUCCESS) {
        availability.resize(av.counterAvailabilityImageSize);
        av.pCounterAvailabilityImage = availability.data();
        if (f.cuptiProfilerGetCounterAvailability(&av) != CUPTI_SUCCESS) availability.clear();
      }
      d.release(cu);
    }
    MetricHost host(*a);
    if (!host.init(chip.pChipName ? chip.pChipName : "", &availability, why) ||
        !fill(host, submetrics, &dev, why))
      return false;
    out->push_back(std::move(dev));
  }
  if (out->empty()) return *why = "CUDA sees no device", false;
  return true;
}

namespace {

// `rocprof info`: whether per-kernel counters can be collected here. The CUPTI backend does
// the collecting (one subscriber per process); this entry only answers the probe.
void probe_counters(bool* live, std::string* reason) {
  int gpus = 0;
  std::string why;
  *live = false;
  if (!driver_present(&gpus, &why)) {
    *reason = why;
    return;
  }
  const Api* a = cupti_for_counters(&why);
  if (a == nullptr) {
    *reason = why;
    return;
  }
  *live = true;
  *reason = "CUPTI range profiler (kernel replay) on " + std::to_string(gpus) + " NVIDIA GPU(s); " +
            a->path;
}

const capture::Registered<ProbeOnly> g_registered{"cupti-counters", probe_counters};

}  // namespace

}  // namespace rocprof::cupti
