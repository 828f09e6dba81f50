#include "rocpd_sink.hpp"

#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.hpp"
#include "rocprof_schema_sql.hpp"  // generated from rocpd/schema/*.sql

namespace rocprof {
namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
    text.replace(p, from.size(), to);
  return text;
}

const char* kAllocTypes[] = {"ALLOC", "FREE", "REALLOC", "RECLAIM"};
const char* kAllocLevels[] = {"REAL", "VIRTUAL", "SCRATCH"};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::string rocpd_suffix(const std::string& guid) { return "_" + replace_all(guid, "-", "_"); }

RocpdSink::~RocpdSink() {
  if (db_ != nullptr) close(0);
}

bool RocpdSink::exec(const std::string& sql, std::string* error) {
  char* msg = nullptr;
  const int rc = api_->exec(db_, sql.c_str(), nullptr, nullptr, &msg);
  if (rc != sql::kOk && in_txn_ && error == nullptr && storage_error(rc)) {
    if (msg) api_->free(msg);
    fail_storage(rc);
    return false;
  }
  if (rc != sql::kOk) {
    std::string text = msg ? msg : "unknown SQLite error";
    if (msg) api_->free(msg);
    if (error) *error = text;
    else std::fprintf(stderr, "rocprof: SQLite: %s\n", text.c_str());
    return false;
  }
  return true;
}

sql::sqlite3_stmt* RocpdSink::prepare(const std::string& text) {
  sql::sqlite3_stmt* s = nullptr;
  const std::string full = replace_all(text, "{S}", suffix_);
  if (api_->prepare_v2(db_, full.c_str(), -1, &s, nullptr) != sql::kOk) {
    std::fprintf(stderr, "rocprof: SQLite prepare failed: %s (%s)\n", api_->errmsg(db_), full.c_str());
    failed_ = true;
  }
  return s;
}

void RocpdSink::run(sql::sqlite3_stmt* s) {
  if (s == nullptr) return;
  const int rc = api_->step(s);
  if (rc != sql::kDone && rc != sql::kRow && in_txn_ && storage_error(rc)) {
    api_->reset(s);
    fail_storage(rc);
    return;
  }
  if (rc != sql::kDone && rc != sql::kRow && !failed_ && !quiet_) {
    std::fprintf(stderr, "rocprof: SQLite insert failed: %s\n", api_->errmsg(db_));
  }
  api_->reset(s);
}

bool RocpdSink::open(const SessionInfo& info, std::string* error) {
  info_ = info;
  api_ = sql::api(error);
  if (api_ == nullptr) return false;
  suffix_ = rocpd_suffix(info.guid);
  if (api_->open_v2(info.path.c_str(), &db_, sql::kOpenReadWrite | sql::kOpenCreate | sql::kOpenNoMutex,
                    nullptr) != sql::kOk) {
    if (error) *error = db_ ? api_->errmsg(db_) : "cannot open";
    if (db_) api_->close_v2(db_);
    db_ = nullptr;
    return false;
  }
  // WAL: a commit is durable against process death without a full-file rewrite;
  // A checkpoint (WAL → database) syncs the file: one per 256 MiB of WAL instead of SQLite's
  // default 4 MiB keeps the writer near a bare insert loop's rate (B4).
  // synchronous=NORMAL (set first, so even the switch to WAL skips the rollback journal's
  // fsyncs) skips the fsync per commit: only an OS crash could lose the tail.
  if (!exec("PRAGMA synchronous=NORMAL; PRAGMA journal_mode=WAL; PRAGMA temp_store=MEMORY; "
            "PRAGMA wal_autocheckpoint=65536;", error))
    return false;
  const std::string tables = replace_all(replace_all(schema::kTablesSql, "{{uuid}}", suffix_),
                                         "{{guid}}", info.guid);
  const std::string table_views = replace_all(replace_all(schema::kTableViewsSql, "{{uuid}}", suffix_),
                                              "{{guid}}", info.guid);
  if (!exec("BEGIN;", error) || !exec(tables, error) || !exec(table_views, error) ||
      !exec(schema::kViewsSql, error))
    return false;

  stmts_[kString] = prepare("INSERT INTO \"rocpd_string{S}\"(id, string) VALUES (?,?)");
  stmts_[kEvent] = prepare(
      "INSERT INTO \"rocpd_event{S}\"(id, category_id, stack_id, parent_stack_id, correlation_id, "
      "call_stack, line_info, extdata) VALUES (?,?,?,?,?,?,?,?)");
  // Most events (ROCTx ranges, API calls) have no stack: constants instead of binds.
  stmts_[kEventPlain] = prepare(
      "INSERT INTO \"rocpd_event{S}\"(id, category_id, stack_id, parent_stack_id, correlation_id, "
      "call_stack, line_info, extdata) VALUES (?,?,0,0,?,'{}','{}',?)");
  stmts_[kRegion] = prepare(
      "INSERT INTO \"rocpd_region{S}\"(nid, pid, tid, start, \"end\", name_id, event_id, extdata) "
      "VALUES (1,?,?,?,?,?,?,'{}')");
  stmts_[kKernel] = prepare(
      "INSERT INTO \"rocpd_kernel_dispatch{S}\"(nid, pid, tid, agent_id, kernel_id, dispatch_id, "
      "queue_id, stream_id, start, \"end\", private_segment_size, group_segment_size, "
      "workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, "
      "region_name_id, event_id, extdata) VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kCopy] = prepare(
      "INSERT INTO \"rocpd_memory_copy{S}\"(nid, pid, tid, start, \"end\", name_id, dst_agent_id, "
      "dst_address, src_agent_id, src_address, size, queue_id, stream_id, region_name_id, event_id, "
      "extdata) VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kAlloc] = prepare(
      "INSERT INTO \"rocpd_memory_allocate{S}\"(nid, pid, tid, agent_id, type, level, start, \"end\", "
      "address, size, queue_id, stream_id, event_id, extdata) VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kSampleRow] = prepare(
      "INSERT INTO \"rocpd_sample{S}\"(track_id, timestamp, event_id, extdata) VALUES (?,?,?,?)");
  stmts_[kTrack] = prepare(
      "INSERT INTO \"rocpd_track{S}\"(id, nid, pid, tid, name_id, extdata) VALUES (?,1,?,?,?,'{}')");
  stmts_[kThread] = prepare(
      "INSERT INTO \"rocpd_info_thread{S}\"(id, nid, ppid, pid, tid, name, start, \"end\", extdata) "
      "VALUES (?,1,?,?,?,?,?,?,'{}') ON CONFLICT(id) DO UPDATE SET "
      "\"end\" = CASE WHEN excluded.\"end\" > 0 THEN excluded.\"end\" ELSE \"end\" END, "
      "name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE name END");
  stmts_[kThreadName] = prepare("UPDATE \"rocpd_info_thread{S}\" SET name = ? WHERE tid = ?");
  stmts_[kAgent] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_agent{S}\"(id, nid, pid, type, absolute_index, "
      "logical_index, type_index, uuid, name, model_name, vendor_name, product_name, user_name, "
      "extdata) VALUES (?,1,?,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kStream] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_stream{S}\"(id, nid, pid, name, extdata) VALUES (?,1,?,?,?)");
  stmts_[kQueue] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_queue{S}\"(id, nid, pid, name, extdata) VALUES (?,1,?,?,?)");
  stmts_[kSymbol] = prepare(
      "INSERT OR REPLACE INTO \"rocpd_info_kernel_symbol{S}\"(id, nid, pid, code_object_id, "
      "kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, "
      "group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count, "
      "extdata) VALUES (?,1,?,0,?,?,?,?,?,?,?,?,?,?,?)");
  stmts_[kMetaUpdate] = prepare("UPDATE \"rocpd_metadata{S}\" SET value = ? WHERE tag = ?");
  stmts_[kMetaInsert] = prepare("INSERT INTO \"rocpd_metadata{S}\"(tag, value) VALUES (?,?)");
  if (failed_) {
    if (error) *error = "schema and writer disagree (see the message above)";
    return false;
  }
  write_base_rows(info);
  if (!exec("COMMIT; BEGIN;", error)) return false;
  in_txn_ = true;
  reserve_space();
  return true;
}

void RocpdSink::write_base_rows(const SessionInfo& info) {
  write_metadata("schema_version", "3");
  write_metadata("uuid", suffix_);
  write_metadata("guid", info.guid);
  for (const auto& kv : info.metadata) write_metadata(kv.first, kv.second);
  write_metadata("rocprof.clock_domain", "CLOCK_BOOTTIME");
  write_metadata("rocprof.record_format_version", std::to_string(kRecordFormatVersion));
  write_metadata("rocprof.options", info.options_json);
  write_metadata("rocprof.dropped_records", "0");

  auto* s = prepare(
      "INSERT INTO \"rocpd_info_node{S}\"(id, hash, machine_id, system_name, hostname, release, "
      "version, hardware_name, domain_name) VALUES (1,?,?,?,?,?,?,?,?)");
  bind(s, 1, static_cast<int64_t>(fnv1a(info.machine_id + info.hostname) >> 1));
  bind_text(s, 2, info.machine_id.empty() ? info.hostname : info.machine_id);
  bind_text(s, 3, info.system_name);
  bind_text(s, 4, info.hostname);
  bind_text(s, 5, info.release);
  bind_text(s, 6, info.version);
  bind_text(s, 7, info.machine);
  bind_text(s, 8, info.domain_name);
  run(s);
  api_->finalize(s);

  s = prepare(
      "INSERT INTO \"rocpd_info_process{S}\"(id, nid, ppid, pid, init, fini, start, \"end\", command, "
      "environment, extdata) VALUES (?,1,?,?,?,0,?,0,?,?,'{}')");
  bind(s, 1, info.pid);
  bind(s, 2, info.ppid);
  bind(s, 3, info.pid);
  bind(s, 4, static_cast<int64_t>(info.init_ns));
  bind(s, 5, static_cast<int64_t>(info.process_start_ns));
  bind_text(s, 6, info.command);
  bind_text(s, 7, info.environment_json);
  run(s);
  api_->finalize(s);

  AgentInfo cpu;
  cpu.id = kCpuAgentId;
  cpu.type = "CPU";
  cpu.name = cpu.model_name = cpu.product_name = info.cpu_model;
  cpu.vendor_name = "CPU";
  write_info(cpu);
}

void RocpdSink::write_metadata(const std::string& tag, const std::string& value) {
  bind_text(stmts_[kMetaUpdate], 1, value);
  bind_text(stmts_[kMetaUpdate], 2, tag);
  run(stmts_[kMetaUpdate]);
  if (api_->changes(db_) == 0) {
    bind_text(stmts_[kMetaInsert], 1, tag);
    bind_text(stmts_[kMetaInsert], 2, value);
    run(stmts_[kMetaInsert]);
  }
}

void RocpdSink::write_strings(uint32_t first_id, const std::vector<std::string>& strings) {
  if (db_ == nullptr || !failure_.empty()) return;
  if (strings_.size() < first_id - 1) strings_.resize(first_id - 1);
  strings_.resize(first_id - 1);
  uint32_t id = first_id;
  for (const std::string& s : strings) {
    bind(stmts_[kString], 1, id++);
    bind_text(stmts_[kString], 2, s);
    run(stmts_[kString]);
    strings_.push_back(s);
  }
}

void RocpdSink::write_info(const InfoRow& row) {
  if (db_ == nullptr) return;
  if (!failure_.empty()) {
    // Drop counts must reach the database even now: kept for one last try at close.
    if (const auto* m = std::get_if<MetadataInfo>(&row)) {
      for (auto& kv : late_metadata_)
        if (kv.first == m->tag) {
          kv.second = m->value;
          return;
        }
      late_metadata_.emplace_back(m->tag, m->value);
    }
    return;
  }
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, MetadataInfo>) {
          write_metadata(v.tag, v.value);
        } else if constexpr (std::is_same_v<T, ThreadInfo>) {
          auto* s = stmts_[kThread];
          bind(s, 1, v.tid);
          bind(s, 2, info_.ppid);
          bind(s, 3, info_.pid);
          bind(s, 4, v.tid);
          bind_text(s, 5, v.name);
          bind(s, 6, static_cast<int64_t>(v.start));
          bind(s, 7, static_cast<int64_t>(v.end));
          run(s);
        } else if constexpr (std::is_same_v<T, AgentInfo>) {
          auto* s = stmts_[kAgent];
          bind(s, 1, v.id);
          bind(s, 2, info_.pid);
          bind_text(s, 3, v.type);
          bind(s, 4, v.absolute_index);
          bind(s, 5, v.logical_index);
          bind(s, 6, v.type_index);
          bind_text(s, 7, v.uuid);
          bind_text(s, 8, v.name);
          bind_text(s, 9, v.model_name);
          bind_text(s, 10, v.vendor_name);
          bind_text(s, 11, v.product_name);
          bind_text(s, 12, v.user_name);
          bind_text(s, 13, v.extdata);
          run(s);
        } else if constexpr (std::is_same_v<T, StreamInfo>) {
          auto* s = stmts_[v.is_queue ? kQueue : kStream];
          bind(s, 1, v.id);
          bind(s, 2, info_.pid);
          bind_text(s, 3, v.name);
          bind_text(s, 4, v.extdata);
          run(s);
        } else if constexpr (std::is_same_v<T, StackInfo>) {
          // Stack nodes share rocpd_event with the samples (no stack table in schema v3).
          auto* s = stmts_[kEvent];
          bind(s, 1, next_event_id_++);
          bind_id(s, 2, v.category_id);
          bind(s, 3, static_cast<int64_t>(v.id));
          bind(s, 4, static_cast<int64_t>(v.parent_id));
          bind(s, 5, 0);
          bind_text(s, 6, v.call_stack);
          bind_text(s, 7, v.line_info);
          api_->bind_text(s, 8, "{}", 2, nullptr);
          run(s);
        } else if constexpr (std::is_same_v<T, KernelSymbolInfo>) {
          auto* s = stmts_[kSymbol];
          bind(s, 1, v.id);
          bind(s, 2, info_.pid);
          bind_text(s, 3, v.kernel_name);
          bind_text(s, 4, v.display_name);
          bind(s, 5, static_cast<int64_t>(v.kernel_object));
          bind(s, 6, v.kernarg_segment_size);
          bind(s, 7, v.kernarg_segment_alignment);
          bind(s, 8, v.group_segment_size);
          bind(s, 9, v.private_segment_size);
          bind(s, 10, v.sgpr_count);
          bind(s, 11, v.arch_vgpr_count);
          bind(s, 12, v.accum_vgpr_count);
          bind_text(s, 13, v.extdata);
          run(s);
        }
      },
      row);
}

const std::string& RocpdSink::message_json(uint32_t name_id) {
  if (name_id >= message_json_.size()) message_json_.resize(name_id + 1);
  std::string& json = message_json_[name_id];
  if (json.empty()) {
    json.assign("{\"message\":");
    json_escape_into(json, name_id > 0 && name_id <= strings_.size() ? strings_[name_id - 1] : "");
    json.push_back('}');
  }
  return json;
}

int64_t RocpdSink::insert_event(const Record& r, const std::string& extdata) {
  auto* s = stmts_[kEvent];
  const int64_t id = next_event_id_++;
  uint64_t stack = 0, parent = 0;
  switch (r.kind) {
    case RecordKind::kRegion: stack = r.region.stack_id; parent = r.region.parent_stack_id; break;
    case RecordKind::kKernelDispatch: stack = r.kernel.stack_id; break;
    case RecordKind::kMemoryCopy: stack = r.copy.stack_id; break;
    case RecordKind::kMemoryAlloc: stack = r.alloc.stack_id; break;
    case RecordKind::kSample: stack = r.sample.stack_id; break;
    default: break;
  }
  // GPU work launched from Python carries its call site (interned JSON list of frames,
  // innermost user frame first): call_stack is the list, line_info its first frame.
  uint32_t callsite = 0;
  if (r.kind == RecordKind::kKernelDispatch) callsite = r.kernel.callsite_id;
  else if (r.kind == RecordKind::kMemoryCopy) callsite = r.copy.callsite_id;
  if (stack == 0 && parent == 0 && callsite == 0) {
    s = stmts_[kEventPlain];
    bind(s, 1, id);
    bind_id(s, 2, r.category_id);
    bind(s, 3, static_cast<int64_t>(r.correlation_id));
    api_->bind_text(s, 4, extdata.data(), static_cast<int>(extdata.size()), nullptr);
    run(s);
    return id;
  }
  bind(s, 1, id);
  bind_id(s, 2, r.category_id);
  bind(s, 3, static_cast<int64_t>(stack));
  bind(s, 4, static_cast<int64_t>(parent));
  bind(s, 5, static_cast<int64_t>(r.correlation_id));
  if (callsite != 0 && callsite <= strings_.size()) {
    const std::string& stack = strings_[callsite - 1];
    const size_t open = stack.find('{'), close = stack.find('}');
    bind_text(s, 6, stack);
    if (open != std::string::npos && close != std::string::npos && close > open)
      bind_text(s, 7, stack.substr(open, close - open + 1));
    else
      api_->bind_text(s, 7, "{}", 2, nullptr);
  } else {
    api_->bind_text(s, 6, "{}", 2, nullptr);
    api_->bind_text(s, 7, "{}", 2, nullptr);
  }
  // Static binding (no copy): `extdata` outlives the step below.
  api_->bind_text(s, 8, extdata.data(), static_cast<int>(extdata.size()), nullptr);
  run(s);
  return id;
}

int64_t RocpdSink::track_for(uint32_t tid, uint32_t category_id) {
  const uint64_t key = (static_cast<uint64_t>(category_id) << 32) | tid;
  auto it = tracks_.find(key);
  if (it != tracks_.end()) return it->second;
  const int64_t id = static_cast<int64_t>(tracks_.size()) + 1;
  auto* s = stmts_[kTrack];
  bind(s, 1, id);
  bind(s, 2, info_.pid);
  bind(s, 3, tid);
  bind_id(s, 4, category_id);
  run(s);
  tracks_.emplace(key, id);
  return id;
}

void RocpdSink::write_records(const Record* records, std::size_t n) {
  if (db_ == nullptr) return;
  if (!failure_.empty()) {
    unstored_.fetch_add(n, std::memory_order_relaxed);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (failure_.empty()) write_record(records[i]);
    if (!failure_.empty()) {  // this record and the rest of the batch
      unstored_.fetch_add(n - i, std::memory_order_relaxed);
      return;
    }
    // Bounded transactions: a burst drained in one go must not become one transaction that
    // a nearly full disk can never take (and that a write error would take back whole).
    if (++txn_records_ >= kMaxTxnRecords) commit();
  }
}

void RocpdSink::write_record(const Record& r) {
  static const std::string kEmpty = "{}";
  const std::string* extdata = &kEmpty;
  auto text_of = [&](uint32_t id) -> const std::string& {
    static const std::string none;
    return id > 0 && id <= strings_.size() ? strings_[id - 1] : none;
  };
  switch (r.kind) {
    case RecordKind::kRegion: {
      if (r.region.extdata_id != 0) {
        extdata = &text_of(r.region.extdata_id);
      } else if (r.flags & kFlagMessage) {
        // ROCTx convention: the message travels in the event's extdata. Built once per
        // distinct message: ranges repeat their names, and this is the writer's hottest row.
        extdata = &message_json(r.name_id);
      }
      if (r.flags & kFlagOpenAtExit) {
        // Its end is the session's end, not the program's: say so where a reader looks.
        scratch_ = *extdata;
        scratch_.pop_back();
        if (scratch_.size() > 1) scratch_.push_back(',');
        scratch_.append("\"open_at_exit\":true}");
        extdata = &scratch_;
      }
      const int64_t ev = insert_event(r, *extdata);
      auto* s = stmts_[kRegion];
      bind(s, 1, info_.pid);
      bind(s, 2, r.tid);
      bind(s, 3, static_cast<int64_t>(r.start));
      bind(s, 4, static_cast<int64_t>(r.end));
      bind_id(s, 5, r.name_id);
      bind(s, 6, ev);
      run(s);
      break;
    }
    case RecordKind::kKernelDispatch: {
      const KernelData& k = r.kernel;
      // Registers are per kernel (rocpd_info_kernel_symbol); only dynamic shared memory varies
      // per dispatch, and only when non-zero is it worth bytes on every row (B5).
      if (k.dynamic_shared != 0) {
        scratch_ = "{\"dynamic_shared_memory\":" + std::to_string(k.dynamic_shared) + "}";
        extdata = &scratch_;
      }
      const int64_t ev = insert_event(r, "{}");
      auto* s = stmts_[kKernel];
      int i = 1;
      bind(s, i++, info_.pid);
      bind(s, i++, r.tid);
      bind(s, i++, k.agent_id);
      bind(s, i++, k.kernel_id);
      bind(s, i++, static_cast<int64_t>(k.dispatch_id));
      bind(s, i++, k.queue_id);
      bind(s, i++, k.stream_id);
      bind(s, i++, static_cast<int64_t>(r.start));
      bind(s, i++, static_cast<int64_t>(r.end));
      bind(s, i++, k.local_per_thread);
      bind(s, i++, static_cast<int64_t>(k.static_shared) + k.dynamic_shared);
      for (int d = 0; d < 3; ++d) bind(s, i++, k.block[d]);
      for (int d = 0; d < 3; ++d) bind(s, i++, k.grid[d]);
      bind_id(s, i++, k.region_name_id);
      bind(s, i++, ev);
      bind_text(s, i++, *extdata);
      run(s);
      break;
    }
    case RecordKind::kMemoryCopy: {
      const CopyData& c = r.copy;
      if (r.flags & kFlagMemset) {
        scratch_ = "{\"memset_value\":" + std::to_string(c.value) + "}";
        extdata = &scratch_;
      }
      const int64_t ev = insert_event(r, "{}");
      auto* s = stmts_[kCopy];
      int i = 1;
      bind(s, i++, info_.pid);
      bind(s, i++, r.tid);
      bind(s, i++, static_cast<int64_t>(r.start));
      bind(s, i++, static_cast<int64_t>(r.end));
      bind_id(s, i++, r.name_id);
      bind(s, i++, c.dst_agent_id);
      bind(s, i++, static_cast<int64_t>(c.dst_address));
      if (r.flags & kFlagMemset) api_->bind_null(s, i++); else bind(s, i++, c.src_agent_id);
      bind(s, i++, static_cast<int64_t>(c.src_address));
      bind(s, i++, static_cast<int64_t>(c.bytes));
      bind(s, i++, c.queue_id);
      bind(s, i++, c.stream_id);
      bind_id(s, i++, c.region_name_id);
      bind(s, i++, ev);
      bind_text(s, i++, *extdata);
      run(s);
      break;
    }
    case RecordKind::kMemoryAlloc: {
      const AllocData& a = r.alloc;
      const int64_t ev = insert_event(r, "{}");
      auto* s = stmts_[kAlloc];
      int i = 1;
      bind(s, i++, info_.pid);
      bind(s, i++, r.tid);
      bind(s, i++, a.agent_id);
      api_->bind_text(s, i++, kAllocTypes[a.op & 3], -1, nullptr);
      api_->bind_text(s, i++, kAllocLevels[a.level < 3 ? a.level : 0], -1, nullptr);
      bind(s, i++, static_cast<int64_t>(r.start));
      bind(s, i++, static_cast<int64_t>(r.end));
      bind(s, i++, static_cast<int64_t>(a.address));
      bind(s, i++, static_cast<int64_t>(a.bytes));
      bind(s, i++, 0);
      bind(s, i++, a.stream_id);
      bind(s, i++, ev);
      api_->bind_text(s, i++, "{}", 2, nullptr);
      run(s);
      break;
    }
    case RecordKind::kSample: {
      const SampleData& p = r.sample;
      const int64_t ev = insert_event(r, p.extdata_id ? text_of(p.extdata_id) : kEmpty);
      auto* s = stmts_[kSampleRow];
      bind(s, 1, p.track_id ? static_cast<int64_t>(p.track_id) : track_for(r.tid, r.category_id));
      bind(s, 2, static_cast<int64_t>(r.start));
      bind(s, 3, ev);
      api_->bind_text(s, 4, "{}", 2, nullptr);
      run(s);
      break;
    }
    case RecordKind::kThreadName: {
      auto* s = stmts_[kThreadName];
      bind_text(s, 1, text_of(r.name_id));
      bind(s, 2, r.tid);
      run(s);
      break;
    }
    case RecordKind::kNone: break;
  }
}

void RocpdSink::commit() {
  if (db_ == nullptr || !failure_.empty()) return;
  if (exec("COMMIT; BEGIN;")) txn_records_ = 0;
}

void RocpdSink::close(uint64_t end_ns) {
  if (db_ == nullptr) return;
  if (!failure_.empty()) {
    close_failed(end_ns);
    return;
  }
  if (end_ns != 0) {
    auto* s = prepare("UPDATE \"rocpd_info_process{S}\" SET fini = ?, \"end\" = ? WHERE pid = ?");
    bind(s, 1, static_cast<int64_t>(end_ns));
    bind(s, 2, static_cast<int64_t>(end_ns));
    bind(s, 3, info_.pid);
    run(s);
    api_->finalize(s);
    s = prepare("UPDATE \"rocpd_info_thread{S}\" SET \"end\" = ? WHERE \"end\" = 0");
    bind(s, 1, static_cast<int64_t>(end_ns));
    run(s);
    api_->finalize(s);
  }
  exec("COMMIT;");
  if (!failure_.empty()) {  // the last commit met a full disk
    close_failed(end_ns);
    return;
  }
  for (auto*& s : stmts_) {
    if (s) api_->finalize(s);
    s = nullptr;
  }
  // Fold the WAL back in and leave a single self-contained file that read-only readers
  // (and copies of just the .db) can open.
  in_txn_ = false;
  exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  api_->close_v2(db_);
  db_ = nullptr;
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
  reserve_fd_ = -1;
}

// ---- storage failures ----------------------------------------------------------------
// A full disk used to produce one "insert failed" line per row, strings lost while their
// rows went in, "(unknown)" names and a summary saying nothing was dropped. Now the first
// write error of the output stops all inserting: the open transaction is rolled back (what
// was committed stays valid), every record from it on is counted as unstored, one line says
// so at once, and the drop counts are written at close into the room the reserve gave back.

bool RocpdSink::storage_error(int rc) {
  switch (rc & 0xff) {
    case 8:   // SQLITE_READONLY (a read-only remount)
    case 10:  // SQLITE_IOERR
    case 11:  // SQLITE_CORRUPT
    case 13:  // SQLITE_FULL
    case 14:  // SQLITE_CANTOPEN
      return true;
    default:
      return false;
  }
}

void RocpdSink::fail_storage(int rc) {
  const int code = rc & 0xff;
  failure_ = code == 13 ? "disk full" : code == 8 ? "read-only" : "I/O error";
  const std::string why = api_->errmsg(db_);
  unstored_.fetch_add(txn_records_, std::memory_order_relaxed);
  txn_records_ = 0;
  in_txn_ = false;
  quiet_ = true;
  api_->exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
  reserve_fd_ = -1;
  std::fprintf(stderr,
               "rocprof: cannot write %s: %s (%s): recording to it stops here; what was committed "
               "is kept, every record from now on is counted as dropped\n",
               info_.path.c_str(), failure_.c_str(), why.c_str());
  // Said in the database too while the reserve's room lasts (a SIGKILL may follow).
  write_metadata("rocprof.storage_error", failure_ + ": " + why);
}

void RocpdSink::close_failed(uint64_t end_ns) {
  quiet_ = true;
  in_txn_ = false;
  api_->exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
  bool ok = api_->exec(db_, "BEGIN;", nullptr, nullptr, nullptr) == sql::kOk;
  if (ok) {
    write_metadata("rocprof.storage_error", failure_);
    for (const auto& kv : late_metadata_) write_metadata(kv.first, kv.second);
    if (end_ns != 0) {
      auto* s = prepare("UPDATE \"rocpd_info_process{S}\" SET fini = ?, \"end\" = ? WHERE pid = ?");
      bind(s, 1, static_cast<int64_t>(end_ns));
      bind(s, 2, static_cast<int64_t>(end_ns));
      bind(s, 3, info_.pid);
      run(s);
      api_->finalize(s);
    }
    ok = api_->exec(db_, "COMMIT;", nullptr, nullptr, nullptr) == sql::kOk;
    if (!ok) api_->exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
  }
  if (!ok)
    std::fprintf(stderr, "rocprof: %s: the drop counts could not be stored either (%s)\n",
                 info_.path.c_str(), failure_.c_str());
  for (auto*& s : stmts_) {
    if (s) api_->finalize(s);
    s = nullptr;
  }
  // May fail for want of room: the .db and its -wal then stay a valid pair.
  api_->exec(db_, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;", nullptr, nullptr,
             nullptr);
  api_->close_v2(db_);
  db_ = nullptr;
}

// Room held back on the database's own filesystem (an unlinked file, so nothing is left
// behind whatever way the process ends) and given back when the disk fills: enough for the
// rollback, the failure and drop-count rows and the process's end time.
void RocpdSink::reserve_space() {
  constexpr off_t kReserve = 256 * 1024;
  std::string dir = info_.path;
  const auto slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::string tmpl = dir + "/.rocprof-reserve-XXXXXX";
    fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(tmpl.c_str());
  }
  if (fd < 0) return;
  if (::posix_fallocate(fd, 0, kReserve) != 0) {
    ::close(fd);
    return;
  }
  reserve_fd_ = fd;
}

}  // namespace rocprof
