// GPU hardware metrics over time on AMD GPUs (rocprof run --gpu-metrics) through rocprofiler-sdk's
// device counting service: the GPU's performance counters run from the context's start and a
// thread of ours reads them at --gpu-metrics-frequency, while kernels run as usual (no replay,
// no serialisation). Compiled where the rocprofiler-sdk headers are; never run on AMD hardware:
// tested only through a test-only stand-in of the SDK calls (test_device_counting.cpp).
//
// How (facts from rocprofiler-sdk's headers and sources, not measured on a GPU):
//  - In the SDK's tool initialize (the only time services may be configured, pc_sampling.cpp's
//    tool_initialize calls initialize() below): one context per GPU agent, each with the device
//    counting service (no buffer: each read returns its records to the caller).
//  - When a context starts (rocprofiler_start_context, called where sampling starts; before HSA
//    is up the SDK starts it later, on the application's thread), the SDK asks for the agent's
//    counter config: the metrics of the set are chosen from the counters the agent
//    supports, each kept only if its counters still fit one hardware pass with the metrics before
//    it (rocprofiler_create_counter_config refuses a set over the blocks' counter limits).
//  - Our thread then calls rocprofiler_sample_device_counting_service (synchronous) per GPU each
//    period. The values are cumulative since the start (aqlprofile's read packet samples the
//    counters and keeps them counting), so each metric is computed from the difference between
//    two reads: a percentage of the elapsed GPU cycles (GRBM_COUNT), a hit rate, or a rate per
//    host second between the reads. A read's records come per dimension instance (XCC, SE, TCC
//    channel, ...); they are summed per counter, and GRBM_COUNT is averaged over its instances
//    (the elapsed cycles of one engine).
//  - Stored like the NVIDIA sampler's (capture/cupti/pm_sampling.hpp): each metric of each GPU a
//    counter track "<key> [<gpu>]" with the NVIDIA key where the meaning is the same; a value
//    holds from the read that opened its interval until the next; equal values are not stored
//    again, and each track ends with its last value at the time of the last read. A read the SDK
//    refuses because it is finalizing ends the sampling (that last interval is lost).
#pragma once
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rocprof {
class CaptureContext;
struct GpuMetricsSettings;
}  // namespace rocprof

namespace rocprof::sdk::dc {

// X(name): the entry points the device counting sampler calls; a library without one of them is
// refused (the service came with rocprofiler-sdk 0.6, ROCm 6.4).
#define ROCPROF_SDK_DC_FUNCTIONS(X)                \
  X(rocprofiler_get_status_string)                 \
  X(rocprofiler_create_context)                    \
  X(rocprofiler_start_context)                     \
  X(rocprofiler_stop_context)                      \
  X(rocprofiler_query_available_agents)            \
  X(rocprofiler_configure_device_counting_service) \
  X(rocprofiler_sample_device_counting_service)    \
  X(rocprofiler_iterate_agent_supported_counters)  \
  X(rocprofiler_query_counter_info)                \
  X(rocprofiler_query_record_counter_id)           \
  X(rocprofiler_create_counter_config)             \
  X(rocprofiler_destroy_counter_config)

struct Api {
#define ROCPROF_SDK_DC_FN(name) decltype(&::name) name = nullptr;
  ROCPROF_SDK_DC_FUNCTIONS(ROCPROF_SDK_DC_FN)
#undef ROCPROF_SDK_DC_FN
  std::string library;  // where they were found, for the metadata
};
// Looks the entry points up in `library` (a path already loaded; "" or "(global symbols)": any
// library loaded with global symbols). false with *why naming the first one missing.
bool resolve(const std::string& library, Api* api, std::string* why);

// ---- the metric sets -------------------------------------------------------------------
// How a metric is computed from the counters' differences between two reads (a, b: the
// metric's first and second counter; dt: host seconds between the reads).
enum class Formula {
  kPercentOf,          // 100 a / b (both summed: GRBM_GUI_ACTIVE of GRBM_COUNT)
  kCuQuadCycles,       // 100 * 4 a / (mean b * CUs): a in quad-cycles summed over the CUs
  kSimdCycles,         // 100 a / (mean b * SIMDs): a in cycles summed over the SIMDs
  kWaveSlots,          // 100 * 4 a / (mean b * CUs * wave slots per CU): a in wave quad-cycles
  kHitRate,            // 100 a / (a + b)
  kKibPerSecond,       // 1024 a / dt: a in KiB, as bytes per second
  kOpsOf512PerSecond,  // 512 a / dt: a counts operations divided by 512
  kPerSecond,          // a / dt (a counter named in --gpu-metrics-set)
};

struct MetricDef {
  const char* key;  // the track's name, the NVIDIA sampler's where the meaning is the same
  const char* symbol;
  const char* units;
  const char* description;
  std::vector<const char*> counters;  // rocprofiler-sdk counter names (counter_defs.yaml)
  Formula formula;
};

// The metrics --gpu-metrics-set names ("default", "compute", "memory"); empty for another name
// (then the set is rocprofiler-sdk counter names, separated by commas or spaces).
const std::vector<MetricDef>& named_set(const std::string& name);

// What a GPU offers: the counters it supports (by name) and the facts the formulas need.
struct AgentFacts {
  std::string chip;  // "gfx942"
  uint32_t cu_count = 0, simd_count = 0, max_waves_per_cu = 0;
};

struct Chosen {
  std::string key, symbol, units, description;
  Formula formula = Formula::kPerSecond;
  std::vector<std::string> counter_names;  // the metric's counters, in the formula's order
  std::vector<size_t> counters;            // their indices in the GPU's counter list
};

// One GPU's choice: each metric of `set` whose counters `supported` lists, in the set's order,
// kept when `fits` accepts the counters chosen so far with its own (rocprofiler-sdk's hardware
// limits); `counter_names` gets each counter once. `left_out` gets one line per metric left out.
// false with *why when nothing is left.
struct FitCheck {
  virtual ~FitCheck() = default;
  // Whether these counters fit one pass; false with *why (the SDK's status) when they do not.
  virtual bool fits(const std::vector<std::string>& counters, std::string* why) = 0;
};
bool choose(const std::vector<std::string>& supported, const std::string& chip,
            const std::string& set, FitCheck& fit, std::vector<Chosen>* out,
            std::vector<std::string>* counter_names, std::vector<std::string>* left_out,
            std::string* why);

// One counter's difference between two reads: its sum over the instances, and their number.
struct Delta {
  double sum = 0;
  uint32_t instances = 0;
};
// The metric's value over an interval of `dt_s` host seconds; NaN where it has no value (a zero
// denominator: no cycles counted, no L2 lookups).
double evaluate(Formula f, const Delta* deltas, size_t n, double dt_s, const AgentFacts& agent);

// ---- the sampler ------------------------------------------------------------------------
// One per process (device_counting_sampler.cpp's, driven by the SDK's tool initialize/finalize
// in pc_sampling.cpp and by the session's backend); tests make their own with a stand-in Api.
using ClockFn = uint64_t (*)();  // the clock the reads are stamped with (CLOCK_BOOTTIME ns)
class Sampler {
 public:
  explicit Sampler(ClockFn clock = nullptr);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // The session's start and stop (the backend's): sampling runs while both a session that asked
  // for GPU metrics and the SDK's configuration are there. stop writes the metadata.
  void session_start(CaptureContext& c, const GpuMetricsSettings& s);
  void session_stop(CaptureContext& c);
  // Inside the SDK's tool initialize: a context per GPU with the device counting service, when
  // the session asked for GPU metrics (else one line says it came too late).
  void sdk_initialize(const Api& api);
  // The SDK lacks an entry point (`why`): no GPU metrics from it in this process.
  void sdk_unusable(const std::string& why);
  // The SDK's finalize: sampling stops (its reads are refused from then on).
  void sdk_finalize();
  void fork_child();
  std::string status() const;  // "on", "off: ...", for `rocprof info` and the metadata

  struct State;

 private:
  State* st_;
};

// The process's sampler; rocprofiler_configure resolved the SDK in `library` (pc_sampling.cpp).
void initialize(const std::string& library);
void finalize();

}  // namespace rocprof::sdk::dc
