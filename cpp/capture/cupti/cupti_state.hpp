// State shared by the two halves of the backend: cupti_backend.cpp (lifecycle, API callbacks on
// the application's threads) and cupti_records.cpp (activity buffers → records, on CUPTI's
// thread). Only this folder includes it.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "capture/kernel_names.hpp"
#include "capture/settings.hpp"
#include "cupti_loader.hpp"

namespace rocprof {
class CaptureContext;
}

namespace rocprof::cupti {

// What the launching thread knew at the API ENTER callback, keyed by CUPTI correlation id.
// Direct-mapped and lock-free: the writer publishes `corr` last (release); a reader that finds
// another id in the slot (overwritten by a newer call) simply has no attribution for it.
struct LaunchInfo {
  std::atomic<uint32_t> corr{0};
  uint32_t tid = 0;
  uint32_t region_name_id = 0;
  uint32_t callsite_id = 0;  // its CallsiteInfo id, when known at launch time
  uint64_t site_key = 0;     // the launch's Python frame chain (callsite.hpp), else 0
  uint64_t range_corr = 0;   // correlation id of the innermost ROCTx range (region_name_id's)
  uint8_t paused = 0;
};
inline constexpr uint32_t kLaunchSlots = 1u << 18;  // 256 Ki launches in flight before reuse
extern LaunchInfo g_launch[kLaunchSlots];

// Returns true and fills the fields when the slot still holds `corr`.
inline bool launch_info(uint32_t corr, uint32_t* tid, uint32_t* region, uint32_t* callsite,
                        bool* paused, uint64_t* site_key = nullptr,
                        uint64_t* range_corr = nullptr) {
  const LaunchInfo& s = g_launch[corr & (kLaunchSlots - 1)];
  if (s.corr.load(std::memory_order_acquire) != corr) return false;
  *tid = s.tid;
  *region = s.region_name_id;
  *callsite = s.callsite_id;
  *paused = s.paused != 0;
  if (site_key != nullptr) *site_key = s.site_key;
  if (range_corr != nullptr) *range_corr = s.range_corr;
  return s.corr.load(std::memory_order_acquire) == corr;  // not overwritten while reading
}

struct Settings {
  ActivitySet activities = CuptiSettings{}.activities;  // CuptiSettings::activities
  bool callsite = true, region = true;
  // ENTER callbacks (the callback API): 0 none, 1 launches/copies/sets only (launching thread,
  // ROCTx range, call site of each GPU operation), 2 also synchronisations and allocations
  // (what the SYNCHRONIZATION and MEMORY2 records need for their thread).
  int callbacks = 2;
  // Measurement knobs (benchmarks/gpu_b2_b5.py): the CLOCK_BOOTTIME timestamp callback, and
  // turning buffers into records. Off only to find where tracing time goes.
  bool timestamp = true, process = true;
  bool runtime_queries = false;  // CuptiSettings::runtime_queries
  bool graph_spans = false;      // CuptiSettings::graph_trace == "graph"
  uint32_t flush_ms = 250;
  size_t buffer_bytes = 4u << 20;
};
extern Settings g_settings;
// Kernel display names and the trace's kernel filter, compiled once per session (read by
// CUPTI's buffer thread only).
extern kernel_names::Naming g_names;
extern const Api* g_api;

// The interned call-site id of a launch's frame chain key (0: none), off the hot path.
uint32_t resolve_site(uint64_t key);

// Pause intervals seen by the poller, for records without an ENTER callback (API records).
bool paused_at(uint64_t ts) noexcept;

// cupti_records.cpp
void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                               size_t valid);
void records_reset(CaptureContext* c);  // a new session: forget streams/symbols/agents written
// One CUPTI activity record → the project's records and info rows, into `c`: the whole
// CUPTI-to-record mapping (tests feed it records built from the real header structs).
void map_activity(CaptureContext& c, const CUpti_Activity* rec);
void records_free_pool();
// Kernel/copy records of this session that found no launch information (cupti_records.cpp).
uint64_t records_unattributed();

}  // namespace rocprof::cupti
