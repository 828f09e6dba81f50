#include "rocpd_sink.hpp"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "redact.hpp"
#include "rocpd_status.hpp"

namespace rocprof {

RocpdSink::~RocpdSink() {
  if (writer_.is_open()) close(0);
}

const std::string& RocpdSink::suffix() const { return map_ ? map_->suffix() : suffix_; }

bool RocpdSink::open(const SessionInfo& given, std::string* error) {
  SessionInfo info = given;
  redacted_options_ = redact::text(given.options_json, &info.options_json);
  redacted_command_ = info.redacted_command;
  redacted_environment_ = info.redacted_environment;
  redact_text_ = info.redact_text;
  map_ = std::make_unique<rocpd::Mapping>(info);
  KeepPolicy policy;
  if (info.max_size != 0) {
    if (!parse_keep_policy(info.keep, &policy, error)) return false;
    writer_.set_bounded(info.max_size);
  }
  if (!writer_.open(info.path, info.guid, map_->suffix(), info.guid_per_row, map_->pid(), error))
    return false;
  for (const auto& kv : map_->base_metadata()) writer_.metadata(kv.first, kv.second);
  writer_.metadata("rocprof.guid_column", writer_.guid_per_row() ? "stored" : "generated");
  write_redaction_counts();
  writer_.node(map_->node());
  writer_.process(map_->process());
  writer_.agent(map_->cpu_agent(), map_->pid());
  if (info.max_size != 0)
    keeper_ = std::make_unique<StepKeeper>(
        writer_, info.max_size, policy, info.gpu_records,
        [this](const Record& r) {
          if (!writer_.failure().empty()) return writer_.add_unstored(1);
          write_record(r);
          if (writer_.count_record()) writer_.commit();
        },
        [this](uint32_t id) -> const std::string& { return map_->text(id); },
        [this](uint32_t callsite) { return map_->site_event(callsite); });
  return writer_.begin_recording(error);
}

void RocpdSink::write_redaction_counts() {
  writer_.metadata("rocprof.redacted",
                   "{\"command\":" + std::to_string(redacted_command_) +
                       ",\"environment\":" + std::to_string(redacted_environment_) +
                       ",\"options\":" + std::to_string(redacted_options_) +
                       ",\"text\":" + std::to_string(redacted_text_) + ",\"text_redaction\":\"" +
                       (redact_text_ ? "on" : "off (--no-redact)") + "\"}");
}

void RocpdSink::write_strings(uint32_t first_id, const std::vector<std::string>& strings) {
  if (!writer_.is_open() || !writer_.failure().empty()) return;
  // Recorded text is cut here, where each string is written once, never on the producers'
  // hot path. Most strings hold nothing to cut and are written as they are.
  std::vector<std::string> changed;  // `strings` as written, once one of them is altered
  bool copying = false;
  const std::size_t before = redacted_text_;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    const uint32_t id = first_id + static_cast<uint32_t>(i);
    std::string alt;
    bool altered = false;
    if (redact_text_) {
      const std::size_t n = redact::text(strings[i], &alt);
      redacted_text_ += n;
      altered = n != 0;
    }
    const std::string& text = altered ? alt : strings[i];
    if (text.find(redact::kMark) != std::string::npos && !marked_.insert(text).second) {
      // Two texts cut to the same one (or a recorded text equal to a cut one) stay two rows.
      alt = text + " #" + std::to_string(id);
      marked_.insert(alt);
      altered = true;
    }
    if (altered && !copying) {
      changed.assign(strings.begin(), strings.begin() + static_cast<std::ptrdiff_t>(i));
      copying = true;
    }
    const std::string& out = altered ? alt : strings[i];
    writer_.string(id, out);
    // A bounded run keeps its transactions (and so its WAL) small however many strings come.
    if (keeper_ && writer_.count_record()) writer_.commit();
    if (copying) changed.push_back(out);
  }
  map_->add_strings(first_id, copying ? changed : strings);
  if (redacted_text_ != before) write_redaction_counts();
}

void RocpdSink::write_info(const InfoRow& row) {
  if (!writer_.is_open()) return;
  if (!writer_.failure().empty()) {
    // Drop counts must reach the database even now: kept for one last try at close.
    if (const auto* m = std::get_if<MetadataInfo>(&row)) writer_.late_metadata(m->tag, m->value);
    return;
  }
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, MetadataInfo>)
          writer_.metadata(v.tag, v.value);
        else if constexpr (std::is_same_v<T, ThreadInfo>) {
          threads_.insert(v.tid);
          writer_.thread(map_->thread(v));
        } else if constexpr (std::is_same_v<T, AgentInfo>)
          writer_.agent(v, map_->pid());
        else if constexpr (std::is_same_v<T, StreamInfo>)
          writer_.stream(v, map_->pid());
        else if constexpr (std::is_same_v<T, StackInfo>)
          writer_.event(map_->stack(v));
        else if constexpr (std::is_same_v<T, KernelSymbolInfo>)
          writer_.kernel_symbol(v, map_->pid());
        else if constexpr (std::is_same_v<T, CallsiteInfo>)
          write_callsite(v);
        else if constexpr (std::is_same_v<T, PmcInfo>)
          writer_.pmc(map_->pmc(v));
      },
      row);
}

void RocpdSink::write_callsite(CallsiteInfo c) {
  // A call site's frames are recorded text like any string (write_strings): cut the same way.
  if (redact_text_) {
    const std::size_t before = redacted_text_;
    for (std::string* text : {&c.site, &c.callers}) {
      std::string alt;
      if (const std::size_t n = redact::text(*text, &alt)) {
        redacted_text_ += n;
        *text = std::move(alt);
      }
    }
    if (redacted_text_ != before) write_redaction_counts();
  }
  const rocpd::Mapping::CallsiteRows rows = map_->callsite(c);
  if (rows.callers) writer_.event(*rows.callers);
  writer_.event(rows.site);
}

void RocpdSink::write_records(const Record* records, std::size_t n) {
  if (!writer_.is_open()) return;
  if (!writer_.failure().empty()) {
    writer_.add_unstored(n);
    return;
  }
  if (keeper_) {  // held per step, written (or summarised) as each step is decided
    for (std::size_t i = 0; i < n; ++i)
      last_record_ns_ = std::max(last_record_ns_, std::max(records[i].start, records[i].end));
    keeper_->add(records, n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Record& r = records[i];
    last_record_ns_ = std::max(last_record_ns_, std::max(r.start, r.end));
    if (writer_.failure().empty()) write_record(r);
    if (!writer_.failure().empty()) {  // this record and the rest of the batch
      writer_.add_unstored(n - i);
      return;
    }
    if (writer_.count_record()) writer_.commit();
  }
}

void RocpdSink::write_record(const Record& r) {
  // Every thread a record names gets its rocpd_info_thread row: GPU work is recorded by the
  // runtime's buffer thread for the thread that launched it (an autograd worker that records
  // nothing itself), and ROCm's views INNER-JOIN the thread, so a missing row hides the work.
  if (r.tid != 0 && threads_.insert(r.tid).second)
    writer_.thread(map_->thread(ThreadInfo{r.tid, r.start, 0, {}}));
  const rocpd::RecordRows& rows = map_->record(r);
  switch (rows.kind) {
    case RecordKind::kRegion:
      writer_.event(rows.event);
      writer_.region(rows.region);
      break;
    case RecordKind::kKernelDispatch:
      writer_.event(rows.event);
      writer_.kernel(rows.kernel);
      break;
    case RecordKind::kMemoryCopy:
      writer_.event(rows.event);
      writer_.copy(rows.copy);
      break;
    case RecordKind::kMemoryAlloc:
      writer_.event(rows.event);
      writer_.alloc(rows.alloc);
      break;
    case RecordKind::kSample:
      writer_.event(rows.event);
      if (rows.new_track) writer_.track(*rows.new_track);
      writer_.sample(rows.sample);
      break;
    case RecordKind::kCollective:
      writer_.event(rows.event);
      writer_.region(rows.region);
      for (const rocpd::ArgRow& a : rows.args) writer_.arg(a);
      break;
    case RecordKind::kThreadName:
      writer_.thread_name(rows.thread_name);
      break;
    case RecordKind::kName:
      writer_.name_object(rows.name);
      break;
    case RecordKind::kPcSample:
      writer_.event(rows.event);
      writer_.pc_sample(rows.pc_sample);
      break;
    case RecordKind::kPmcValue:  // its rows (if its dispatch is known) are in pmc_events
    case RecordKind::kNone:
      break;
  }
  // A counter sample's value, or per-dispatch values that waited for this dispatch.
  for (const rocpd::PmcEventRow& p : rows.pmc_events) writer_.pmc_event(p);
}

void RocpdSink::commit() {
  // Readers of a killed run's database say from when records may be missing.
  if (last_record_ns_ != 0 && writer_.is_open() && writer_.failure().empty())
    writer_.metadata(rocpd::kLastRecordTag, std::to_string(last_record_ns_));
  if (keeper_ && writer_.is_open() && writer_.failure().empty()) {
    keeper_->decide();
    keeper_->write_counts();
  }
  writer_.commit();
}

void RocpdSink::close(uint64_t end_ns) {
  if (!writer_.is_open()) return;
  if (keeper_) keeper_->finish();
  // Counter values that never met their dispatch are stored nowhere: say how many.
  if (const uint64_t n = map_->unmatched_pmc_values()) {
    if (writer_.failure().empty())
      writer_.metadata("rocprof.counters.unmatched_values", std::to_string(n));
    else
      writer_.late_metadata("rocprof.counters.unmatched_values", std::to_string(n));
  }
  writer_.close(end_ns != 0 ? std::optional<rocpd::ProcessEndRow>(map_->process_end(end_ns))
                            : std::nullopt);
  // Nothing is written after close: the mapping's copies (every string of the run, links by
  // correlation id) go back now, not when the process ends. The suffix stays for readers.
  suffix_ = map_->suffix();
  keeper_.reset();
  map_.reset();
  std::unordered_set<uint32_t>().swap(threads_);
}

}  // namespace rocprof
