// The per-context PC-sampling protocol (pc_contexts.hpp says what CUPTI asks and how it is
// kept). No globals: pc_sampling.cpp owns the contexts and their lock.
#include "pc_contexts.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace rocprof::cupti::pc {
namespace {

CUptiResult traced(const PcApi& a, const char* call, CUcontext ctx, CUptiResult r,
                   const CUpti_PCSamplingData* d = nullptr) {
  if (a.trace) {
    if (d != nullptr)
      std::fprintf(stderr,
                   "rocprof: pc-sampling trace: tid %ld %s(ctx %p) -> %d: %zu PCs, %zu remaining, "
                   "%llu samples\n",
                   static_cast<long>(syscall(SYS_gettid)), call, static_cast<void*>(ctx),
                   static_cast<int>(r), d->totalNumPcs, d->remainingNumPcs,
                   static_cast<unsigned long long>(d->totalSamples));
    else
      std::fprintf(stderr, "rocprof: pc-sampling trace: tid %ld %s(ctx %p) -> %d\n",
                   static_cast<long>(syscall(SYS_gettid)), call, static_cast<void*>(ctx),
                   static_cast<int>(r));
  }
  return r;
}

bool failed(Failure* f, const char* call, CUptiResult r) {
  if (f != nullptr) *f = Failure{call, r};
  return false;
}

// After a failure that followed the Enable: the context must not stay enabled with nobody to
// disable it.
bool undo(const PcApi& a, ContextState& st, Failure* f, const char* call, CUptiResult r) {
  st.fetching = false;
  auto d = params<CUpti_PCSamplingDisableParams>(CUpti_PCSamplingDisableParamsSize);
  d.ctx = st.ctx;
  if (traced(a, "cuptiPCSamplingDisable", st.ctx, a.cuptiPCSamplingDisable(&d)) == CUPTI_SUCCESS)
    st.enabled = false;
  return failed(f, call, r);
}

}  // namespace

void SampleBuffer::allocate(size_t pcs, size_t reasons) {
  reasons_per_pc_ = reasons == 0 ? 1 : reasons;
  pcs_.assign(pcs, CUpti_PCSamplingPCData{});
  reasons_.assign(pcs * reasons_per_pc_, CUpti_PCSamplingStallReason{});
  rearm();
}

CUpti_PCSamplingData& SampleBuffer::rearm() {
  for (size_t i = 0; i < pcs_.size(); ++i) {
    std::memset(&pcs_[i], 0, sizeof pcs_[i]);
    pcs_[i].size = sizeof(CUpti_PCSamplingPCData);
    pcs_[i].stallReason = reasons_.data() + i * reasons_per_pc_;
  }
  std::memset(&data_, 0, sizeof data_);
  data_.size = sizeof(CUpti_PCSamplingData);
  data_.collectNumPcs = pcs_.size();
  data_.pPcData = pcs_.data();
  return data_;
}

bool enable(const PcApi& a, CUcontext ctx, uint32_t exponent, ContextState& st, Failure* f) {
  st.ctx = ctx;
  auto en = params<CUpti_PCSamplingEnableParams>(CUpti_PCSamplingEnableParamsSize);
  en.ctx = ctx;
  CUptiResult r = traced(a, "cuptiPCSamplingEnable", ctx, a.cuptiPCSamplingEnable(&en));
  if (r != CUPTI_SUCCESS) return failed(f, "Enable", r);
  st.enabled = true;
  // The stall reasons this GPU reports (asked after the Enable, as CUPTI requires).
  size_t n = 0;
  auto nr = params<CUpti_PCSamplingGetNumStallReasonsParams>(
      CUpti_PCSamplingGetNumStallReasonsParamsSize);
  nr.ctx = ctx;
  nr.numStallReasons = &n;
  r = traced(a, "cuptiPCSamplingGetNumStallReasons", ctx, a.cuptiPCSamplingGetNumStallReasons(&nr));
  if (r != CUPTI_SUCCESS) return undo(a, st, f, "GetNumStallReasons", r);
  std::vector<uint32_t> index(n);
  std::vector<std::vector<char>> text(n, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE));
  std::vector<char*> names(n);
  for (size_t i = 0; i < n; ++i) names[i] = text[i].data();
  auto gr =
      params<CUpti_PCSamplingGetStallReasonsParams>(CUpti_PCSamplingGetStallReasonsParamsSize);
  gr.ctx = ctx;
  gr.numStallReasons = n;
  gr.stallReasonIndex = index.data();
  gr.stallReasons = names.data();
  r = traced(a, "cuptiPCSamplingGetStallReasons", ctx, a.cuptiPCSamplingGetStallReasons(&gr));
  if (r != CUPTI_SUCCESS) return undo(a, st, f, "GetStallReasons", r);
  st.num_stall_reasons = n;
  st.reasons.clear();
  for (size_t i = 0; i < n; ++i) {
    text[i].back() = '\0';
    st.reasons.emplace_back(index[i], names[i]);
  }
  st.fetch.allocate(kPcsPerFetch, n);
  st.config.allocate(kPcsPerFetch, n);
  std::vector<CUpti_PCSamplingConfigurationInfo> info;
  auto add = [&info](CUpti_PCSamplingConfigurationAttributeType t) -> auto& {
    CUpti_PCSamplingConfigurationInfo i;
    std::memset(&i, 0, sizeof i);
    i.attributeType = t;
    info.push_back(i);
    return info.back().attributeData;
  };
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE).collectionModeData.collectionMode =
      CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT)
      .outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER)
      .samplingDataBufferData.samplingDataBuffer = &st.config.rearm();
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL)
      .enableStartStopControlData.enableStartStopControl = 0;
  if (exponent != 0)
    add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD)
        .samplingPeriodData.samplingPeriod = exponent;
  auto p =
      params<CUpti_PCSamplingConfigurationInfoParams>(CUpti_PCSamplingConfigurationInfoParamsSize);
  p.ctx = ctx;
  p.numAttributes = info.size();
  p.pPCSamplingConfigurationInfo = info.data();
  r = traced(a, "cuptiPCSamplingSetConfigurationAttribute", ctx,
             a.cuptiPCSamplingSetConfigurationAttribute(&p));
  // Attributes are applied one by one: the buffer may be CUPTI's even when another failed.
  if (r != CUPTI_SUCCESS) return undo(a, st, f, "SetConfigurationAttribute", r);
  st.fetching = true;
  return true;
}

bool fetch(const PcApi& a, ContextState& st, const Sink& sink, Failure* f) {
  if (!st.enabled || !st.fetching) return true;
  for (int round = 0; round < 64; ++round) {
    auto p = params<CUpti_PCSamplingGetDataParams>(CUpti_PCSamplingGetDataParamsSize);
    p.ctx = st.ctx;
    CUpti_PCSamplingData& d = st.fetch.rearm();
    p.pcSamplingData = &d;
    const CUptiResult r =
        traced(a, "cuptiPCSamplingGetData", st.ctx, a.cuptiPCSamplingGetData(&p), &d);
    // OUT_OF_MEMORY: the hardware buffer filled up; what came is kept, the loss counted.
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) {
      st.fetching = false;
      return failed(f, "GetData", r);
    }
    sink(d);
    if (d.remainingNumPcs == 0 || d.totalNumPcs == 0) break;
  }
  return true;
}

bool disable(const PcApi& a, ContextState& st, const Sink& sink, Failure* f) {
  if (!st.enabled) return true;
  Failure first;
  const bool fetched = fetch(a, st, sink, &first);
  st.fetching = false;
  auto d = params<CUpti_PCSamplingDisableParams>(CUpti_PCSamplingDisableParamsSize);
  d.ctx = st.ctx;
  const CUptiResult r = traced(a, "cuptiPCSamplingDisable", st.ctx, a.cuptiPCSamplingDisable(&d));
  if (r != CUPTI_SUCCESS) return failed(f, "Disable", r);
  st.enabled = false;
  // What CUPTI still held went into the configured buffer.
  if (st.config.data().totalNumPcs > 0) sink(st.config.data());
  if (!fetched && f != nullptr) *f = first;
  return fetched;
}

}  // namespace rocprof::cupti::pc
