// Descriptive rows: rocpd_info_node, _process, _thread, _agent, _stream, _queue,
// _kernel_symbol, _pmc. nid is always kNodeId (1), a literal of the statements.
#include "rocpd_writer.hpp"

namespace rocprof::rocpd {

static_assert(kNodeId == 1, "the statements below write nid as the literal 1");

void Writer::prepare_info() {
  stmts_[kThread] = prepare(
      "INSERT INTO \"rocpd_info_thread{S}\"(id, nid, ppid, pid, tid, name, start, \"end\", "
      "extdata) "
      "VALUES (?,1,?,?,?,?,?,?,'{}') ON CONFLICT(id) DO UPDATE SET "
      "\"end\" = CASE WHEN excluded.\"end\" > 0 THEN excluded.\"end\" ELSE \"end\" END, "
      "name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE name END");
  stmts_[kAgent] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_agent{S}\"(id, nid, pid, type, absolute_index, "
      "logical_index, type_index, uuid, name, model_name, vendor_name, product_name, user_name, "
      "extdata) VALUES (?,1,?,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kStream] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_stream{S}\"(id, nid, pid, name, extdata) VALUES "
      "(?,1,?,?,?)");
  stmts_[kQueue] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_queue{S}\"(id, nid, pid, name, extdata) VALUES "
      "(?,1,?,?,?)");
  stmts_[kSymbol] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_kernel_symbol{S}\"(id, nid, pid, code_object_id, "
      "kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, "
      "group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count, "
      "extdata) VALUES (?,1,?,0,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kPmc] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_pmc{S}\"(id, nid, pid, agent_id, target_arch, "
      "event_code, "
      "instance_id, name, symbol, description, long_description, component, units, value_type, "
      "block, expression, is_constant, is_derived, extdata) "
      "VALUES (?,1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
}

void Writer::node(const NodeRow& r) {
  run_once(
      "INSERT INTO \"rocpd_info_node{S}\"(id, hash, machine_id, system_name, hostname, release, "
      "version, hardware_name, domain_name) VALUES (1,?,?,?,?,?,?,?,?)",
      [&](sql::sqlite3_stmt* s) {
        bind(s, 1, r.hash);
        bind(s, 2, r.machine_id);
        bind(s, 3, r.system_name);
        bind(s, 4, r.hostname);
        bind(s, 5, r.release);
        bind(s, 6, r.version);
        bind(s, 7, r.hardware_name);
        bind(s, 8, r.domain_name);
      });
}

void Writer::process(const ProcessRow& r) {
  run_once(
      "INSERT INTO \"rocpd_info_process{S}\"(id, nid, ppid, pid, init, fini, start, \"end\", "
      "command, "
      "environment, extdata) VALUES (?,1,?,?,?,0,?,0,?,?,?)",
      [&](sql::sqlite3_stmt* s) {
        bind(s, 1, r.id);
        bind(s, 2, r.ppid);
        bind(s, 3, r.pid);
        bind(s, 4, r.init);
        bind(s, 5, r.start);
        bind(s, 6, r.command);
        bind(s, 7, r.environment);
        bind(s, 8, r.extdata);
      });
}

void Writer::process_end(const ProcessEndRow& r) {
  run_once("UPDATE \"rocpd_info_process{S}\" SET fini = ?, \"end\" = ? WHERE pid = ?",
           [&](sql::sqlite3_stmt* s) {
             bind(s, 1, r.fini);
             bind(s, 2, r.end);
             bind(s, 3, r.pid);
           });
}

void Writer::threads_end(int64_t end) {
  run_once("UPDATE \"rocpd_info_thread{S}\" SET \"end\" = ? WHERE \"end\" = 0",
           [&](sql::sqlite3_stmt* s) { bind(s, 1, end); });
}

void Writer::thread(const ThreadRow& r) {
  auto* s = stmts_[kThread];
  bind(s, 1, r.id);
  bind(s, 2, r.ppid);
  bind(s, 3, r.pid);
  bind(s, 4, r.tid);
  bind(s, 5, r.name);
  bind(s, 6, r.start);
  bind(s, 7, r.end);
  run(s);
}

void Writer::agent(const AgentInfo& a, int64_t pid) {
  auto* s = stmts_[kAgent];
  bind(s, 1, int64_t{a.id});
  bind(s, 2, pid);
  bind(s, 3, a.type);
  bind(s, 4, int64_t{a.absolute_index});
  bind(s, 5, int64_t{a.logical_index});
  bind(s, 6, int64_t{a.type_index});
  bind(s, 7, a.uuid);
  bind(s, 8, a.name);
  bind(s, 9, a.model_name);
  bind(s, 10, a.vendor_name);
  bind(s, 11, a.product_name);
  bind(s, 12, a.user_name);
  bind(s, 13, a.extdata);
  run(s);
}

void Writer::stream(const StreamInfo& v, int64_t pid) {
  auto* s = stmts_[v.is_queue ? kQueue : kStream];
  bind(s, 1, int64_t{v.id});
  bind(s, 2, pid);
  bind(s, 3, v.name);
  bind(s, 4, v.extdata);
  run(s);
}

void Writer::kernel_symbol(const KernelSymbolInfo& v, int64_t pid) {
  auto* s = stmts_[kSymbol];
  bind(s, 1, int64_t{v.id});
  bind(s, 2, pid);
  bind(s, 3, v.kernel_name);
  bind(s, 4, v.display_name);
  bind(s, 5, static_cast<int64_t>(v.kernel_object));
  bind(s, 6, int64_t{v.kernarg_segment_size});
  bind(s, 7, int64_t{v.kernarg_segment_alignment});
  bind(s, 8, int64_t{v.group_segment_size});
  bind(s, 9, int64_t{v.private_segment_size});
  bind(s, 10, int64_t{v.sgpr_count});
  bind(s, 11, int64_t{v.arch_vgpr_count});
  bind(s, 12, int64_t{v.accum_vgpr_count});
  bind(s, 13, v.extdata);
  run(s);
}

void Writer::pmc(const PmcRow& r) {
  const PmcInfo& p = *r.info;
  auto* s = stmts_[kPmc];
  int i = 1;
  for (int64_t v : {r.id, r.pid, int64_t{p.agent_id}}) bind(s, i++, v);
  bind(s, i++, p.target_arch);
  for (int64_t v : {int64_t{p.event_code}, int64_t{p.instance_id}}) bind(s, i++, v);
  for (const std::string* t : {&p.name, &p.symbol, &p.description, &p.long_description,
                               &p.component, &p.units, &p.value_type, &p.block, &p.expression})
    bind(s, i++, *t);
  for (int64_t v : {int64_t{p.is_constant}, int64_t{p.is_derived}}) bind(s, i++, v);
  bind(s, i++, p.extdata);
  run(s);
}

}  // namespace rocprof::rocpd
