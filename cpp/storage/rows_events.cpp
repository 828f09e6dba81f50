// The rows of records: rocpd_event (one per record, and per call-stack node), rocpd_region,
// rocpd_kernel_dispatch, rocpd_memory_copy, rocpd_memory_allocate, rocpd_track, rocpd_sample,
// rocpd_pmc_event, and thread renames. The hottest code of the writer: statements are prepared
// once; the most frequent rows go in batches (rows_batch.cpp).
#include "rocpd_writer.hpp"

namespace rocprof::rocpd {

void Writer::prepare_events() {
  // Events keep one form (no separate statement for stack-less events): their rows must reach
  // the table in id order, one batch, or the b-tree would split pages instead of appending.
  batch_init(kBatchEvent,
             "INSERT INTO \"rocpd_event{S}\"(id, category_id, stack_id, parent_stack_id, "
             "correlation_id, call_stack, line_info, extdata) VALUES ",
             "(?,?,?,?,?,?,?,?)");
  // {NP}/{NPV}: nid and pid, named only where they are stored (tables.sql, prepare()).
  batch_init(kBatchRegion,
             "INSERT INTO \"rocpd_region{S}\"(id, {NP}tid, start, \"end\", name_id, event_id, "
             "extdata) VALUES ",
             "(?,{NPV}?,?,?,?,?,'{}')");
  batch_init(kBatchKernel,
             "INSERT INTO \"rocpd_kernel_dispatch{S}\"({NP}tid, agent_id, kernel_id, dispatch_id, "
             "queue_id, stream_id, start, \"end\", private_segment_size, group_segment_size, "
             "workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, "
             "grid_size_z, region_name_id, event_id, extdata) VALUES ",
             "({NPV}?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  batch_init(kBatchCopy,
             "INSERT INTO \"rocpd_memory_copy{S}\"({NP}tid, start, \"end\", name_id, "
             "dst_agent_id, dst_address, src_agent_id, src_address, size, queue_id, stream_id, "
             "region_name_id, event_id, extdata) VALUES ",
             "({NPV}?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  batch_init(kBatchSample,
             "INSERT INTO \"rocpd_sample{S}\"(track_id, timestamp, event_id, extdata) VALUES ",
             "(?,?,?,?)");
  stmts_[kAlloc] = prepare(
      "INSERT INTO \"rocpd_memory_allocate{S}\"({NP}tid, agent_id, type, level, start, "
      "\"end\", address, size, queue_id, stream_id, event_id, extdata) VALUES "
      "({NPV}?,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kPmcEvent] = prepare(
      "INSERT INTO \"rocpd_pmc_event{S}\"(event_id, pmc_id, value, extdata) VALUES (?,?,?,'{}')");
  stmts_[kArg] = prepare(
      "INSERT INTO \"rocpd_arg{S}\"(event_id, position, type, name, value, extdata) VALUES "
      "(?,?,?,?,?,'{}')");
  stmts_[kTrack] = prepare(
      "INSERT INTO \"rocpd_track{S}\"(id, nid, pid, tid, name_id, extdata) VALUES "
      "(?,1,?,?,?,'{}')");
  stmts_[kThreadName] = prepare("UPDATE \"rocpd_info_thread{S}\" SET name = ? WHERE tid = ?");
  // HIP device ids are the runtime's ordinals (logical_index of the GPU agents); agents and
  // streams named by handle carry it in extdata ("handle"), as the AMD backend writes them.
  stmts_[kNameDevice] = prepare(
      "UPDATE \"rocpd_info_agent{S}\" SET user_name = ? WHERE type = 'GPU' AND logical_index = ?");
  stmts_[kNameAgent] = prepare(
      "UPDATE \"rocpd_info_agent{S}\" SET user_name = ? "
      "WHERE json_valid(extdata) AND json_extract(extdata, '$.handle') = ?");
  stmts_[kNameStream] = prepare(
      "UPDATE \"rocpd_info_stream{S}\" SET name = ? "
      "WHERE json_valid(extdata) AND json_extract(extdata, '$.handle') = ?");
}

void Writer::event(const EventRow& r) {
  Batch& b = batches_[kBatchEvent];
  add(b, r.id);
  add(b, r.category_id);
  for (int64_t v : {r.stack_id, r.parent_stack_id, r.correlation_id}) add(b, v);
  for (std::string_view v : {r.call_stack, r.line_info, r.extdata}) add(b, v);
  end_row(b);
}

void Writer::region(const RegionRow& r) {
  Batch& b = batches_[kBatchRegion];
  for (int64_t v : {r.id, r.tid, r.start, r.end}) add(b, v);
  add(b, r.name_id);
  add(b, r.event_id);
  end_row(b);
}

void Writer::kernel(const KernelRow& r) {
  Batch& b = batches_[kBatchKernel];
  for (int64_t v : {r.tid, r.agent_id, r.kernel_id, r.dispatch_id, r.queue_id, r.stream_id, r.start,
                    r.end, r.private_segment_size, r.group_segment_size})
    add(b, v);
  for (int64_t v : r.workgroup_size) add(b, v);
  for (int64_t v : r.grid_size) add(b, v);
  add(b, r.region_name_id);
  add(b, r.event_id);
  add(b, r.extdata);
  end_row(b);
}

void Writer::copy(const CopyRow& r) {
  Batch& b = batches_[kBatchCopy];
  for (int64_t v : {r.tid, r.start, r.end}) add(b, v);
  add(b, r.name_id);
  add(b, r.dst_agent_id);
  add(b, r.dst_address);
  add(b, r.src_agent_id);
  for (int64_t v : {r.src_address, r.size, r.queue_id, r.stream_id}) add(b, v);
  add(b, r.region_name_id);
  add(b, r.event_id);
  add(b, r.extdata);
  end_row(b);
}

void Writer::alloc(const AllocRow& r) {
  auto* s = stmts_[kAlloc];
  int i = 1;
  for (int64_t v : {r.tid, r.agent_id}) bind(s, i++, v);
  bind_static(s, i++, r.type);
  bind_static(s, i++, r.level);
  for (int64_t v : {r.start, r.end, r.address, r.size, r.queue_id, r.stream_id, r.event_id})
    bind(s, i++, v);
  bind_static(s, i++, r.extdata);
  run(s);
}

void Writer::track(const TrackRow& r) {
  auto* s = stmts_[kTrack];
  bind(s, 1, r.id);
  bind(s, 2, r.pid);
  bind(s, 3, r.tid);
  bind(s, 4, r.name_id);
  run(s);
}

void Writer::sample(const SampleRow& r) {
  Batch& b = batches_[kBatchSample];
  for (int64_t v : {r.track_id, r.timestamp, r.event_id}) add(b, v);
  add(b, r.extdata);
  end_row(b);
}

void Writer::name_object(const NameRow& r) {
  const Stmt which = r.target == kNameHipDevice   ? kNameDevice
                     : r.target == kNameHsaAgent  ? kNameAgent
                     : r.target == kNameHipStream ? kNameStream
                                                  : kStmtCount;
  if (which == kStmtCount) return;
  names_.emplace_back(which, r.object, std::string(r.name));
  apply_name(which, r.object, r.name);
}

void Writer::apply_name(Stmt which, int64_t object, std::string_view name) {
  auto* s = stmts_[which];
  if (s == nullptr) return;
  bind(s, 1, name);
  bind(s, 2, object);
  run(s);
}

void Writer::reapply_names() {
  for (const auto& [which, object, name] : names_) apply_name(which, object, name);
}

void Writer::arg(const ArgRow& r) {
  auto* s = stmts_[kArg];
  bind(s, 1, r.event_id);
  bind(s, 2, r.position);
  bind(s, 3, r.type);
  bind(s, 4, r.name);
  bind(s, 5, std::string_view(r.value));
  run(s);
}

void Writer::pmc_event(const PmcEventRow& r) {
  auto* s = stmts_[kPmcEvent];
  bind(s, 1, r.event_id);
  bind(s, 2, r.pmc_id);
  bind(s, 3, r.value);
  run(s);
}

void Writer::thread_name(const ThreadNameRow& r) {
  auto* s = stmts_[kThreadName];
  bind(s, 1, r.name);
  bind(s, 2, r.tid);
  run(s);
}

}  // namespace rocprof::rocpd
