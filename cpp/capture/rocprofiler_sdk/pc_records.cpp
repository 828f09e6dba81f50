// rocprofiler-sdk's PC-sample records -> kPcSample records, and what names them (kernels by id
// or by PC, the dispatch ring, the sampler's enum names, the interval chosen for a GPU): all
// without an SDK call, so that test_pc_records.cpp checks it with records built from the real
// pc_sampling.h structs.
#include <algorithm>
#include <cctype>
#include <string>

#include "capture/context.hpp"
#include "capture/kernel_names.hpp"
#include "pc_sampling.hpp"

namespace rocprof::sdk {

// ---- configuration ----------------------------------------------------------------------

bool parse_method(const std::string& name, rocprofiler_pc_sampling_method_t* out) {
  if (name == "host_trap") return *out = ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP, true;
  if (name == "stochastic") return *out = ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC, true;
  return false;
}

bool parse_unit(const std::string& name, rocprofiler_pc_sampling_unit_t* out) {
  if (name == "time") return *out = ROCPROFILER_PC_SAMPLING_UNIT_TIME, true;
  if (name == "cycles") return *out = ROCPROFILER_PC_SAMPLING_UNIT_CYCLES, true;
  if (name == "instructions") return *out = ROCPROFILER_PC_SAMPLING_UNIT_INSTRUCTIONS, true;
  return false;
}

const char* method_name(rocprofiler_pc_sampling_method_t m) {
  switch (m) {
    case ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP:
      return "host_trap";
    case ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC:
      return "stochastic";
    default:
      return "unknown method";
  }
}

const char* unit_name(rocprofiler_pc_sampling_unit_t u) {
  switch (u) {
    case ROCPROFILER_PC_SAMPLING_UNIT_TIME:
      return "time";
    case ROCPROFILER_PC_SAMPLING_UNIT_CYCLES:
      return "cycles";
    case ROCPROFILER_PC_SAMPLING_UNIT_INSTRUCTIONS:
      return "instructions";
    default:
      return "unknown unit";
  }
}

namespace {

uint64_t nearest_power_of_two(uint64_t v, uint64_t lo, uint64_t hi) {
  uint64_t best = 0;
  for (uint64_t p = 1; p != 0; p <<= 1) {
    if (p < lo || p > hi) continue;
    const uint64_t d = p > v ? p - v : v - p, bd = best > v ? best - v : v - best;
    if (best == 0 || d < bd) best = p;
  }
  return best;
}

std::string offered(const std::vector<rocprofiler_pc_sampling_configuration_t>& configs) {
  std::string out;
  for (const auto& c : configs) {
    if (!out.empty()) out += ", ";
    out += std::string(method_name(c.method)) + " by " + unit_name(c.unit) + " (" +
           std::to_string(c.min_interval) + ".." + std::to_string(c.max_interval) + ")";
  }
  return out.empty() ? "no PC sampling" : out;
}

}  // namespace

bool choose_interval(const std::vector<rocprofiler_pc_sampling_configuration_t>& configs,
                     rocprofiler_pc_sampling_method_t method, rocprofiler_pc_sampling_unit_t unit,
                     uint64_t asked, uint64_t* interval, std::string* why) {
  const rocprofiler_pc_sampling_configuration_t* match = nullptr;
  bool method_found = false;
  for (const auto& c : configs) {
    if (c.method != method) continue;
    method_found = true;
    if (c.unit == unit) match = &c;
  }
  if (match == nullptr) {
    *why = method_found
               ? std::string("--pc-sampling-method ") + method_name(method) +
                     " does not take --pc-sampling-unit " + unit_name(unit) +
                     " on this GPU (it offers " + offered(configs) + ")"
               : std::string("this GPU has no ") + method_name(method) + " PC sampler (it offers " +
                     offered(configs) + "): choose another --pc-sampling-method";
    return false;
  }
  const uint64_t lo = match->min_interval, hi = match->max_interval;
  uint64_t v = asked;
  if (v == 0) {
    v = unit == ROCPROFILER_PC_SAMPLING_UNIT_TIME ? kDefaultTimeInterval : kDefaultCycleInterval;
    v = std::clamp(v, lo, std::max(lo, hi));
  } else if (v < lo || v > hi) {
    *why = "--pc-sampling-interval " + std::to_string(v) + " is outside this GPU's range for " +
           method_name(method) + " by " + unit_name(unit) + ": " + std::to_string(lo) + ".." +
           std::to_string(hi);
    return false;
  }
  if (match->flags == ROCPROFILER_PC_SAMPLING_CONFIGURATION_FLAGS_INTERVAL_POW2) {
    const uint64_t p = nearest_power_of_two(v, lo, hi);
    if (p != 0) v = p;
  }
  *interval = v;
  return true;
}

// ---- kernels ----------------------------------------------------------------------------

void Kernels::code_object(uint64_t id, uint64_t load_base, uint64_t load_size) {
  std::lock_guard<std::mutex> g(mu_);
  CodeObject& co = code_objects_[id];
  co.load_base = load_base;
  co.load_size = load_size;
  auto [first, last] = pending_.equal_range(id);
  for (auto it = first; it != last; ++it)
    if (it->second.first >= load_base) co.entries[it->second.first - load_base] = it->second.second;
  pending_.erase(id);
}

void Kernels::kernel(uint64_t kernel_id, uint64_t code_object_id, std::string_view name,
                     uint64_t entry) {
  std::string n = kernel_names::without_kd(name);
  std::lock_guard<std::mutex> g(mu_);
  kernels_[kernel_id] = {code_object_id, n};
  auto it = code_objects_.find(code_object_id);
  if (it == code_objects_.end()) {
    pending_.emplace(code_object_id, std::make_pair(entry, std::move(n)));
    return;
  }
  if (entry >= it->second.load_base)
    it->second.entries[entry - it->second.load_base] = std::move(n);
}

std::string Kernels::by_id(uint64_t kernel_id) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = kernels_.find(kernel_id);
  return it != kernels_.end() ? it->second.second : std::string();
}

std::string Kernels::by_pc(uint64_t code_object_id, uint64_t offset) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = code_objects_.find(code_object_id);
  if (it == code_objects_.end() || it->second.entries.empty()) return {};
  auto e = it->second.entries.upper_bound(offset);
  if (e == it->second.entries.begin()) return {};
  return std::prev(e)->second;
}

// ---- dispatch ring ----------------------------------------------------------------------

void DispatchRing::put(uint64_t sdk_dispatch, const DispatchInfo& d) noexcept {
  Slot& s = slots_[sdk_dispatch % kSize];
  s.key.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.dispatch.store(d.dispatch_id, std::memory_order_relaxed);
  s.correlation.store(d.correlation_id, std::memory_order_relaxed);
  s.kernel.store(d.kernel_id, std::memory_order_relaxed);
  s.agent.store(d.agent, std::memory_order_relaxed);
  s.key.store(sdk_dispatch, std::memory_order_release);
}

bool DispatchRing::get(uint64_t sdk_dispatch, DispatchInfo* out) const noexcept {
  if (sdk_dispatch == 0) return false;
  const Slot& s = slots_[sdk_dispatch % kSize];
  if (s.key.load(std::memory_order_acquire) != sdk_dispatch) return false;
  out->dispatch_id = s.dispatch.load(std::memory_order_relaxed);
  out->correlation_id = s.correlation.load(std::memory_order_relaxed);
  out->kernel_id = s.kernel.load(std::memory_order_relaxed);
  out->agent = s.agent.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return s.key.load(std::memory_order_relaxed) == sdk_dispatch;  // not rewritten meanwhile
}

// ---- names ------------------------------------------------------------------------------

std::string short_name(const char* sdk_name, std::string_view prefix, uint32_t value) {
  std::string_view s = sdk_name != nullptr ? sdk_name : "";
  if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
  if (s.empty()) return "value_" + std::to_string(value);
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

Vocabulary make_vocabulary(CaptureContext& c, Vocabulary::InstName inst,
                           Vocabulary::ReasonName reason) {
  Vocabulary v;
  for (uint32_t i = 0; i < ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_LAST; ++i) {
    const char* n =
        inst ? inst(static_cast<rocprofiler_pc_sampling_instruction_type_t>(i)) : nullptr;
    v.inst_types.push_back(c.intern(short_name(n, "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_", i)));
  }
  for (uint32_t i = 0; i < ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_LAST; ++i) {
    const char* n =
        reason ? reason(static_cast<rocprofiler_pc_sampling_instruction_not_issued_reason_t>(i))
               : nullptr;
    v.reasons.push_back(
        c.intern(short_name(n, "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_", i)));
  }
  v.issued = c.intern("issued");
  return v;
}

// ---- records ----------------------------------------------------------------------------

namespace {

// The fields both sample layouts share.
struct Common {
  rocprofiler_pc_t pc;
  uint64_t exec_mask, timestamp, dispatch_id;
};

Record base(CaptureContext& c, const Source& src, const Common& s, Totals* t) {
  DispatchInfo d;
  const bool known = src.dispatches != nullptr && src.dispatches->get(s.dispatch_id, &d);
  std::string name;
  if (known && d.kernel_id != 0 && src.kernels != nullptr) name = src.kernels->by_id(d.kernel_id);
  if (name.empty() && src.kernels != nullptr)
    name = src.kernels->by_pc(s.pc.code_object_id, s.pc.code_object_offset);
  if (name.empty()) {
    ++t->without_kernel;
    name = "(unknown kernel)";
  }
  Record r = make_record(RecordKind::kPcSample, s.timestamp, s.timestamp, 0, src.category_id,
                         known ? d.correlation_id : 0);
  r.name_id = c.intern(name);
  PcSampleData& p = r.pc;
  p.code_object = s.pc.code_object_id;
  p.pc_offset = s.pc.code_object_offset;
  p.samples = 1;
  p.agent_id = src.agent_id;
  p.dispatch_id = known ? d.dispatch_id : 0;
  if (p.dispatch_id == 0) ++t->without_dispatch;
  p.exec_mask = s.exec_mask;
  p.flags = kPcSampleExecMask;
  return r;
}

}  // namespace

void emit_records(CaptureContext& c, const Source& src, rocprofiler_record_header_t** headers,
                  size_t count, Totals* t) {
  ++t->deliveries;
  for (size_t i = 0; i < count; ++i) {
    const rocprofiler_record_header_t* h = headers[i];
    if (h == nullptr || h->category != ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING) {
      ++t->other;
      continue;
    }
    if (h->kind == ROCPROFILER_PC_SAMPLING_RECORD_HOST_TRAP_V0_SAMPLE) {
      const auto& s =
          *static_cast<const rocprofiler_pc_sampling_record_host_trap_v0_t*>(h->payload);
      Record r = base(c, src, Common{s.pc, s.exec_mask, s.timestamp, s.dispatch_id}, t);
      c.emit_waiting(r);
      ++t->samples;
    } else if (h->kind == ROCPROFILER_PC_SAMPLING_RECORD_STOCHASTIC_V0_SAMPLE) {
      const auto& s =
          *static_cast<const rocprofiler_pc_sampling_record_stochastic_v0_t*>(h->payload);
      Record r = base(c, src, Common{s.pc, s.exec_mask, s.timestamp, s.dispatch_id}, t);
      PcSampleData& p = r.pc;
      p.flags |= kPcSampleWaveState;
      p.wave_count = s.wave_count;
      if (src.names != nullptr) {
        p.inst_type_id = src.names->inst_type(s.inst_type);
        p.stall_reason_id =
            s.wave_issued ? src.names->issued : src.names->reason(s.snapshot.reason_not_issued);
      }
      if (s.wave_issued) p.flags |= kPcSampleIssued;
      c.emit_waiting(r);
      ++t->samples;
    } else if (h->kind == ROCPROFILER_PC_SAMPLING_RECORD_INVALID_SAMPLE) {
      ++t->invalid;
    } else {
      ++t->other;
    }
  }
}

}  // namespace rocprof::sdk
