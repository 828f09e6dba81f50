// Per-kernel hardware counters through CUPTI's Range Profiler (rocprof run --pmc / --sol),
// driven from the CUPTI backend's own subscriber (one subscriber per process): the backend
// hands this module the driver API launch callbacks and the context-destroy callback.
//
// How: one range profiler per CUDA context, configured at the context's first launch (auto
// range, kernel replay, one range per pass). At the ENTER callback of a driver launch it is
// started, at the EXIT stopped, decoded and evaluated: the counter data then holds exactly that
// launch's kernel, so its values carry the launch's correlation id and need no guessing about
// range order. Kernel replay because it is the one mode that collects a multi-pass metric set
// for every kernel in one run of the program (application replay would rerun the program per
// pass; user replay needs the program's cooperation); CUPTI saves and restores the memory the
// kernel touches between passes. A global lock held from ENTER to EXIT serialises launches of
// all threads: counters of concurrent kernels would mix (rocprofv3 --pmc and Nsight Compute
// serialise too). Kernels launched through CUDA graphs have no counters.
#pragma once
#include <cstdint>
#include <string>

#include "cupti_loader.hpp"

namespace rocprof {
class CaptureContext;
struct CounterSettings;
}  // namespace rocprof

namespace rocprof::cupti::counters {

// Prepares collection of `s.metrics` (no CUDA call yet: contexts are configured at their first
// launch). false with *why when counters cannot run in this process at all.
bool start(CaptureContext& c, const CounterSettings& s, const Api& a, std::string* why);
bool active() noexcept;
// The driver API callbacks to enable: launches and the resource domain's context destruction.
bool is_launch(CUpti_CallbackId id) noexcept;
// ENTER and EXIT of a driver launch on the launching thread. `kernel_correlation`: the id the
// kernel's activity record will carry (the enclosing runtime call's when there is one).
void on_launch(const CUpti_CallbackData* cb, uint32_t kernel_correlation) noexcept;
void on_context_destroy(CUcontext ctx) noexcept;
// Disables every range profiler, writes the run's counter metadata.
void stop(CaptureContext& c) noexcept;
void fork_child() noexcept;

// Kernel replay may hand one launch's activity record over more than once: true the first
// time a correlation id is seen while counters are active (false for the replays).
bool first_kernel_record(uint32_t correlation_id) noexcept;
uint64_t replayed_kernel_records() noexcept;  // records first_kernel_record turned away
// Whether kernel records now come from a session that collects counters: from begin_dedupe()
// until end_dedupe(), so also the last records, delivered after stop().
bool replaying() noexcept;
// Under kernel replay CUPTI hands the profiled kernels over untimed. Each profiled launch's
// kernel is timed from its counters instead: it starts when its launch call began (the
// launches before it have finished: they ran one at a time) and lasts gpu__time_duration.sum,
// the duration the hardware measured in its pass. remember_kernel_time is called for each
// profiled launch; kernel_time gives a correlation id's times to its untimed activity record.
void remember_kernel_time(uint32_t correlation_id, uint64_t start, uint64_t end) noexcept;
bool kernel_time(uint32_t correlation_id, uint64_t* start, uint64_t* end) noexcept;
void begin_dedupe() noexcept;  // counters start (and the mapping tests)
void end_dedupe() noexcept;    // the session's last records are in

}  // namespace rocprof::cupti::counters
