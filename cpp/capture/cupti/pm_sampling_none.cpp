// Built against CUDA headers older than 12.6 (no cupti_pmsampling.h): --gpu-metrics says why.
#include "pm_sampling.hpp"

#include "capture/context.hpp"
#include "counters_api.hpp"

namespace rocprof::cupti::pm {
const char* const kWhy =
    "this build's CUDA headers predate 12.6 (no CUPTI PM sampling): rebuild against CUDA 12.6 "
    "or newer for --gpu-metrics";
namespace {

void probe_pm_sampling(bool* live, std::string* reason) {
  *live = false;
  *reason = kWhy;
}
const capture::Registered<ProbeOnly> g_registered{"cupti-pm-sampling", probe_pm_sampling};
}  // namespace

const std::vector<MetricDef>& named_set(const std::string&) {
  static const std::vector<MetricDef> none;
  return none;
}
std::vector<std::string> set_names() { return {}; }
bool choose(const Api&, const std::string&, const std::vector<uint8_t>*, const std::string&,
            std::vector<Chosen>*, std::vector<std::string>*, std::string* why) {
  *why = kWhy;
  return false;
}
bool start(CaptureContext&, const GpuMetricsSettings&, const Api&, std::string* why) {
  *why = kWhy;
  return false;
}
bool active() noexcept { return false; }
void on_context_created(CUcontext) noexcept {}
void on_api_enter(CUcontext) noexcept {}
void stop(CaptureContext&) noexcept {}
void disable_all() noexcept {}
void fork_child() noexcept {}
int64_t clock_offset(uint64_t, uint64_t, uint64_t, const char** name) {
  *name = "CLOCK_BOOTTIME";
  return 0;
}

}  // namespace rocprof::cupti::pm

namespace rocprof::cupti {
bool pm_sampling_set(const std::string&, const std::string&, std::vector<PmChoice>*,
                     std::vector<std::string>*, std::string* why) {
  *why = pm::kWhy;
  return false;
}
}  // namespace rocprof::cupti
