// Built against CUDA headers older than 12.6 (no cupti_range_profiler.h): tracing works,
// per-kernel counters say why they cannot (counters.hpp, counters_api.hpp).
#include "capture/context.hpp"
#include "counters.hpp"
#include "counters_api.hpp"

namespace rocprof::cupti {
namespace {
const char* kWhy =
    "this build's CUDA headers predate 12.6 (no CUPTI range profiler): rebuild against CUDA "
    "12.6 or newer for per-kernel counters";
}

namespace counters {
bool start(CaptureContext&, const CounterSettings&, const Api&, std::string* why) {
  *why = kWhy;
  return false;
}
bool active() noexcept { return false; }
bool is_launch(CUpti_CallbackId) noexcept { return false; }
void on_launch(const CUpti_CallbackData*, uint32_t) noexcept {}
void on_context_destroy(CUcontext) noexcept {}
void stop(CaptureContext&) noexcept {}
void fork_child() noexcept {}
bool first_kernel_record(uint32_t) noexcept { return true; }
uint64_t replayed_kernel_records() noexcept { return 0; }
void begin_dedupe() noexcept {}
void end_dedupe() noexcept {}
bool replaying() noexcept { return false; }
void remember_kernel_time(uint32_t, uint64_t, uint64_t) noexcept {}
bool kernel_time(uint32_t, uint64_t*, uint64_t*) noexcept { return false; }
}  // namespace counters

bool list_devices(bool, std::vector<CounterDevice>*, std::string* why) {
  return *why = kWhy, false;
}
bool list_chip(const std::string&, bool, CounterDevice*, std::string* why) {
  return *why = kWhy, false;
}
bool counter_chips(std::vector<std::string>*, std::string* why) { return *why = kWhy, false; }
bool check_metrics(const std::string&, const std::vector<std::string>&, std::vector<std::string>*,
                   std::string* why) {
  return *why = kWhy, false;
}

namespace {
void probe_counters(bool* live, std::string* reason) {
  *live = false;
  *reason = kWhy;
}
const capture::Registered<ProbeOnly> g_registered{"cupti-counters", probe_counters};
}  // namespace

}  // namespace rocprof::cupti
