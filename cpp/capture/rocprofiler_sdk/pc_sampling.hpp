// PC sampling on AMD GPUs (rocprof run --pc-sampling) through rocprofiler-sdk's PC sampling
// service: host-trap (MI200+) or stochastic (MI300+) samples, one record per sample.
//
// How it is loaded: rocprofiler-sdk loads tool libraries itself. `rocprof run` names ours
// (librocprof_sdk.so, sdk_tool.cpp) in ROCP_TOOL_LIBRARIES; rocprofiler-register loads the SDK
// when the HSA runtime starts (hsa_init), and the SDK calls our rocprofiler_configure and then
// the initialize function it returns. Every service must be configured inside that initialize
// call (the SDK locks its configuration afterwards), so the session's PC-sampling settings must
// be known by then: the launcher starts the session before the program's first GPU call, and a
// native program's session starts from rocprofiler_configure (ROCPROF_AUTOSTART_*).
//
// What is configured (pc_sampling.cpp): a context of its own for code objects (callback
// tracing, kept running: kernel names for every code object loaded), and the sampling context
// (the PC sampling service on each GPU whose configurations offer the asked method and unit, one
// buffer per GPU, and the kernel-dispatch callback), started and stopped with the session.
//
// Dispatches: each sample names the SDK's dispatch id. The HSA backend (capture/hsa/), whose
// queue interceptor runs just before the SDK's on the submitting thread, hands over the rocpd
// dispatch id and correlation id of each kernel packet it passes down (capture/amd_layers.hpp);
// the SDK's kernel-dispatch callback for that packet, on the same thread, files them under the
// SDK's id in a fixed ring (DispatchRing, no lock), where the buffer callback finds them. The
// kernel's name comes from the dispatch's kernel id, or (a dispatch no longer in the ring) from
// the kernel whose code holds the sampled PC.
//
// The mapping from SDK records to kPcSample records is pc_records.cpp, tested without the SDK
// (test_pc_records.cpp). Nothing here has run on AMD hardware: only on the test-only stand-in
// SDK of tests/amd_standin/.
#pragma once
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rocprof {
class CaptureContext;
}

namespace rocprof::sdk {

// ---- the sampling configuration --------------------------------------------------------
// rocprofv3's documented intervals where none is asked: host-trap every 1 us, stochastic every
// 2^20 cycles.
inline constexpr uint64_t kDefaultTimeInterval = 1, kDefaultCycleInterval = 1u << 20;
bool parse_method(const std::string& name, rocprofiler_pc_sampling_method_t* out);
bool parse_unit(const std::string& name, rocprofiler_pc_sampling_unit_t* out);
const char* method_name(rocprofiler_pc_sampling_method_t m);
const char* unit_name(rocprofiler_pc_sampling_unit_t u);
// Picks the interval for (method, unit) among a GPU's configurations: `asked` (0: the
// default above), kept inside [min_interval, max_interval] and rounded to the nearest power of
// two where the configuration demands one. false with *why (one line naming the option and
// what this GPU offers) when no configuration has the method and unit, or `asked` is outside
// the range.
bool choose_interval(const std::vector<rocprofiler_pc_sampling_configuration_t>& configs,
                     rocprofiler_pc_sampling_method_t method, rocprofiler_pc_sampling_unit_t unit,
                     uint64_t asked, uint64_t* interval, std::string* why);

// ---- kernels: what the code-object callbacks reported ------------------------------------
class Kernels {
 public:
  void code_object(uint64_t id, uint64_t load_base, uint64_t load_size);
  // entry: the address of the kernel's first instruction (kernel_object +
  // kernel_code_entry_byte_offset). `name` as the SDK gives it (".kd" is cut).
  void kernel(uint64_t kernel_id, uint64_t code_object_id, std::string_view name, uint64_t entry);
  // The kernel's mangled name, "" when unknown.
  std::string by_id(uint64_t kernel_id) const;
  // The kernel whose code holds the PC at `offset` from its code object's load base: the one
  // with the last entry at or before it. "" when the code object is unknown.
  std::string by_pc(uint64_t code_object_id, uint64_t offset) const;

 private:
  struct CodeObject {
    uint64_t load_base = 0, load_size = 0;
    std::map<uint64_t, std::string> entries;  // offset of each kernel's entry -> name
  };
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, CodeObject> code_objects_;
  std::unordered_map<uint64_t, std::pair<uint64_t, std::string>> kernels_;  // id -> (co, name)
  // Kernels registered before their code object's load callback: placed when it comes.
  std::unordered_multimap<uint64_t, std::pair<uint64_t, std::string>> pending_;
};

// ---- dispatches: the SDK's dispatch id -> ours (no lock, no allocation on the hot path) ----
struct DispatchInfo {
  uint64_t dispatch_id = 0;     // rocpd dispatch_id of the HSA backend's row (0: not handed)
  uint64_t correlation_id = 0;  // its correlation id
  uint64_t kernel_id = 0;       // the SDK's kernel id
  uint64_t agent = 0;           // the SDK's agent handle
};
class DispatchRing {
 public:
  static constexpr size_t kSize = 1u << 16;  // dispatches remembered
  DispatchRing() : slots_(new Slot[kSize]) {}
  // On the submitting thread, from the SDK's kernel-dispatch callback.
  void put(uint64_t sdk_dispatch, const DispatchInfo& d) noexcept;
  // false: that dispatch is not (or no longer) in the ring.
  bool get(uint64_t sdk_dispatch, DispatchInfo* out) const noexcept;

 private:
  struct Slot {
    std::atomic<uint64_t> key{0};  // the SDK's dispatch id; 0 while written
    std::atomic<uint64_t> dispatch{0}, correlation{0}, kernel{0}, agent{0};
  };
  std::unique_ptr<Slot[]> slots_;
};

// ---- one buffer of SDK records -> kPcSample records (pc_records.cpp) ---------------------
// Interned names of the stochastic sampler's enums ("valu", "waitcnt"; "issued" when the wave
// issued the sampled instruction), made once per session.
struct Vocabulary {
  using InstName = const char* (*)(rocprofiler_pc_sampling_instruction_type_t);
  using ReasonName = const char* (*)(rocprofiler_pc_sampling_instruction_not_issued_reason_t);
  std::vector<uint32_t> inst_types, reasons;  // by enum value
  uint32_t issued = 0;
  uint32_t inst_type(uint32_t v) const { return v < inst_types.size() ? inst_types[v] : 0; }
  uint32_t reason(uint32_t v) const { return v < reasons.size() ? reasons[v] : 0; }
};
// The SDK's enum names ("ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_VALU") without their prefix,
// lower case; "<prefix-less number>" where the SDK gives no name.
Vocabulary make_vocabulary(CaptureContext& c, Vocabulary::InstName inst,
                           Vocabulary::ReasonName reason);
std::string short_name(const char* sdk_name, std::string_view prefix, uint32_t value);

struct Totals {  // per session, for the metadata
  uint64_t samples = 0, invalid = 0, other = 0, deliveries = 0;
  uint64_t without_dispatch = 0, without_kernel = 0;
};

// Where one buffer's samples come from: the GPU (one buffer per GPU) and what names them.
struct Source {
  uint32_t agent_id = 0;  // rocpd_info_agent id
  const Kernels* kernels = nullptr;
  const DispatchRing* dispatches = nullptr;
  const Vocabulary* names = nullptr;
  uint32_t category_id = 0;  // "PC_SAMPLING"
};
// Emits one kPcSample record per valid sample of `headers` into `c`; counts into `t`.
void emit_records(CaptureContext& c, const Source& src, rocprofiler_record_header_t** headers,
                  size_t count, Totals* t);

}  // namespace rocprof::sdk

namespace rocprof::sdk {
// ---- the tool (pc_sampling.cpp) ---------------------------------------------------------
// rocprofiler_configure of librocprof_sdk.so (sdk_tool.cpp) lands here; `caller` is an
// address inside the rocprofiler-sdk library that called it (its entry points are found
// there). nullptr: this process has a client of ours already, or was forked from one.
rocprofiler_tool_configure_result_t* configure(uint32_t version, const char* runtime_version,
                                               uint32_t priority, rocprofiler_client_id_t* client,
                                               const void* caller);
}  // namespace rocprof::sdk
