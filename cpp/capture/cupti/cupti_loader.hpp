// libcupti opened at run time: the build never links it, so one wheel runs on machines with
// or without CUDA. Where CUPTI comes from, in order: a copy this process already loaded
// (PyTorch's), the candidates the Python side found (the nvidia-cuda-cupti wheel, the CUDA
// toolkit), then the loader's own search path.
#pragma once
#include <cuda.h>
#include <cupti.h>

#include <string>

#ifdef ROCPROF_CUPTI_COUNTERS  // CUDA 12.6+ headers (CMake checks for cupti_range_profiler.h)
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#endif

namespace rocprof::cupti {

// Hardware-counter entry points (counter_functions.inc): resolved when present, never required.
struct CounterApi {
#ifdef ROCPROF_CUPTI_COUNTERS
#define ROCPROF_CUPTI_FN(name) decltype(&::name) name = nullptr;
#include "counter_functions.inc"
#undef ROCPROF_CUPTI_FN
#endif
};

struct Api {
#define ROCPROF_CUPTI_FN(name) decltype(&::name) name = nullptr;
#include "cupti_functions.inc"
#undef ROCPROF_CUPTI_FN
  std::string path;  // the library actually opened
  // Optional (CUPTI 12.6+): per-function switches of runtime/driver-API activity records. Declared
  // by hand so that older headers build; null when the library lacks it.
  CUptiResult(CUPTIAPI* activity_enable_runtime_api)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult(CUPTIAPI* activity_enable_driver_api)(CUpti_CallbackId, uint8_t) = nullptr;
  CounterApi counters;
  std::string counters_missing;  // "" when every counter entry point resolved, else the first
};

// Opens libcupti once per process (thread-safe); nullptr with *why set when impossible.
// `candidates`: colon-separated paths tried after an already loaded copy.
const Api* load(const std::string& candidates, std::string* why);

// Whether an NVIDIA driver and GPU are present, without initialising CUDA (rocprof info must
// not create a context, and a parent that initialised CUDA breaks forked DataLoader workers).
bool driver_present(int* gpu_count, std::string* why);

const char* result_string(const Api& api, CUptiResult r);

}  // namespace rocprof::cupti
