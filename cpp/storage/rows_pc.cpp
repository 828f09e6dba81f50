// The rows of PC samples: rocpd_pc_sample (this project's table, docs/pc-sampling-schema.md).
#include "rocpd_writer.hpp"

namespace rocprof::rocpd {

void Writer::prepare_pc() {
  stmts_[kPcSample] = prepare(
      "INSERT INTO \"rocpd_pc_sample{S}\"({NP}agent_id, correlation_id, start, \"end\", "
      "kernel_name_id, code_object, function_index, pc_offset, instruction_id, source_file_id, "
      "line, stall_reason_id, not_issued, count, event_id, dispatch_id, extdata) "
      "VALUES ({NPV}?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
}

void Writer::pc_sample(const PcSampleRow& r) {
  auto* s = stmts_[kPcSample];
  int i = 1;
  for (int64_t v : {r.agent_id, r.correlation_id, r.start, r.end}) bind(s, i++, v);
  bind(s, i++, r.kernel_name_id);
  for (int64_t v : {r.code_object, r.function_index, r.pc_offset}) bind(s, i++, v);
  bind(s, i++, r.instruction_id);
  bind(s, i++, r.source_file_id);
  bind(s, i++, r.line);
  bind(s, i++, r.stall_reason_id);
  for (int64_t v : {r.not_issued, r.count, r.event_id}) bind(s, i++, v);
  bind(s, i++, r.dispatch_id);
  bind(s, i++, r.extdata);
  run(s);
}

}  // namespace rocprof::rocpd
