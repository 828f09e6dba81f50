#include "rocpd_mapping.hpp"

#include "rocprof/json.hpp"

namespace rocprof {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
    text.replace(p, from.size(), to);
  return text;
}

namespace {

const char* const kAllocTypes[] = {"ALLOC", "FREE", "REALLOC", "RECLAIM"};
const char* const kAllocLevels[] = {"REAL", "VIRTUAL", "SCRATCH"};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

int64_t i64(uint64_t v) { return static_cast<int64_t>(v); }

const char* memory_kind_name(uint8_t kind) {
  static const char* const kNames[] = {"UNKNOWN", "PAGEABLE", "PINNED",
                                       "DEVICE",  "ARRAY",    "MANAGED"};
  return kind < 6 ? kNames[kind] : "UNKNOWN";
}

}  // namespace

std::string rocpd_suffix(const std::string& guid) { return "_" + replace_all(guid, "-", "_"); }

namespace rocpd {

Mapping::Mapping(const SessionInfo& info)
    : info_(info), suffix_(rocpd_suffix(info.guid)), pid_(info.pid), ppid_(info.ppid) {}

void Mapping::add_strings(uint32_t first_id, const std::vector<std::string>& strings) {
  if (strings_.size() < first_id - 1) strings_.resize(first_id - 1);
  strings_.resize(first_id - 1);
  strings_.insert(strings_.end(), strings.begin(), strings.end());
}

const std::string& Mapping::text(uint32_t id) const {
  static const std::string none;
  return id > 0 && id <= strings_.size() ? strings_[id - 1] : none;
}

// ---- session rows ----------------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> Mapping::base_metadata() const {
  std::vector<std::pair<std::string, std::string>> m = {
      {"schema_version", "3"}, {"uuid", suffix_}, {"guid", info_.guid}};
  m.insert(m.end(), info_.metadata.begin(), info_.metadata.end());
  m.emplace_back("rocprof.clock_domain", "CLOCK_BOOTTIME");
  // The CPU agent's core count (agent_info.csv's Cpu_Cores_Count), here and not in the agent's
  // extdata: ROCm's reader loads any agent extdata longer than "{}" as a whole rocprofiler agent.
  if (info_.cpu_cores != 0) m.emplace_back("rocprof.cpu_cores", std::to_string(info_.cpu_cores));
  m.emplace_back("rocprof.record_format_version", std::to_string(kRecordFormatVersion));
  m.emplace_back("rocprof.options", info_.options_json);
  m.emplace_back("rocprof.dropped_records", "0");
  return m;
}

NodeRow Mapping::node() const {
  return NodeRow{static_cast<int64_t>(fnv1a(info_.machine_id + info_.hostname) >> 1),
                 info_.machine_id.empty() ? info_.hostname : info_.machine_id,
                 info_.system_name,
                 info_.hostname,
                 info_.release,
                 info_.version,
                 info_.machine,
                 info_.domain_name};
}

ProcessRow Mapping::process() const {
  return ProcessRow{pid_,
                    ppid_,
                    pid_,
                    i64(info_.init_ns),
                    i64(info_.process_start_ns),
                    info_.command,
                    info_.environment_json,
                    info_.options_json};
}

AgentInfo Mapping::cpu_agent() const {
  AgentInfo cpu;
  cpu.id = kCpuAgentId;
  cpu.type = "CPU";
  cpu.name = cpu.model_name = cpu.product_name = info_.cpu_model;
  cpu.vendor_name = "CPU";
  return cpu;
}

ProcessEndRow Mapping::process_end(uint64_t end_ns) const {
  return ProcessEndRow{pid_, i64(end_ns), i64(end_ns)};
}

ThreadRow Mapping::thread(const ThreadInfo& t) const {
  // Thread id = the OS tid, as ROCm fills it.
  return ThreadRow{t.tid, ppid_, pid_, t.tid, t.name, i64(t.start), i64(t.end)};
}

EventRow Mapping::stack(const StackInfo& s) {
  return EventRow{next_event_id_++, Id{s.category_id}, i64(s.id), i64(s.parent_id), 0,
                  s.call_stack,     s.line_info,       kEmptyJson};
}

// ---- counters --------------------------------------------------------------------------

uint64_t Mapping::unmatched_pmc_values() const {
  uint64_t n = 0;
  for (const auto& kv : pmc_pending_) n += kv.second.size();
  return n;
}

int64_t Mapping::dispatch_event(uint64_t correlation_id) const {
  if (correlation_id == 0) return 0;
  const auto it = dispatch_event_.find(correlation_id);
  if (it != dispatch_event_.end()) return it->second;
  const auto& slot = recent_dispatch_[correlation_id & (kRecentDispatches - 1)];
  return slot.first == correlation_id ? slot.second : 0;
}

void Mapping::pmc_value(const Record& r, RecordRows* out) {
  pmc_ = true;  // a value ahead of its PmcInfo row still makes later dispatches findable
  const uint64_t corr = r.correlation_id;
  int64_t event = dispatch_event(corr);
  if (event == 0) event = dispatch_event(r.pmc.alt_correlation_id);
  if (event != 0) {
    out->pmc_events.push_back(PmcEventRow{event, pmc_id(r.pmc.pmc_key), r.pmc.value});
    return;
  }
  pmc_pending_[corr].push_back(PendingValue{pmc_id(r.pmc.pmc_key), r.pmc.value});
  if (r.pmc.alt_correlation_id != 0 && r.pmc.alt_correlation_id != corr)
    pmc_alias_[r.pmc.alt_correlation_id] = corr;
}

void Mapping::pmc_dispatch(uint64_t correlation_id, int64_t event_id, RecordRows* out) {
  dispatch_event_[correlation_id] = event_id;
  uint64_t key = correlation_id;
  auto it = pmc_pending_.find(key);
  if (it == pmc_pending_.end()) {
    const auto a = pmc_alias_.find(correlation_id);
    if (a == pmc_alias_.end()) return;
    key = a->second;
    pmc_alias_.erase(a);
    it = pmc_pending_.find(key);
    if (it == pmc_pending_.end()) return;
  }
  for (const PendingValue& v : it->second)
    out->pmc_events.push_back(PmcEventRow{event_id, v.pmc_id, v.value});
  pmc_pending_.erase(it);
}

// ---- records ---------------------------------------------------------------------------

const std::string& Mapping::message_json(uint32_t name_id) {
  if (name_id >= message_json_.size()) message_json_.resize(name_id + 1);
  std::string& json = message_json_[name_id];
  if (json.empty()) {
    json.assign("{\"message\":");
    json_escape_into(json, text(name_id));
    json.push_back('}');
  }
  return json;
}

Mapping::CallsiteRows Mapping::callsite(const CallsiteInfo& c) {
  // Every record launched from the site points at its node instead of carrying its own copy
  // of the frames (they were 200 B a kernel); the frames outward of the site (the training
  // loop, main, the launcher) are the same for most sites of a program and stored once.
  auto node = [&](int64_t id, int64_t parent, std::string_view frames) {
    return EventRow{id, Id{c.category_id}, id, parent, 0, frames, kEmptyJson, kEmptyJson};
  };
  CallsiteRows rows;
  int64_t parent = 0;
  if (!c.callers.empty()) {
    auto it = callers_.find(c.callers);
    if (it == callers_.end()) {
      it = callers_.emplace(c.callers, next_event_id_++).first;
      rows.callers = node(it->second, 0, it->first);
    }
    parent = it->second;
  }
  site_stack_.assign("[").append(c.site).append("]");
  const int64_t id = next_event_id_++;
  rows.site = node(id, parent, site_stack_);
  site_ref_[c.id] = "{\"site\":" + std::to_string(id) + "}";
  site_event_[c.id] = id;
  return rows;
}

int64_t Mapping::pmc_id(uint32_t key) {
  // A counter described twice (a backend restarted in the same session) keeps its first id.
  return pmc_ids_.emplace(key, static_cast<int64_t>(pmc_ids_.size()) + 1).first->second;
}

PmcRow Mapping::pmc(const PmcInfo& p) {
  pmc_ = true;
  return PmcRow{pmc_id(p.key), pid_, &p};
}

EventRow Mapping::event(const Record& r, std::string_view extdata) {
  // As ROCm's writer: stack_id is the record's own (internal) correlation id, so an API call
  // and the GPU work it caused share it. parent_stack_id is the innermost enclosing ROCTx
  // range's correlation id, which is that range's rocpd_region id (ROCm: the enclosing traced
  // call's); 0 when none. Samples keep their call-stack node in stack_id (rocprof-sys).
  uint64_t stack = r.correlation_id, parent = 0;
  uint32_t callsite = 0;
  switch (r.kind) {
    case RecordKind::kRegion:
      parent = r.region.range_corr;
      callsite = r.region.callsite_id;
      break;
    case RecordKind::kKernelDispatch:
      parent = r.kernel.range_corr;
      callsite = r.kernel.callsite_id;
      break;
    case RecordKind::kMemoryCopy:
      parent = r.copy.range_corr;
      callsite = r.copy.callsite_id;
      break;
    case RecordKind::kMemoryAlloc:
      parent = r.alloc.range_corr;
      callsite = r.alloc.callsite_id;
      break;
    case RecordKind::kSample:
      stack = r.sample.stack_id;
      break;
    default:
      break;
  }
  EventRow e{next_event_id_++,      Id{r.category_id}, i64(stack), i64(parent),
             i64(r.correlation_id), kEmptyJson,        kEmptyJson, extdata};
  // GPU work (and API calls) launched from Python carry their call site, stored once
  // (callsite()): call_stack holds {"site": <the site node's event id>} and line_info stays
  // empty; readers (rocpd's views, rocpd._schema.call_stack_sql/line_info_sql) give back the
  // frames and the site's frame.
  if (callsite != 0) {
    const auto it = site_ref_.find(callsite);
    if (it != site_ref_.end()) e.call_stack = it->second;
  }
  return e;
}

std::string_view Mapping::pc_extdata(const Record& r) {
  // The sampled wave's state, as rocprofv3's CSV columns carry it (Exec_Mask, Wave_Count,
  // Instruction_Type, Wave_Issued_Instruction); the mask as hex text, being 64-bit unsigned.
  const PcSampleData& p = r.pc;
  if (!(p.flags & (kPcSampleExecMask | kPcSampleWaveState))) return kEmptyJson;
  scratch_ = "{";
  if (p.flags & kPcSampleExecMask) {
    char mask[24];
    std::snprintf(mask, sizeof mask, "0x%016llx", static_cast<unsigned long long>(p.exec_mask));
    scratch_ += std::string("\"exec_mask\":\"") + mask + "\"";
  }
  if (p.flags & kPcSampleWaveState) {
    if (scratch_.size() > 1) scratch_ += ",";
    scratch_ += "\"wave_count\":" + std::to_string(p.wave_count) +
                ",\"wave_issued\":" + ((p.flags & kPcSampleIssued) ? "1" : "0");
    if (p.inst_type_id != 0) {
      scratch_ += ",\"inst_type\":";
      json_escape_into(scratch_, text(p.inst_type_id));
    }
  }
  scratch_ += "}";
  return scratch_;
}

std::string_view Mapping::region_extdata(const Record& r) {
  std::string_view extdata = kEmptyJson;
  if (r.region.extdata_id != 0) {
    extdata = text(r.region.extdata_id);
  } else if (r.flags & kFlagMessage) {
    // ROCTx convention: the region is named by the API function, the message travels in the
    // event's extdata. Built once per distinct message: ranges repeat their names, and this
    // is the writer's hottest row.
    extdata = message_json(r.region.message_id);
  }
  if (r.flags & kFlagOpenAtExit) {
    // Its end is the session's end, not the program's: say so where a reader looks.
    scratch_.assign(extdata);
    scratch_.pop_back();
    if (scratch_.size() > 1) scratch_.push_back(',');
    scratch_.append("\"open_at_exit\":true}");
    extdata = scratch_;
  }
  return extdata;
}

Id Mapping::region_name(uint32_t name_id, uint32_t range_message_id) const {
  // rocprofv3: the dispatch's (or copy's) own name; under --kernel-rename the message of the
  // innermost enclosing ROCTx range when there is one. Never NULL: ROCm's views INNER-JOIN it.
  return Id{info_.kernel_rename && range_message_id != 0 ? range_message_id : name_id};
}

std::pair<int64_t, bool> Mapping::track_for(uint32_t tid, uint32_t category_id) {
  const uint64_t key = (static_cast<uint64_t>(category_id) << 32) | tid;
  auto it = tracks_.find(key);
  if (it != tracks_.end()) return {it->second, false};
  const int64_t id = next_track_id_++;
  tracks_.emplace(key, id);
  return {id, true};
}

std::pair<int64_t, bool> Mapping::counter_track(uint32_t name_id) {
  auto it = counter_tracks_.find(name_id);
  if (it != counter_tracks_.end()) return {it->second, false};
  const int64_t id = next_track_id_++;
  counter_tracks_.emplace(name_id, id);
  return {id, true};
}

const RecordRows& Mapping::record(const Record& r) {
  RecordRows& out = rows_;
  out.kind = r.kind;
  out.new_track.reset();
  out.pmc_events.clear();
  out.args.clear();
  switch (r.kind) {
    case RecordKind::kRegion: {
      out.event = event(r, region_extdata(r));
      if (r.flags & kFlagInstant) {
        // A mark is an instant: ROCm stores it as a sample on its thread's track of the
        // domain (the track named by the category), not as a zero-length region.
        out.kind = RecordKind::kSample;
        const auto [id, is_new] = track_for(r.tid, r.category_id);
        if (is_new) out.new_track = TrackRow{id, pid_, r.tid, Id{r.category_id}};
        out.sample = SampleRow{id, i64(r.start), out.event.id, kEmptyJson};
        break;
      }
      // ROCTx ranges are keyed by their correlation id (>= 2^32, see markers.cpp), as ROCm
      // keys regions; what points at a range (parent_stack_id) finds it by primary key.
      // Other regions are numbered here, below 2^32, so the two never meet.
      const int64_t id = (r.flags & kFlagMessage) && r.correlation_id > UINT32_MAX
                             ? i64(r.correlation_id)
                             : next_region_id_++;
      out.region =
          RegionRow{id, pid_, r.tid, i64(r.start), i64(r.end), Id{r.name_id}, out.event.id};
      break;
    }
    case RecordKind::kKernelDispatch: {
      const KernelData& k = r.kernel;
      // Registers are per kernel (rocpd_info_kernel_symbol); only dynamic shared memory varies
      // per dispatch, and only when non-zero is it worth bytes on every row (B5).
      std::string_view extdata = kEmptyJson;
      if (k.dynamic_shared != 0 || k.graph_id != 0 || k.graph_node_id != 0) {
        // A graph replay's kernel: the graph's and node's ids (graph_node_id 0: a whole replay,
        // --graph-trace graph).
        scratch_ = "{";
        if (k.dynamic_shared != 0)
          scratch_ += "\"dynamic_shared_memory\":" + std::to_string(k.dynamic_shared);
        if (k.graph_id != 0 || k.graph_node_id != 0) {
          if (k.dynamic_shared != 0) scratch_ += ",";
          scratch_ += "\"graph_id\":" + std::to_string(k.graph_id);
          if (k.graph_node_id != 0)
            scratch_ += ",\"graph_node_id\":" + std::to_string(k.graph_node_id);
        }
        scratch_ += "}";
        extdata = scratch_;
      }
      out.event = event(r, kEmptyJson);
      out.kernel = KernelRow{pid_,
                             r.tid,
                             k.agent_id,
                             k.kernel_id,
                             i64(k.dispatch_id),
                             k.queue_id,
                             k.stream_id,
                             i64(r.start),
                             i64(r.end),
                             k.local_per_thread,
                             static_cast<int64_t>(k.static_shared) + k.dynamic_shared,
                             {k.block[0], k.block[1], k.block[2]},
                             {k.grid[0], k.grid[1], k.grid[2]},
                             region_name(r.name_id, k.region_name_id),
                             out.event.id,
                             extdata};
      if (r.correlation_id != 0) {
        recent_dispatch_[r.correlation_id & (kRecentDispatches - 1)] = {r.correlation_id,
                                                                        out.event.id};
        if (pmc_) pmc_dispatch(r.correlation_id, out.event.id, &out);
      }
      break;
    }
    case RecordKind::kMemoryCopy: {
      const CopyData& c = r.copy;
      const bool memset = r.flags & kFlagMemset;
      std::string_view extdata = kEmptyJson;
      if (memset) {
        scratch_ = "{\"memset_value\":" + std::to_string(c.value) + "}";
        extdata = scratch_;
      } else if (c.src_memory != 0 || c.dst_memory != 0) {
        // Only when the runtime said: a reader tells "pageable" from "not recorded".
        scratch_ = std::string("{\"src_memory\":\"") + memory_kind_name(c.src_memory) +
                   "\",\"dst_memory\":\"" + memory_kind_name(c.dst_memory) + "\"}";
        extdata = scratch_;
      }
      out.event = event(r, kEmptyJson);
      out.copy = CopyRow{
          pid_, r.tid, i64(r.start), i64(r.end), Id{r.name_id}, c.dst_agent_id, i64(c.dst_address),
          // A memset has no source: its device stands in, as ROCm's views
          // INNER-JOIN the source agent (NULL would hide the row).
          memset ? c.dst_agent_id : c.src_agent_id, i64(c.src_address), i64(c.bytes), c.queue_id,
          c.stream_id, region_name(r.name_id, c.region_name_id), out.event.id, extdata};
      break;
    }
    case RecordKind::kMemoryAlloc: {
      const AllocData& a = r.alloc;
      // A caching allocator's out-of-memory: what the driver said was free when the request
      // (the row's size) failed.
      std::string_view extdata = kEmptyJson;
      if (r.flags & kFlagAllocOom) {
        scratch_ = "{\"device_free\":" + std::to_string(a.device_free) + "}";
        extdata = scratch_;
      }
      out.event = event(r, kEmptyJson);
      out.alloc = AllocRow{pid_,
                           r.tid,
                           a.agent_id,
                           kAllocTypes[a.op & 3],
                           kAllocLevels[a.level < 3 ? a.level : 0],
                           i64(r.start),
                           i64(r.end),
                           i64(a.address),
                           i64(a.bytes),
                           /*queue_id=*/0,
                           a.stream_id,
                           out.event.id,
                           extdata};
      break;
    }
    case RecordKind::kSample: {
      const SampleData& p = r.sample;
      out.event = event(r, p.extdata_id ? std::string_view(text(p.extdata_id)) : kEmptyJson);
      int64_t track = static_cast<int64_t>(p.track_id);
      if (r.flags & kFlagCounter) {
        // rocprofiler-systems' layout for sampled counters (its rocpd writer; AMD SMI, CPU
        // frequency): one track per counter and device, named by the record, no thread; the
        // value in rocpd_pmc_event on the sample's own event, pointing at rocpd_info_pmc.
        const auto [id, is_new] = counter_track(r.name_id);
        track = id;
        if (is_new) out.new_track = TrackRow{id, pid_, std::nullopt, Id{r.name_id}};
        const auto pmc = pmc_ids_.find(p.pmc_key);
        if (pmc != pmc_ids_.end())
          out.pmc_events.push_back(PmcEventRow{out.event.id, pmc->second, p.value});
      } else if (track == 0) {  // the sink's track per (thread, category)
        const auto [id, is_new] = track_for(r.tid, r.category_id);
        track = id;
        if (is_new) out.new_track = TrackRow{id, pid_, r.tid, Id{r.category_id}};
      }
      out.sample = SampleRow{track, i64(r.start), out.event.id, kEmptyJson};
      break;
    }
    case RecordKind::kThreadName:
      out.thread_name = ThreadNameRow{text(r.name_id), r.tid};
      break;
    case RecordKind::kName:
      out.name = NameRow{r.name.target, i64(r.name.object), text(r.name_id)};
      break;
    case RecordKind::kPmcValue:
      pmc_value(r, &out);
      break;
    case RecordKind::kPcSample: {
      const PcSampleData& p = r.pc;
      out.event = event(r, kEmptyJson);
      // The CRC is an unsigned 64-bit value: stored as its two's-complement integer (SQLite
      // integers are signed); readers mask it back (rocpd.pc_sampling).
      out.pc_sample = PcSampleRow{
          pid_,
          p.agent_id,
          i64(r.correlation_id),
          i64(r.start),
          i64(r.end),
          Id{r.name_id},
          static_cast<int64_t>(p.code_object),
          p.function_index,
          i64(p.pc_offset),
          Id{p.instruction_id},
          Id{p.source_file_id},
          p.line != 0 ? std::optional<int64_t>(p.line) : std::nullopt,
          Id{p.stall_reason_id},
          (p.flags & kPcSampleNotIssued) ? 1 : 0,
          i64(p.samples),
          out.event.id,
          p.dispatch_id != 0 ? std::optional<int64_t>(i64(p.dispatch_id)) : std::nullopt,
          pc_extdata(r)};
      break;
    }
    case RecordKind::kCollective:
      collective(r, &out);
      break;
    case RecordKind::kNone:
      break;
  }
  return out;
}

}  // namespace rocpd
}  // namespace rocprof
