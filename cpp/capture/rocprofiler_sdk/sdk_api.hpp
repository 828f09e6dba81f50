// rocprofiler-sdk's entry points, as this backend calls them: resolved at run time from the
// library that loaded our tool (never linked, so librocprof_core loads on machines without
// ROCm), listed once.
#pragma once
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <string>

namespace rocprof::sdk {

// X(name): entry points the backend needs; a library without one of them is refused.
#define ROCPROF_SDK_FUNCTIONS(X)                        \
  X(rocprofiler_get_status_string)                      \
  X(rocprofiler_create_context)                         \
  X(rocprofiler_start_context)                          \
  X(rocprofiler_stop_context)                           \
  X(rocprofiler_create_buffer)                          \
  X(rocprofiler_flush_buffer)                           \
  X(rocprofiler_query_available_agents)                 \
  X(rocprofiler_query_pc_sampling_agent_configurations) \
  X(rocprofiler_configure_pc_sampling_service)          \
  X(rocprofiler_configure_callback_tracing_service)     \
  X(rocprofiler_is_finalized)
// X(name): entry points used where present (names of the stochastic sampler's enums).
#define ROCPROF_SDK_OPTIONAL_FUNCTIONS(X)              \
  X(rocprofiler_get_pc_sampling_instruction_type_name) \
  X(rocprofiler_get_pc_sampling_instruction_not_issued_reason_name)

struct SdkApi {
#define ROCPROF_SDK_FN(name) decltype(&::name) name = nullptr;
  ROCPROF_SDK_FUNCTIONS(ROCPROF_SDK_FN)
  ROCPROF_SDK_OPTIONAL_FUNCTIONS(ROCPROF_SDK_FN)
#undef ROCPROF_SDK_FN
  std::string library;  // the file they were found in
};

// Resolves the entry points in the library that holds `caller` (an address inside
// rocprofiler-sdk: the code that called our rocprofiler_configure), else in any library
// loaded with global symbols. false with *why naming the first one missing.
bool resolve(const void* caller, SdkApi* api, std::string* why);

// "ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE" (or the number) for messages.
std::string status_text(const SdkApi& api, rocprofiler_status_t status);

}  // namespace rocprof::sdk
