// Hardware counters: rocpd_info_pmc (one row per counter, as ROCm's writer fills it) and
// rocpd_pmc_event (one row per counter value, pointing at its dispatch's rocpd_event row, the
// way rocprofv3 stores per-dispatch counters; ROCm's pmc_events/counters_collection views join
// them to rocpd_kernel_dispatch through that event id).
#include "rocpd_writer.hpp"

namespace rocprof::rocpd {

static_assert(kNodeId == 1, "the statements below write nid as the literal 1");

void Writer::prepare_pmc() {
  stmts_[kPmcInfo] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_pmc{S}\"(id, nid, pid, agent_id, target_arch, "
      "event_code, instance_id, name, symbol, description, long_description, component, units, "
      "value_type, block, expression, is_constant, is_derived, extdata) "
      "VALUES (?,1,?,?,?,NULL,NULL,?,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kPmcEvent] = prepare(
      "INSERT INTO \"rocpd_pmc_event{S}\"(event_id, pmc_id, value, extdata) VALUES (?,?,?,'{}')");
}

void Writer::pmc_info(const PmcInfo& p, int64_t pid) {
  auto* s = stmts_[kPmcInfo];
  int i = 1;
  bind(s, i++, int64_t{p.id});
  bind(s, i++, pid);
  if (p.agent_id != 0)
    bind(s, i++, int64_t{p.agent_id});
  else
    api_->bind_null(s, i++);
  for (const std::string* v :
       {&p.target_arch, &p.name, &p.symbol, &p.description, &p.long_description, &p.component,
        &p.units, &p.value_type, &p.block, &p.expression})
    bind(s, i++, *v);
  bind(s, i++, int64_t{p.is_constant ? 1 : 0});
  bind(s, i++, int64_t{p.is_derived ? 1 : 0});
  bind(s, i++, p.extdata);
  run(s);
}

void Writer::pmc_event(const PmcEventRow& r) {
  auto* s = stmts_[kPmcEvent];
  bind(s, 1, r.event_id);
  bind(s, 2, r.pmc_id);
  api_->bind_double(s, 3, r.value);
  run(s);
}

}  // namespace rocprof::rocpd
