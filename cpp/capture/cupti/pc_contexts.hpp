// The per-context protocol of CUPTI's PC sampling API, with CUPTI reached only through a table
// of entry points (PcApi), so that test_pc_contexts.cpp drives it with a stand-in:
//   Enable -> GetNumStallReasons / GetStallReasons -> SetConfigurationAttribute (the sampling
//   data buffer is handed to CUPTI here) -> GetData ... -> Disable.
// What cupti_pcsampling.h asks of the caller, and how it is kept here:
// - The buffer given with CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER is
//   CUPTI's to write until cuptiPCSamplingDisable returns: Disable copies what CUPTI still
//   holds into it, and so does the context's teardown when no Disable came (at process exit).
//   A context's buffers are therefore freed only after a Disable that succeeded; a context
//   whose Disable failed keeps them for the life of the process (cupti_holds()).
// - Every context that was enabled gets its Disable, whatever failed after the Enable (a
//   failed stall-reason query or configuration included), and only one.
// - Each PC's stallReason array holds numStallReasons entries (the count CUPTI gave for this
//   context); pPcData holds collectNumPcs PCs.
// - No GetData after a Disable, or after a GetData that failed.
#pragma once
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <cupti.h>
#include <cupti_pcsampling.h>

namespace rocprof::cupti::pc {

// The CUPTI functions PC sampling calls, listed once: X(name) for each.
#define ROCPROF_PC_FUNCTIONS(X)               \
  X(cuptiPCSamplingEnable)                    \
  X(cuptiPCSamplingDisable)                   \
  X(cuptiPCSamplingSetConfigurationAttribute) \
  X(cuptiPCSamplingGetConfigurationAttribute) \
  X(cuptiPCSamplingGetData)                   \
  X(cuptiPCSamplingGetNumStallReasons)        \
  X(cuptiPCSamplingGetStallReasons)           \
  X(cuptiGetSassToSourceCorrelation)          \
  X(cuptiGetCubinCrc)                         \
  X(cuptiGetDeviceId)

// A CUPTI parameter struct, zeroed, with its size field set.
template <class P>
P params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof p);
  p.size = size;
  return p;
}

struct PcApi {
#define ROCPROF_PC_FN(name) decltype(&::name) name = nullptr;
  ROCPROF_PC_FUNCTIONS(ROCPROF_PC_FN)
#undef ROCPROF_PC_FN
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  // ROCPROF_PC_SAMPLING_TRACE=1: every PC-sampling call, its thread and result on stderr (to
  // diagnose a GPU host's run from its log alone).
  bool trace = false;
};

// Room for `pcs` PCs of `reasons` stall reasons each, in CUPTI's parsed layout. It never moves
// once allocated (CUPTI keeps the configured one's address).
class SampleBuffer {
 public:
  SampleBuffer() = default;
  SampleBuffer(const SampleBuffer&) = delete;
  SampleBuffer& operator=(const SampleBuffer&) = delete;
  void allocate(size_t pcs, size_t reasons);
  // Before each GetData: the counts zeroed, every PC's size and stallReason restored.
  CUpti_PCSamplingData& rearm();
  CUpti_PCSamplingData& data() { return data_; }
  const CUpti_PCSamplingData& data() const { return data_; }
  size_t pcs() const { return pcs_.size(); }
  size_t reasons_per_pc() const { return reasons_per_pc_; }

 private:
  CUpti_PCSamplingData data_{};
  std::vector<CUpti_PCSamplingPCData> pcs_;
  std::vector<CUpti_PCSamplingStallReason> reasons_;
  size_t reasons_per_pc_ = 0;
};

struct ContextState {
  CUcontext ctx = nullptr;
  uint32_t device = 0, agent = 0;
  size_t num_stall_reasons = 0;                           // CUPTI's count for this context
  std::vector<std::pair<uint32_t, std::string>> reasons;  // CUPTI's index -> its name
  SampleBuffer fetch, config;  // GetData's, and the one configured (CUPTI fills it at Disable)
  bool enabled = false;        // Enable succeeded and no Disable has succeeded since
  bool fetching = false;       // configured, and no GetData failed: GetData may be called
  uint64_t window_start = 0;
  ContextState() = default;
  ContextState(const ContextState&) = delete;
  ContextState& operator=(const ContextState&) = delete;
};

// Whether CUPTI may still write into the state's buffers: then its memory must be kept.
inline bool cupti_holds(const ContextState& st) { return st.enabled; }

// The call that failed and its result.
struct Failure {
  const char* call = nullptr;
  CUptiResult result = CUPTI_SUCCESS;
};

// PCs kept per GetData round, and in the configured buffer.
inline constexpr size_t kPcsPerFetch = 4096;

// Enable, the stall reasons (into st.reasons), both buffers, the configuration (continuous
// mode, parsed output, the configured buffer, period 2^exponent unless 0). On a failure after
// the Enable, Disable is called (st.enabled says whether it succeeded); false with *f.
bool enable(const PcApi& a, CUcontext ctx, uint32_t exponent, ContextState& st, Failure* f);

// Hands each fetched buffer to `sink`, until CUPTI holds no more PCs (bounded rounds).
using Sink = std::function<void(const CUpti_PCSamplingData&)>;
bool fetch(const PcApi& a, ContextState& st, const Sink& sink, Failure* f);

// The last fetch, Disable, and what Disable put into the configured buffer. Nothing when the
// context was never enabled or is already disabled. false with *f when Disable failed.
bool disable(const PcApi& a, ContextState& st, const Sink& sink, Failure* f);

}  // namespace rocprof::cupti::pc
