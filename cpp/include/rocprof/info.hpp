// Descriptive rows (agents, streams, kernel symbols, threads, metadata). Rare and not on any
// hot path, so they carry std::string and travel through a mutex-protected queue
// (Collector::add_info) instead of the per-thread rings.
#pragma once
#include <cstdint>
#include <string>
#include <variant>

namespace rocprof {

// Agent ids follow ROCm's node numbering: the CPU first, then the GPUs.
inline constexpr uint32_t kCpuAgentId = 1;
inline constexpr uint32_t gpu_agent_id(uint32_t device_ordinal) { return 2 + device_ordinal; }

struct AgentInfo {
  uint32_t id = 0;
  std::string type = "GPU";  // 'CPU' or 'GPU'
  uint32_t absolute_index = 0, logical_index = 0, type_index = 0;
  std::string uuid, name, model_name, vendor_name, product_name, user_name;
  std::string extdata = "{}";
};

struct StreamInfo {  // also used for queues when is_queue is set
  uint32_t id = 0;
  bool is_queue = false;
  std::string name;
  std::string extdata = "{}";
};

struct KernelSymbolInfo {
  uint32_t id = 0;
  std::string kernel_name;   // mangled
  std::string display_name;  // demangled
  uint64_t kernel_object = 0;
  uint32_t kernarg_segment_size = 0, kernarg_segment_alignment = 0;
  uint32_t group_segment_size = 0, private_segment_size = 0;
  uint32_t sgpr_count = 0, arch_vgpr_count = 0, accum_vgpr_count = 0;
  std::string extdata = "{}";
};

struct ThreadInfo {
  uint32_t tid = 0;
  uint64_t start = 0, end = 0;  // end 0: still running
  std::string name;
};

struct MetadataInfo {  // upserted: a later row with the same tag replaces the value
  std::string tag, value;
};

// One node of the call-stack tree (capture/sampling): the stack ending in this frame is the
// node plus its parent's stack. Stored once as a rocpd_event row (id = stack_id,
// parent_stack_id, call_stack = this frame as JSON, line_info = {file, line}); samples point
// at their innermost node through rocpd_event.stack_id.
struct StackInfo {
  uint64_t id = 0, parent_id = 0;  // parent 0: outermost frame
  uint32_t category_id = 0;        // interned, e.g. "PYTHON_SAMPLE_STACK"
  std::string call_stack, line_info;
};

// A Python call site of GPU work and API calls (the callsite_id of regions, kernels and
// copies): `id` numbers it from 1 in the session; `site` is the site's frame, the innermost
// user frame (with the library frames inside it), a JSON object; `callers` the frames outward
// of it, a JSON list ("" when none); `category_id` the interned kLaunchSiteCategory. Stored
// once as rocpd_event rows of that category (README: launch sites), never as rocpd_string
// rows: sites are long, and rocpd_string's unique index would hold each one a second time.
// Sent by the producer once per call site and session, before any record that uses the id.
inline constexpr const char* kLaunchSiteCategory = "PYTHON_LAUNCH_SITE";
struct CallsiteInfo {
  uint32_t id = 0;
  uint32_t category_id = 0;
  std::string site, callers;
};

// A counter's description: one rocpd_info_pmc row. Its rocpd id is chosen by the writer;
// producers name the counter by `key`, an interned string unique to (agent, counter), and
// counter samples (kFlagCounter) carry that key. Sent before the first sample that uses it.
struct PmcInfo {
  uint32_t key = 0;
  uint32_t agent_id = 0;
  std::string target_arch = "GPU";  // 'CPU' or 'GPU'
  uint32_t event_code = 0, instance_id = 0;
  std::string name, symbol, description, long_description, component, units;
  std::string value_type = "ABS";  // 'ABS', 'ACCUM' or 'RELATIVE'
  std::string block, expression;
  bool is_constant = false, is_derived = false;
  std::string extdata = "{}";
};

using InfoRow = std::variant<AgentInfo, StreamInfo, KernelSymbolInfo, ThreadInfo, MetadataInfo,
                             StackInfo, CallsiteInfo, PmcInfo>;

}  // namespace rocprof
