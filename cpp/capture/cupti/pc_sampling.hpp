// PC sampling on NVIDIA GPUs (rocprof run --pc-sampling): where inside a kernel the time goes,
// per instruction, stall reason and source line, through CUPTI's PC sampling API.
//
// How: continuous collection mode (kernels run concurrently, unlike the serialised mode), one
// configuration per CUDA context, enabled when the context is created (the resource callback)
// or, for a context made before the session started, at its first launch. A collector thread
// of our own fetches the parsed samples (cuptiPCSamplingGetData) every poll_ms and turns each
// (PC, stall reason, count) into a kPcSample record; at stop, at context destruction and in an
// exit hook that runs before CUPTI's own teardown (pc_sampling.cpp: exit_hook) the rest is
// fetched and sampling disabled (which also hands back what CUPTI still held). Source
// lines come from the cubins seen at module load (CUPTI's SASS-to-source correlation over the
// binary's line info: nvcc -lineinfo, Triton's own). The mapping of a fetched buffer to
// records is pc_records.cpp, tested without a GPU (test_pc_sampling.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <cupti_pcsampling.h>

#include "cupti_loader.hpp"

namespace rocprof {
class CaptureContext;
struct PcSamplingSettings;
}  // namespace rocprof

namespace rocprof::cupti::pc {
struct PcApi;  // pc_contexts.hpp

// ---- the hardware's sampling period -----------------------------------------------------
// CUPTI samples every 2^N SM cycles, N in [5, 31]. rocprofv3's unit/interval pairs map onto N:
// cycles -> the power of two nearest `interval`; time (microseconds) -> interval * SM clock
// (kHz / 1000 cycles per us), then as cycles; instructions -> no such sampler on NVIDIA.
// interval 0 leaves CUPTI's own default (chosen by the SM count). Returns 0 for "default", the
// exponent otherwise; false with *why when the pair cannot be honoured.
inline constexpr uint32_t kMinPeriodExp = 5, kMaxPeriodExp = 31;
bool period_exponent(const std::string& unit, uint32_t interval, uint32_t sm_clock_khz,
                     uint32_t* exponent, std::string* why);

// ---- one fetched buffer -> records (pc_records.cpp) -------------------------------------
struct SourceLine {
  uint32_t file_id = 0;  // interned path (dir/file), 0: none
  uint32_t line = 0;
};
// (cubin CRC, function name, PC offset) -> its source line; may return {} (no line info).
using SourceLookup = std::function<SourceLine(uint64_t crc, const char* function, uint64_t pc)>;

struct StallNames {
  // CUPTI's stall reason index -> interned short name ("long_scoreboard") and whether the
  // reason counts samples where the warp issued nothing (CUPTI's "_not_issued" twins).
  std::unordered_map<uint32_t, std::pair<uint32_t, bool>> by_index;
};
// CUPTI's reason name ("smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued") ->
// the short name and its not-issued flag.
std::string short_stall_name(const std::string& cupti_name, bool* not_issued);

struct Totals {  // per session, for the metadata
  uint64_t records = 0, samples = 0, total_samples = 0, dropped = 0, non_user = 0;
  uint64_t buffer_full = 0, fetches = 0, no_line = 0;
};

// Emits one kPcSample record per (PC, stall reason with samples) of `d` into `c`, stamped
// [start, end] (the collection window); adds to `t`. The mapping tests call it directly.
void emit_buffer(CaptureContext& c, const CUpti_PCSamplingData& d, const StallNames& stalls,
                 const SourceLookup& source, uint32_t agent_id, uint32_t category_id,
                 uint64_t start, uint64_t end, Totals* t);

// ---- lifecycle (pc_sampling.cpp), called by the backend ---------------------------------
// Prepares collection (no CUDA call yet). false with *why when PC sampling cannot run here.
bool start(CaptureContext& c, const PcSamplingSettings& s, const Api& a, std::string* why);
bool active() noexcept;
// Resource callbacks (CUPTI_CB_DOMAIN_RESOURCE) the backend forwards.
void on_context_created(CUcontext ctx) noexcept;
void on_context_destroy(CUcontext ctx) noexcept;
void on_module_loaded(CUcontext ctx, const void* cubin, size_t size) noexcept;
// A driver API ENTER on the launching thread: enables a context made before the session.
void on_api_enter(CUcontext ctx) noexcept;
// Fetches the rest, disables sampling everywhere, writes the run's metadata.
void stop(CaptureContext& c) noexcept;
void fork_child() noexcept;

// start() with the entry points given: the tests' CUPTI stand-in comes in here.
bool start_with(CaptureContext& c, const PcSamplingSettings& s, const PcApi& api, std::string* why);
// Whether `buffer` (a configured CUpti_PCSamplingData) is still memory of ours: CUPTI may
// write into a configured buffer until its context's Disable succeeded.
bool holds_configured_buffer(const void* buffer);

}  // namespace rocprof::cupti::pc
