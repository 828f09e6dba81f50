#include "rocpd_mapping.hpp"

#include "rocprof/json.hpp"

namespace rocprof {
namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
    text.replace(p, from.size(), to);
  return text;
}

const char* const kAllocTypes[] = {"ALLOC", "FREE", "REALLOC", "RECLAIM"};
const char* const kAllocLevels[] = {"REAL", "VIRTUAL", "SCRATCH"};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

int64_t i64(uint64_t v) { return static_cast<int64_t>(v); }

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
                    info_.environment_json};
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

void Mapping::add_pmc(const PmcInfo&) { pmc_ = true; }

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
    out->pmc_events.push_back(PmcEventRow{event, r.pmc.pmc_id, r.pmc.value});
    return;
  }
  pmc_pending_[corr].push_back(PendingValue{r.pmc.pmc_id, r.pmc.value});
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

void Mapping::add_callsite(const CallsiteInfo& c) { line_info_[c.id] = c.line_info; }

EventRow Mapping::event(const Record& r, std::string_view extdata) {
  uint64_t stack = 0, parent = 0;
  uint32_t callsite = 0;
  switch (r.kind) {
    case RecordKind::kRegion:
      stack = r.region.stack_id;
      parent = r.region.parent_stack_id;
      break;
    case RecordKind::kKernelDispatch:
      stack = r.kernel.stack_id;
      callsite = r.kernel.callsite_id;
      break;
    case RecordKind::kMemoryCopy:
      stack = r.copy.stack_id;
      callsite = r.copy.callsite_id;
      break;
    case RecordKind::kMemoryAlloc:
      stack = r.alloc.stack_id;
      break;
    case RecordKind::kSample:
      stack = r.sample.stack_id;
      break;
    default:
      break;
  }
  EventRow e{next_event_id_++,      Id{r.category_id}, i64(stack), i64(parent),
             i64(r.correlation_id), kEmptyJson,        kEmptyJson, extdata};
  // GPU work launched from Python carries its call site (interned JSON list of frames,
  // innermost user frame first): call_stack is the list, line_info its first frame as the
  // producer gave it (CallsiteInfo).
  if (callsite != 0 && callsite <= strings_.size()) {
    e.call_stack = strings_[callsite - 1];
    const auto it = line_info_.find(callsite);
    if (it != line_info_.end()) e.line_info = it->second;
  }
  return e;
}

std::string_view Mapping::region_extdata(const Record& r) {
  std::string_view extdata = kEmptyJson;
  if (r.region.extdata_id != 0) {
    extdata = text(r.region.extdata_id);
  } else if (r.flags & kFlagMessage) {
    // ROCTx convention: the message travels in the event's extdata. Built once per distinct
    // message: ranges repeat their names, and this is the writer's hottest row.
    extdata = message_json(r.name_id);
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

std::pair<int64_t, bool> Mapping::track_for(uint32_t tid, uint32_t category_id) {
  const uint64_t key = (static_cast<uint64_t>(category_id) << 32) | tid;
  auto it = tracks_.find(key);
  if (it != tracks_.end()) return {it->second, false};
  const int64_t id = static_cast<int64_t>(tracks_.size()) + 1;
  tracks_.emplace(key, id);
  return {id, true};
}

const RecordRows& Mapping::record(const Record& r) {
  RecordRows& out = rows_;
  out.kind = r.kind;
  out.new_track.reset();
  out.pmc_events.clear();
  switch (r.kind) {
    case RecordKind::kRegion: {
      out.event = event(r, region_extdata(r));
      out.region = RegionRow{pid_, r.tid, i64(r.start), i64(r.end), Id{r.name_id}, out.event.id};
      break;
    }
    case RecordKind::kKernelDispatch: {
      const KernelData& k = r.kernel;
      // Registers are per kernel (rocpd_info_kernel_symbol); only dynamic shared memory varies
      // per dispatch, and only when non-zero is it worth bytes on every row (B5).
      std::string_view extdata = kEmptyJson;
      if (k.dynamic_shared != 0) {
        scratch_ = "{\"dynamic_shared_memory\":" + std::to_string(k.dynamic_shared) + "}";
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
                             Id{k.region_name_id},
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
      }
      out.event = event(r, kEmptyJson);
      out.copy = CopyRow{pid_,
                         r.tid,
                         i64(r.start),
                         i64(r.end),
                         Id{r.name_id},
                         c.dst_agent_id,
                         i64(c.dst_address),
                         memset ? std::nullopt : std::optional<int64_t>(c.src_agent_id),
                         i64(c.src_address),
                         i64(c.bytes),
                         c.queue_id,
                         c.stream_id,
                         Id{c.region_name_id},
                         out.event.id,
                         extdata};
      break;
    }
    case RecordKind::kMemoryAlloc: {
      const AllocData& a = r.alloc;
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
                           kEmptyJson};
      break;
    }
    case RecordKind::kSample: {
      const SampleData& p = r.sample;
      out.event = event(r, p.extdata_id ? std::string_view(text(p.extdata_id)) : kEmptyJson);
      int64_t track = static_cast<int64_t>(p.track_id);
      if (track == 0) {  // the sink's track per (thread, category)
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
    case RecordKind::kPmcValue:
      pmc_value(r, &out);
      break;
    case RecordKind::kNone:
      break;
  }
  return out;
}

}  // namespace rocpd
}  // namespace rocprof
