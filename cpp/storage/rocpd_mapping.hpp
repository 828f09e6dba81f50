// The one place that decides how the project's records (rocprof/record.hpp) and info rows
// (rocprof/info.hpp) become rocpd rows (docs/rocpd-schema.md): which value goes into which
// column, which ids are NULL, the extdata JSON, the rocpd_event row every record gets, track
// ids, the session's base rows and metadata. No SQLite and no OS here: RocpdWriter
// (rocpd_writer.hpp) writes the rows this returns, column for column.
//
// Column types: int64_t is written as an integer; Id (a string/row reference) as NULL when 0;
// std::optional as NULL when empty; std::string_view as text. Columns that are the same in
// every row of a database (nid = kNodeId, an empty extdata of a row that has none) are
// literals of the writer's statements and named here as constants.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rocprof/info.hpp"
#include "rocprof/record.hpp"
#include "sink.hpp"

namespace rocprof {

// "_" + guid with '-' replaced by '_' (rocpd-schema.md).
std::string rocpd_suffix(const std::string& guid);
// `text` with every `from` replaced by `to` (table suffixes, schema placeholders).
std::string replace_all(std::string text, const std::string& from, const std::string& to);

namespace rocpd {

inline constexpr int64_t kNodeId = 1;  // the database's one rocpd_info_node row
inline constexpr std::string_view kEmptyJson = "{}";

struct Id {  // a *_id column pointing at rocpd_string (or another row); 0 is NULL
  uint32_t value = 0;
};

// ---- session rows (rows_info.cpp, rows_meta.cpp) --------------------------------------
struct NodeRow {
  int64_t hash;
  std::string_view machine_id, system_name, hostname, release, version, hardware_name, domain_name;
};
struct ProcessRow {  // fini and end are 0 until the session's end (ProcessEndRow)
  int64_t id, ppid, pid, init, start;
  std::string_view command, environment;
  std::string_view extdata;  // the options the session ran with (ROCm: the tool's config)
};
struct ProcessEndRow {
  int64_t pid, fini, end;
};
struct ThreadRow {  // upsert: a later row keeps the stored name when its own is empty, and the
                    // stored end when its own is 0
  int64_t id, ppid, pid, tid;
  std::string_view name;
  int64_t start, end;
};

// ---- event rows (rows_events.cpp) -----------------------------------------------------
struct EventRow {
  int64_t id;
  Id category_id;
  int64_t stack_id, parent_stack_id, correlation_id;
  std::string_view call_stack, line_info, extdata;
};
struct RegionRow {
  int64_t id, pid, tid, start, end;
  Id name_id;
  int64_t event_id;
};
struct KernelRow {
  int64_t pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, end;
  int64_t private_segment_size, group_segment_size;
  int64_t workgroup_size[3], grid_size[3];
  Id region_name_id;
  int64_t event_id;
  std::string_view extdata;
};
struct CopyRow {
  int64_t pid, tid, start, end;
  Id name_id;
  int64_t dst_agent_id, dst_address;
  int64_t src_agent_id;  // a memset: its own device
  int64_t src_address, size, queue_id, stream_id;
  Id region_name_id;
  int64_t event_id;
  std::string_view extdata;
};
struct AllocRow {
  int64_t pid, tid, agent_id;
  const char* type;   // 'ALLOC', 'FREE', 'REALLOC', 'RECLAIM'
  const char* level;  // 'REAL', 'VIRTUAL', 'SCRATCH'
  int64_t start, end, address, size, queue_id, stream_id, event_id;
  std::string_view extdata;
};
struct TrackRow {
  int64_t id, pid;
  std::optional<int64_t> tid;  // NULL: a counter's track, no thread's (as rocprof-sys writes)
  Id name_id;
};
struct SampleRow {
  int64_t track_id, timestamp, event_id;
  std::string_view extdata;
};
struct PmcRow {  // rocpd_info_pmc: the PmcInfo's columns, plus its id and this process
  int64_t id, pid;
  const PmcInfo* info;
};
// rocpd_pmc_event: a counter sample's value on the sample's own event, or a per-dispatch
// counter value on its dispatch's event.
struct PmcEventRow {
  int64_t event_id, pmc_id;
  double value;
};
// rocpd_pc_sample: one PcSampleData record, strings as rocpd_string ids (0: NULL).
struct PcSampleRow {
  int64_t pid, agent_id, correlation_id, start, end;
  Id kernel_name_id;
  int64_t code_object, function_index, pc_offset;
  Id instruction_id, source_file_id;
  std::optional<int64_t> line;
  Id stall_reason_id;
  int64_t not_issued, count, event_id;  // not_issued: 1 for the subset counts (pc_sampling.hpp)
  std::optional<int64_t> dispatch_id;
  std::string_view extdata;  // the sampled wave's state (AMD), else {}
};

// rocpd_arg: one argument of an API call (collectives: capture/nccl/), as ROCm's writer
// stores the traced call's arguments: position, type, name, value as text.
struct ArgRow {
  int64_t event_id;
  int64_t position;
  std::string_view type, name;
  std::string value;
};
struct ThreadNameRow {  // a rename of an existing rocpd_info_thread row
  std::string_view name;
  int64_t tid;
};
struct NameRow {    // roctxNameHipDevice/HipStream/HsaAgent: the named row may come later
  uint32_t target;  // NameTarget
  int64_t object;
  std::string_view name;
};

// One record's rows: its event first, then the row of the record's table (a sample may open
// a new track, written between the two as before), then counter values that waited for this
// dispatch (or, for kPmcValue, the value itself once its dispatch is known). kind kNone:
// nothing to write.
struct RecordRows {
  RecordKind kind = RecordKind::kNone;
  EventRow event{};
  std::optional<TrackRow> new_track;
  std::vector<PmcEventRow> pmc_events;  // written after the record's own rows
  std::vector<ArgRow> args;             // kCollective: after its region (rocpd_arg)
  union {
    RegionRow region;
    KernelRow kernel;
    CopyRow copy;
    AllocRow alloc;
    SampleRow sample;
    ThreadNameRow thread_name;
    NameRow name;
    PcSampleRow pc_sample;
  };
  RecordRows() : region{} {}
};

// Stateful: it keeps the strings written so far (extdata JSON is built from them), the
// message JSON per ROCTx name, the call sites' line info, the tracks opened and the next
// event id. One per database.
class Mapping {
 public:
  explicit Mapping(const SessionInfo& info);

  const std::string& suffix() const { return suffix_; }

  // Strings first_id, first_id+1, ... (rocpd_string rows are id, text as given).
  void add_strings(uint32_t first_id, const std::vector<std::string>& strings);
  const std::string& text(uint32_t id) const;

  // Session rows, in the order they are written at open.
  std::vector<std::pair<std::string, std::string>> base_metadata() const;
  NodeRow node() const;
  ProcessRow process() const;
  AgentInfo cpu_agent() const;  // rocpd_info_agent row of the CPU (id kCpuAgentId)
  ProcessEndRow process_end(uint64_t end_ns) const;

  // Info rows. Agents, streams/queues and kernel symbols map column for column (their
  // fields carry rocpd's column names), plus nid and this process's pid.
  ThreadRow thread(const ThreadInfo& t) const;
  // Counter values whose dispatch never arrived (its kernel was filtered out, or its record
  // lost): stored nowhere, so counted (metadata at close).
  uint64_t unmatched_pmc_values() const;
  EventRow stack(const StackInfo& s);  // stack nodes share rocpd_event (no stack table in v3)
  // A call site's rocpd_event rows (kLaunchSiteCategory), written once: the site's node
  // (call_stack [site], parent_stack_id the callers' node, stack_id its own id) and, the first
  // time these callers are seen, the callers' node (call_stack the callers' list). Records
  // launched there then point at the site's node: call_stack {"site": <its event id>}.
  struct CallsiteRows {
    std::optional<EventRow> callers;
    EventRow site;
  };
  CallsiteRows callsite(const CallsiteInfo& c);
  // The rocpd_event id of a call site's node written by callsite() (0: none yet).
  int64_t site_event(uint32_t callsite) const {
    const auto it = site_event_.find(callsite);
    return it != site_event_.end() ? it->second : 0;
  }
  // ids 1, 2, ... in the order counters arrive; from the first one on, kernel dispatches are
  // remembered by correlation id so that per-dispatch values find their dispatch's event.
  PmcRow pmc(const PmcInfo& p);
  int64_t pid() const { return pid_; }

  // Records. The views returned point into the Mapping (or the strings): valid until the
  // next call.
  const RecordRows& record(const Record& r);

 private:
  EventRow event(const Record& r, std::string_view extdata);
  std::string_view region_extdata(const Record& r);
  std::string_view pc_extdata(const Record& r);
  const std::string& message_json(uint32_t name_id);
  std::pair<int64_t, bool> track_for(uint32_t tid, uint32_t category_id);
  Id region_name(uint32_t name_id, uint32_t range_message_id) const;
  std::pair<int64_t, bool> counter_track(uint32_t name_id);
  int64_t pmc_id(uint32_t key);  // a value may name its counter before the PmcInfo arrives
  void pmc_value(const Record& r, RecordRows* out);
  void pmc_dispatch(uint64_t correlation_id, int64_t event_id, RecordRows* out);
  void collective(const Record& r, RecordRows* out);  // rocpd_mapping_collective.cpp

  SessionInfo info_;
  std::string suffix_;
  int64_t pid_ = 0, ppid_ = 0;
  int64_t next_event_id_ = 1;
  int64_t next_region_id_ = 1;
  std::vector<std::string> strings_;              // id - 1 → text, for JSON extdata
  std::vector<std::string> message_json_;         // name id → {"message": ...}, built on first use
  std::unordered_map<uint64_t, int64_t> tracks_;  // (category, tid) → track id
  std::unordered_map<uint32_t, int64_t> counter_tracks_;  // track name id → track id
  int64_t next_track_id_ = 1;
  std::unordered_map<uint32_t, int64_t> pmc_ids_;       // PmcInfo::key → rocpd_info_pmc.id
  std::unordered_map<uint32_t, std::string> site_ref_;  // call site id → {"site": event id}
  std::unordered_map<uint32_t, int64_t> site_event_;    // call site id → event id
  std::unordered_map<std::string, int64_t> callers_;    // callers' list → their node's event id
  std::string site_stack_;                              // [site] of the last callsite()
  std::string scratch_;
  RecordRows rows_;
  // Counters (kPmcValue): off until the first PmcInfo. A value may arrive before its dispatch
  // (counters are read when the launch returns, kernel records when CUPTI flushes): it waits
  // in pmc_pending_ under its correlation id; pmc_alias_ maps its other id to that one.
  struct PendingValue {
    int64_t pmc_id;
    double value;
  };
  bool pmc_ = false;
  std::unordered_map<uint64_t, int64_t> dispatch_event_;  // correlation id → event id
  // The last dispatches by correlation id (direct-mapped, always kept: two stores a dispatch),
  // for a value that meets a dispatch written before the first PmcInfo arrived.
  static constexpr size_t kRecentDispatches = 1u << 16;
  std::vector<std::pair<uint64_t, int64_t>> recent_dispatch_ =
      std::vector<std::pair<uint64_t, int64_t>>(kRecentDispatches);
  int64_t dispatch_event(uint64_t correlation_id) const;
  std::unordered_map<uint64_t, std::vector<PendingValue>> pmc_pending_;
  std::unordered_map<uint64_t, uint64_t> pmc_alias_;
};

}  // namespace rocpd
}  // namespace rocprof
