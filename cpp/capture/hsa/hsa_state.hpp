// State shared by the parts of the AMD backend (only this folder includes it):
//   hsa_backend.cpp   lifecycle, settings, agents, `rocprof info` probe, metadata
//   hsa_tool.cpp      OnLoad's table: layout check, saved originals, HSA API tracing wrappers
//   hsa_dispatch.cpp  queue interception (kernel timing), async copies, allocations, symbols
//   hip_api.cpp       HIP API tracing through HIP's callback registration (ROCm 5.x HIP)
//
// The HSA runtime hands us its live dispatch table in OnLoad (HSA_TOOLS_LIB): its exported
// functions call through it, so replacing an entry intercepts every caller. The originals are
// kept by value (g_rt) and all of our own calls go through them, never through the table, so
// the backend never traces itself.
#pragma once
#ifndef AMD_INTERNAL_BUILD
#define AMD_INTERNAL_BUILD  // hsa_api_trace.h includes its siblings by plain name only then
#endif
#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "capture/kernel_names.hpp"
#include "capture/settings.hpp"

namespace rocprof {
class CaptureContext;
}

namespace rocprof::hsa {

// The runtime as OnLoad found it.
struct Runtime {
  CoreApiTable core{};  // the original entries, by value
  AmdExtTable amd{};
  HsaApiTable* table = nullptr;  // the live table (entries replaced in place)
  uint64_t version = 0;          // OnLoad's runtime_version
  std::string refused;           // why the table layout was refused ("" when accepted)
  // System-domain ticks → CLOCK_BOOTTIME ns (ROCr's system clock is CLOCK_BOOTTIME at 1 GHz;
  // both are measured at start rather than assumed).
  double ns_per_tick = 1.0;
  int64_t offset_ns = 0;
};
extern Runtime g_rt;
extern std::atomic<bool> g_loaded;  // OnLoad accepted a table

// What the running session traces; relaxed loads on every hot path.
struct Active {
  std::atomic<bool> kernels{false}, copies{false}, allocations{false};
  std::atomic<bool> hsa_api{false}, hip_api{false}, region{false}, launch_sites{false};
};
extern Active g_on;
extern std::atomic<CaptureContext*> g_ctx;  // the session's context while one runs

// Kernel display names and the trace's kernel filter, compiled once per session (read by the
// completion thread only).
extern kernel_names::Naming g_names;

uint32_t os_tid() noexcept;
// One sequence for HSA/HIP API calls and GPU operations: ids are unique in the process.
uint64_t next_correlation() noexcept;
// The HIP call this thread is inside (0: none): its GPU work carries the call's correlation id.
uint64_t current_hip_correlation() noexcept;
inline uint64_t to_ns(uint64_t ticks) noexcept {
  return static_cast<uint64_t>(static_cast<int64_t>(ticks * g_rt.ns_per_tick) + g_rt.offset_ns);
}

// Agents: rocprof agent id (CPU kCpuAgentId, GPUs gpu_agent_id(ordinal)) of an HSA agent,
// from a table filled once at OnLoad (no lock on lookup). 0: unknown.
uint32_t agent_id(hsa_agent_t agent) noexcept;
bool agent_is_gpu(hsa_agent_t agent) noexcept;
uint32_t pool_agent_id(hsa_amd_memory_pool_t pool) noexcept;
void discover_agents();                // hsa_backend.cpp: at OnLoad
void write_agents(CaptureContext& c);  // agent rows into a session

// hsa_tool.cpp
bool check_layout(const HsaApiTable* t, std::string* why);
void install_api_tracing();  // wraps every entry of the core and AMD-extension tables
void api_tracing_names(CaptureContext& c);

// hsa_dispatch.cpp
void install_interceptors();  // queue creation, async copies, allocations, executable freeze
void dispatch_session_start(CaptureContext& c);
void dispatch_session_stop(CaptureContext& c);  // waits for dispatches in flight

// Python launch sites of dispatches (callsite.hpp's hooks), started with the session.
uint64_t capture_site(uint32_t* id) noexcept;
uint32_t resolve_site(uint64_t key);

// hip_api.cpp: HIP 5.x callback registration, found in whatever loaded library exports it.
bool hip_available(std::string* where);
bool hip_start(CaptureContext& c, std::string* why);
void hip_stop();

}  // namespace rocprof::hsa
