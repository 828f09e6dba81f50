// CUPTI's parsed PC-sampling buffers -> kPcSample records: the whole mapping, with no CUPTI
// call, so that test_pc_sampling.cpp checks it with buffers built from the real header structs.
#include <cmath>
#include <string>

#include "capture/context.hpp"
#include "pc_sampling.hpp"

namespace rocprof::cupti::pc {

bool period_exponent(const std::string& unit, uint32_t interval, uint32_t sm_clock_khz,
                     uint32_t* exponent, std::string* why) {
  *exponent = 0;
  if (unit == "instructions") {
    *why =
        "--pc-sampling-unit instructions is not available on NVIDIA GPUs (CUPTI samples every "
        "2^N SM cycles): use --pc-sampling-unit cycles or time";
    return false;
  }
  if (interval == 0) return true;  // CUPTI's default
  double cycles = interval;
  if (unit == "time") {
    if (sm_clock_khz == 0) {
      *why =
          "--pc-sampling-unit time needs the GPU's SM clock, which the driver did not give: "
          "use --pc-sampling-unit cycles";
      return false;
    }
    cycles = static_cast<double>(interval) * sm_clock_khz / 1000.0;  // us * cycles/us
  }
  const double e = std::round(std::log2(cycles));
  *exponent = static_cast<uint32_t>(e < kMinPeriodExp   ? kMinPeriodExp
                                    : e > kMaxPeriodExp ? kMaxPeriodExp
                                                        : e);
  return true;
}

std::string short_stall_name(const std::string& cupti_name, bool* not_issued) {
  static const std::string kPrefixes[] = {"smsp__pcsamp_warps_issue_stalled_",
                                          "smsp__pcsamp_warps_issue_", "smsp__pcsamp_"};
  static const std::string kNotIssued = "_not_issued";
  std::string s = cupti_name;
  *not_issued = false;
  if (s.size() > kNotIssued.size() &&
      s.compare(s.size() - kNotIssued.size(), kNotIssued.size(), kNotIssued) == 0) {
    s.resize(s.size() - kNotIssued.size());
    *not_issued = true;
  }
  for (const std::string& p : kPrefixes)
    if (s.compare(0, p.size(), p) == 0) {
      s.erase(0, p.size());
      break;
    }
  return s;
}

void emit_buffer(CaptureContext& c, const CUpti_PCSamplingData& d, const StallNames& stalls,
                 const SourceLookup& source, uint32_t agent_id, uint32_t category_id,
                 uint64_t start, uint64_t end, Totals* t) {
  ++t->fetches;
  t->total_samples += d.totalSamples;
  t->dropped += d.droppedSamples;
  t->non_user += d.nonUsrKernelsTotalSamples;
  if (d.hardwareBufferFull) ++t->buffer_full;
  for (size_t i = 0; i < d.totalNumPcs; ++i) {
    const CUpti_PCSamplingPCData& pc = d.pPcData[i];
    const uint32_t name_id = c.intern(pc.functionName != nullptr ? pc.functionName : "");
    const SourceLine where =
        source ? source(pc.cubinCrc, pc.functionName, pc.pcOffset) : SourceLine{};
    for (size_t k = 0; k < pc.stallReasonCount; ++k) {
      const CUpti_PCSamplingStallReason& sr = pc.stallReason[k];
      if (sr.samples == 0) continue;
      Record r = make_record(RecordKind::kPcSample, start, end, 0, category_id, pc.correlationId);
      r.name_id = name_id;
      PcSampleData& p = r.pc;
      p.code_object = pc.cubinCrc;
      p.pc_offset = pc.pcOffset;
      p.samples = sr.samples;
      p.range_id = d.rangeId;
      p.agent_id = agent_id;
      p.function_index = pc.functionIndex;
      p.source_file_id = where.file_id;
      p.line = where.line;
      const auto it = stalls.by_index.find(sr.pcSamplingStallReasonIndex);
      if (it != stalls.by_index.end()) {
        p.stall_reason_id = it->second.first;
        if (it->second.second) p.flags |= kPcSampleNotIssued;
      }
      c.emit_waiting(r);
      ++t->records;
      if (p.flags & kPcSampleNotIssued) continue;  // a subset of another record's samples
      t->samples += sr.samples;
      if (where.line == 0) t->no_line += sr.samples;
    }
  }
}

}  // namespace rocprof::cupti::pc
