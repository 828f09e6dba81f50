// The step keeper of bounded runs (step_keeper.hpp says what it keeps and why).
#include "step_keeper.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace rocprof {
namespace {

// ---- thresholds (docs/long-runs.md) ----------------------------------------------------
constexpr int64_t kWarmup = 3;                        // first steps kept whole (auto)
constexpr uint32_t kSlowestAuto = 5;                  // slowest steps kept whole (auto)
constexpr std::size_t kLag = 2;                       // later steps closed before one is decided
constexpr uint64_t kGpuGraceNs = 2'000'000'000;       // the host's lead before an idle GPU's steps
constexpr std::size_t kMaxOpen = 4096;                // steps waiting for GPU records, at most
constexpr std::size_t kMaxPending = 1u << 18;         // records waiting (32 MiB), at most
constexpr std::size_t kMaxPendingNoSteps = 1u << 14;  // before any step is found
constexpr std::size_t kWindow = 128;                  // typical steps in the running model
constexpr std::size_t kMinModel = 8;                  // steps before the model judges
constexpr double kMadK = 6.0;              // outlier: median + 6 robust sigmas (1.4826 MAD)
constexpr double kSlowRatio = 1.2;         // ... and 20 % above the median step
constexpr double kKernelRatio = 1.5;       // a kernel's time: 50 % above its median
constexpr int64_t kKernelMinNs = 20'000;   // ... and 20 µs more
constexpr double kMinExcessNs = 20'000;    // a slow step or its host time: 20 µs more at least
constexpr int64_t kBaselineEvery = 100;    // one typical step kept every 100 (auto)
constexpr std::size_t kBaselineKeep = 2;   // the latest 2 of them
constexpr std::size_t kLockRepeats = 8;    // an unnamed outermost range repeated: the step
constexpr double kIndexShare = 0.10;       // of --max-size, left for the close's indexes
constexpr int64_t kCheckEvery = 64;        // steps between size checks without new detail
constexpr std::size_t kMaxAnomalies = 64;  // anomalous steps kept whole at once (auto): the
                                           // least anomalous gives way to a newer, worse one
constexpr int kProtected = 3;              // slowest and warm-up steps: never evicted for the
                                           // summaries' room (the summaries of later steps go)

enum Reason : uint32_t {
  kWarm = 1u << 0,
  kBase = 1u << 1,
  kSlow = 1u << 2,
  kEvery = 1u << 3,
  kSlowStep = 1u << 4,
  kHost = 1u << 5,
  kExtra = 1u << 6,
  kKernTime = 1u << 7,
  kNewKernel = 1u << 8,
  kSync = 1u << 9,
  kPageable = 1u << 10,
};
constexpr uint32_t kAnomaly =
    kSlowStep | kHost | kExtra | kKernTime | kNewKernel | kSync | kPageable;
constexpr std::pair<uint32_t, const char*> kReasonNames[] = {{kSlow, "slowest"},
                                                             {kSlowStep, "slow step"},
                                                             {kHost, "host time"},
                                                             {kExtra, "extra kernels"},
                                                             {kKernTime, "kernel time"},
                                                             {kNewKernel, "new kernel"},
                                                             {kSync, "sync"},
                                                             {kPageable, "pageable copy"},
                                                             {kWarm, "warm-up"},
                                                             {kBase, "baseline"},
                                                             {kEvery, "every"}};

std::string key_of(const std::string& m) {
  std::size_t e = m.size();
  while (e > 0 && std::isdigit(static_cast<unsigned char>(m[e - 1]))) --e;
  if (e == m.size()) return m;
  while (e > 0 && std::strchr(" \t#:_-", m[e - 1]) != nullptr) --e;
  return e == 0 ? m : m.substr(0, e);
}

bool step_word(const std::string& key) {
  std::string low(key);
  for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return low.find("step") != std::string::npos || low.find("iter") != std::string::npos ||
         low.find("batch") != std::string::npos;
}

std::string json_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

struct Robust {
  double med = 0, sigma = 0;  // sigma: 1.4826 MAD
  bool ready = false;
};
Robust model(const std::deque<double>& w) {
  Robust r;
  if (w.size() < kMinModel) return r;
  std::vector<double> v(w.begin(), w.end());
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  r.med = *mid;
  for (double& x : v) x = std::fabs(x - r.med);
  std::nth_element(v.begin(), mid, v.end());
  r.sigma = 1.4826 * *mid;
  r.ready = true;
  return r;
}
void push(std::deque<double>& w, double v) {
  w.push_back(v);
  if (w.size() > kWindow) w.pop_front();
}

}  // namespace

bool parse_keep_policy(const std::string& text, KeepPolicy* out, std::string* error) {
  KeepPolicy p;
  const auto colon = text.find(':');
  const std::string mode = text.substr(0, colon);
  if (mode == "auto" && colon == std::string::npos) return *out = p, true;
  if ((mode == "slowest" || mode == "every") && colon != std::string::npos) {
    const std::string num = text.substr(colon + 1);
    char* end = nullptr;
    const unsigned long n = std::strtoul(num.c_str(), &end, 10);
    if (!num.empty() && *end == '\0' && std::isdigit(static_cast<unsigned char>(num[0])) &&
        n >= 1 && n <= 1'000'000) {
      p.mode = mode == "slowest" ? KeepPolicy::kSlowest : KeepPolicy::kEvery;
      p.n = static_cast<uint32_t>(n);
      return *out = p, true;
    }
  }
  *error = "--keep '" + text + "': expected auto, slowest:N or every:K (N, K from 1)";
  return false;
}

StepKeeper::StepKeeper(rocpd::Writer& writer, uint64_t max_bytes, KeepPolicy policy,
                       bool gpu_records, std::function<void(const Record&)> write,
                       std::function<const std::string&(uint32_t)> text,
                       std::function<int64_t(uint32_t)> site)
    : w_(writer),
      max_bytes_(max_bytes),
      policy_(policy),
      write_(std::move(write)),
      text_(text),
      figures_(std::move(text), std::move(site)),
      gpu_seen_(gpu_records) {
  const uint64_t reserve =
      writer.wal_bytes() + static_cast<uint64_t>(kIndexShare * max_bytes) + (64u << 10);
  budget_ = max_bytes > reserve ? max_bytes - reserve : 0;
}

bool StepKeeper::sync_name(uint32_t id) {
  auto it = sync_.find(id);
  if (it != sync_.end()) return it->second != 0;
  const std::string& t = text_(id);
  const bool s =
      t.find("Synchronize") != std::string::npos || t.find("synchronize") != std::string::npos;
  sync_.emplace(id, s ? 1 : 0);
  return s;
}

bool StepKeeper::is_step(const Record& r) {
  if (r.kind != RecordKind::kRegion || !(r.flags & kFlagMessage) ||
      (r.flags & (kFlagInstant | kFlagOpenAtExit)) || r.region.range_corr != 0 ||
      r.end <= r.start || r.start < decided_end_)
    return false;
  const std::string key = key_of(text_(r.region.message_id));
  if (!step_key_.empty()) return key == step_key_;
  const Step s{-1, r.region.message_id, r.tid, r.start, r.end};
  auto& c = candidates_[key];
  c.push_back(s);
  if (step_word(key) || c.size() >= kLockRepeats) {
    step_key_ = key;
    std::vector<Step> earlier(c.begin(), c.end() - 1);
    candidates_.clear();
    for (const Step& e : earlier) {
      auto pos = std::upper_bound(open_.begin(), open_.end(), e.start,
                                  [](uint64_t t, const Step& x) { return t < x.start; });
      open_.insert(pos, e);
    }
    return true;
  }
  if (candidates_.size() > 64) candidates_.clear();
  if (c.size() > kLockRepeats) c.erase(c.begin());
  return false;
}

void StepKeeper::take_step(const Record& r) {
  const Step s{-1, r.region.message_id, r.tid, r.start, r.end};
  auto pos = std::upper_bound(open_.begin(), open_.end(), s.start,
                              [](uint64_t t, const Step& x) { return t < x.start; });
  open_.insert(pos, s);
}

void StepKeeper::add(const Record* records, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const Record& r = records[i];
    figures_.see(r);
    switch (r.kind) {
      case RecordKind::kPmcValue:  // matched to its dispatch by the mapping: never a step's
      case RecordKind::kPcSample:
      case RecordKind::kThreadName:
      case RecordKind::kName:
      case RecordKind::kNone:
        write_(r);
        continue;
      case RecordKind::kKernelDispatch:
        gpu_seen_ = true;
        kernel_high_ = std::max(kernel_high_, r.end);
        break;
      case RecordKind::kMemoryCopy:
        gpu_seen_ = copies_seen_ = true;
        copy_high_ = std::max(copy_high_, r.end);
        break;
      default:
        cpu_high_ = std::max(cpu_high_, r.end);
        break;
    }
    if (is_step(r)) take_step(r);
    pending_.push_back(r);
  }
  // Kernels and copies come in buffers of their own (CUPTI): each kind's latest record says how
  // far that kind has come, and the GPU's records have all come up to the lower of the two.
  gpu_high_ = copies_seen_ ? std::min(kernel_high_, copy_high_) : kernel_high_;
  if (pending_.size() > kMaxPending) decide_ready(false);
}

void StepKeeper::decide() { decide_ready(false); }

void StepKeeper::decide_ready(bool all) {
  // Before any step: records wait a while (their step may still come), then go out as detail.
  if (step_key_.empty() && open_.empty()) {
    if (all || pending_.size() > kMaxPendingNoSteps) {
      std::vector<Record> out;
      out.swap(pending_);
      write_outside(out);
      fit();
    }
    return;
  }
  std::size_t ready = 0;
  while (ready < open_.size()) {
    const std::size_t after = open_.size() - ready - 1;  // closed steps after this one
    // GPU records of a step have come once one starting after it has; or, where the GPU is
    // idle, once the host has gone on for kGpuGraceNs (CUPTI flushes every 250 ms).
    const bool gpu_ok = !gpu_seen_ || (after > 0 && gpu_high_ >= open_[ready + 1].start) ||
                        (after > 0 && cpu_high_ > open_[ready + 1].start + kGpuGraceNs);
    // The energy counters (read every ~100 ms) past the step's end, for its energy.
    const bool energy_ok =
        figures_.energy_until(open_[ready].end) || cpu_high_ > open_[ready].end + kGpuGraceNs;
    const bool forced = open_.size() - ready > kMaxOpen || pending_.size() > kMaxPending;
    if (!(all || (after >= kLag && ((gpu_ok && energy_ok) || forced)))) break;
    ++ready;
  }
  if (ready == 0) return;
  // One pass over the waiting records: each to its step by start time, span [start, next).
  std::vector<uint64_t> starts(ready), ends(ready);
  for (std::size_t k = 0; k < ready; ++k) {
    starts[k] = open_[k].start;
    ends[k] = k + 1 < open_.size() ? open_[k + 1].start : open_[k].end;
  }
  const uint64_t limit = ends[ready - 1];
  std::vector<std::vector<Record>> per(ready);
  std::vector<Record> before, after_all, rest;
  for (const Record& r : pending_) {
    if (r.start >= limit) {
      (all ? after_all : rest).push_back(r);
    } else if (r.start < starts[0]) {
      before.push_back(r);
    } else {
      const auto k = static_cast<std::size_t>(
          std::upper_bound(starts.begin(), starts.end(), r.start) - starts.begin() - 1);
      per[k].push_back(r);
    }
  }
  pending_.swap(rest);
  write_late(before);
  for (std::size_t k = 0; k < ready; ++k) {
    decide(open_.front(), ends[k], per[k]);
    open_.pop_front();
  }
  if (!after_all.empty()) write_outside(after_all);
  fit();
}

void StepKeeper::write_late(std::vector<Record>& recs) {
  if (recs.empty()) return;
  if (steps_ == 0) {  // before the first step: the run's set-up
    write_outside(recs);
    return;
  }
  std::vector<Record> outside;
  for (const Record& r : recs) {
    auto it = kept_spans_.upper_bound(r.start);
    if (it != kept_spans_.begin()) {
      --it;
      if (r.start < it->second.first && kept_.count(it->second.second)) {
        const int64_t step = it->second.second;
        auto range = write_all({r});
        kept_[step].ranges.push_back(range);
        ++kept_[step].records;
        continue;
      }
    }
    ++records_late_;  // its step is summarised already: counted, not stored
  }
}

std::pair<rocpd::Writer::Marks, rocpd::Writer::Marks> StepKeeper::write_all(
    const std::vector<Record>& recs) {
  const rocpd::Writer::Marks before = w_.marks();
  for (const Record& r : recs) write_(r);
  return {before, w_.marks()};
}

void StepKeeper::write_outside(std::vector<Record>& recs) {
  if (recs.empty()) return;
  const auto range = write_all(recs);
  const int64_t chunk = next_chunk_--;
  Kept k;
  k.ranges.push_back(range);
  k.records = recs.size();
  k.score = static_cast<double>(-chunk);
  outside_records_ += recs.size();
  order_.insert(rank_of(chunk, k));
  kept_.emplace(chunk, std::move(k));
}

std::string StepKeeper::causes_of(uint32_t reasons) const {
  std::string out;
  for (const auto& [bit, name] : kReasonNames)
    if (reasons & bit) {
      if (!out.empty()) out += ", ";
      out += name;
      if (bit == kEvery) out += " " + std::to_string(policy_.n);
    }
  return out;
}

StepKeeper::Rank StepKeeper::rank_of(int64_t step, const Kept& k) const {
  if (step < 0) return {-1, k.score, step};
  int cls = 0;
  if (k.reasons & kEvery) cls = 1;
  if (k.reasons & kAnomaly) cls = 2;
  if (k.reasons & kSlow) cls = 3;
  if (k.reasons & kWarm) cls = 4;
  return {cls, k.score, step};
}

void StepKeeper::decide(const Step& s, uint64_t span_end, std::vector<Record>& recs) {
  const int64_t index = static_cast<int64_t>(steps_++);
  decided_end_ = std::max(decided_end_, span_end);
  if (steps_ == 1) first_start_ = s.start;
  int64_t kernels = 0, kernel_ns = 0, copies = 0, copy_bytes = 0, pageable = 0, pbytes = 0;
  int64_t syncs = 0, api = 0;
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  std::map<uint32_t, std::tuple<int64_t, int64_t, int64_t>> per_kernel;  // calls, total, max
  for (const Record& r : recs) {
    const int64_t d = r.end > r.start ? static_cast<int64_t>(r.end - r.start) : 0;
    if (r.kind == RecordKind::kKernelDispatch) {
      ++kernels;
      kernel_ns += d;
      busy.emplace_back(r.start, r.end);
      auto& [c, t, m] = per_kernel[r.name_id];
      ++c;
      t += d;
      m = std::max(m, d);
    } else if (r.kind == RecordKind::kMemoryCopy) {
      ++copies;
      copy_bytes += static_cast<int64_t>(r.copy.bytes);
      busy.emplace_back(r.start, r.end);
      if (r.copy.src_memory == static_cast<uint8_t>(MemoryKind::kPageable) ||
          r.copy.dst_memory == static_cast<uint8_t>(MemoryKind::kPageable)) {
        ++pageable;
        pbytes += static_cast<int64_t>(r.copy.bytes);
      }
    } else if (r.kind == RecordKind::kRegion && !(r.flags & kFlagMessage)) {
      ++api;
      if (sync_name(r.name_id)) ++syncs;
    }
  }
  std::sort(busy.begin(), busy.end());
  int64_t busy_ns = 0;
  uint64_t cs = 0, ce = 0;
  for (const auto& [a, b] : busy) {
    if (a > ce) {
      busy_ns += static_cast<int64_t>(ce - cs);
      cs = a;
      ce = b;
    } else {
      ce = std::max(ce, b);
    }
  }
  busy_ns += static_cast<int64_t>(ce - cs);
  const double dur = static_cast<double>(s.end - s.start);
  const double host = std::max(0.0, dur - static_cast<double>(busy_ns));

  // Judged against the typical steps so far (robust: one odd step moves no median).
  uint32_t reasons = 0;
  double score = 1;
  const Robust md = model(dur_), mh = model(host_), mk = model(kernels_), ms = model(syncs_),
               mp = model(pageable_), mb = model(pageable_bytes_);
  if (md.ready && dur > md.med + std::max(kMadK * md.sigma, kMinExcessNs) &&
      dur > kSlowRatio * md.med) {
    reasons |= kSlowStep;
    score = std::max(score, dur / std::max(md.med, 1.0));
  }
  if (mh.ready && md.ready && host > mh.med + std::max(kMadK * mh.sigma, kMinExcessNs) &&
      host - mh.med > (kSlowRatio - 1) * md.med)
    reasons |= kHost;
  if (mk.ready && kernels > mk.med + std::max(2.0, kMadK * mk.sigma)) {
    reasons |= kExtra;
    score = std::max(score, kernels / std::max(mk.med, 1.0));
  }
  if (ms.ready && syncs > ms.med + std::max(0.5, kMadK * ms.sigma)) reasons |= kSync;
  if (mp.ready && (pageable > mp.med + std::max(0.5, kMadK * mp.sigma) ||
                   pbytes > 2 * mb.med + kMadK * mb.sigma + 65536))
    reasons |= kPageable;
  for (const auto& [name, v] : per_kernel) {
    const double t = static_cast<double>(std::get<1>(v));
    auto it = kernel_ns_.find(name);
    if (it == kernel_ns_.end()) {
      if (index >= kWarmup && !seen_kernels_.empty() && !seen_kernels_.count(name))
        reasons |= kNewKernel;
      continue;
    }
    const Robust m = model(it->second);
    if (m.ready && t > m.med + kMadK * m.sigma && t > kKernelRatio * m.med &&
        t - m.med > kKernelMinNs) {
      reasons |= kKernTime;
      score = std::max(score, t / std::max(m.med, 1.0));
    }
  }
  if (!(reasons & kAnomaly)) {  // the model learns from typical steps only
    push(dur_, dur);
    push(host_, host);
    push(kernels_, static_cast<double>(kernels));
    push(syncs_, static_cast<double>(syncs));
    push(pageable_, static_cast<double>(pageable));
    push(pageable_bytes_, static_cast<double>(pbytes));
    for (auto& [name, w] : kernel_ns_)
      if (!per_kernel.count(name)) push(w, 0);
    for (const auto& [name, v] : per_kernel)
      push(kernel_ns_[name], static_cast<double>(std::get<1>(v)));
  }
  for (const auto& [name, v] : per_kernel) seen_kernels_.insert(name);

  // The policy: which reasons keep a step's records.
  uint32_t keep_mask = ~0u;
  const uint32_t n_slow = policy_.mode == KeepPolicy::kSlowest ? policy_.n
                          : policy_.mode == KeepPolicy::kAuto  ? kSlowestAuto
                                                               : 0;
  if (policy_.mode == KeepPolicy::kAuto) {
    if (index < kWarmup) reasons |= kWarm;
    if (!(reasons & kAnomaly) && index >= kWarmup && (index - kWarmup) % kBaselineEvery == 0)
      reasons |= kBase;
  } else if (policy_.mode == KeepPolicy::kSlowest) {
    keep_mask = kSlow;
  } else {
    keep_mask = kEvery;
    if (index % policy_.n == 0) reasons |= kEvery;
  }
  const auto d = static_cast<uint64_t>(dur);
  if (n_slow > 0 && (slowest_.size() < n_slow || d > slowest_.begin()->first)) {
    if (slowest_.size() >= n_slow) {
      const int64_t out = slowest_.begin()->second;
      slowest_.erase(slowest_.begin());
      drop_reason(out, kSlow);
    }
    slowest_.emplace(d, index);
    reasons |= kSlow;
  }
  const bool keep_it = (reasons & keep_mask) != 0 && !summaries_full_;
  const std::string causes = causes_of(reasons);
  const StepFigures::Figures fig = figures_.of(s.start, s.end, recs);
  if (summaries_full_) {
    ++summaries_dropped_;
  } else {
    w_.step_summary({index,
                     {s.name_id},
                     s.tid,
                     static_cast<int64_t>(s.start),
                     static_cast<int64_t>(s.end),
                     kernels,
                     kernel_ns,
                     busy_ns,
                     copies,
                     copy_bytes,
                     pageable,
                     syncs,
                     api,
                     static_cast<int64_t>(recs.size()),
                     keep_it ? 1 : 0,
                     causes,
                     fig.has_energy,
                     fig.has_memory,
                     fig.energy_j,
                     fig.mem_alloc_bytes,
                     fig.mem_peak_bytes});
    for (const auto& [name, v] : per_kernel)
      w_.step_kernel(index, {name}, std::get<0>(v), std::get<1>(v), std::get<2>(v));
    for (const StepFigures::Line& l : fig.lines)
      if (l.site != 0) w_.step_line(index, l.site, l.kernels, l.kernel_ns);
    // Transactions stay bounded when nothing but summaries is written (a burst drained at once
    // would otherwise be one transaction, spilled into a WAL outside the budget).
    if (w_.count_record()) {
      write_counts();  // a killed run's counts are those of its last commit
      w_.commit();
    }
  }
  if (keep_it) {
    keep(index, reasons, (reasons & kSlow) && !(reasons & kAnomaly) ? dur : score, recs.size(),
         write_all(recs));
    kept_spans_[s.start] = {span_end, index};
    ++steps_kept_;
    if (reasons & kBase) {
      baseline_.push_back(index);
      if (baseline_.size() > kBaselineKeep) {
        const int64_t old = baseline_.front();
        baseline_.pop_front();
        drop_reason(old, kBase);
      }
    }
    fit();
  } else {
    records_summarised_ += recs.size();
    if (++since_check_ >= kCheckEvery) fit();
  }
}

void StepKeeper::keep(int64_t step, uint32_t reasons, double score, uint64_t records,
                      const std::pair<rocpd::Writer::Marks, rocpd::Writer::Marks>& range) {
  Kept k;
  k.ranges.push_back(range);
  k.reasons = reasons;
  k.score = reasons & (kBase | kEvery | kWarm) && !(reasons & (kAnomaly | kSlow))
                ? static_cast<double>(step)
                : score;
  k.records = records;
  order_.insert(rank_of(step, k));
  kept_.emplace(step, std::move(k));
  // Too many anomalies (a noisy run): the least anomalous of them gives way.
  auto first = order_.lower_bound(Rank{2, -1e300, 0});
  std::size_t anomalies = 0;
  for (auto it = first; it != order_.end() && std::get<0>(*it) == 2; ++it) ++anomalies;
  if (anomalies > kMaxAnomalies) evict(std::get<2>(*first));
}

void StepKeeper::drop_reason(int64_t step, uint32_t reason) {
  auto it = kept_.find(step);
  if (it == kept_.end()) {
    return;
  }
  Kept& k = it->second;
  order_.erase(rank_of(step, k));
  k.reasons &= ~reason;
  const uint32_t keep_mask = policy_.mode == KeepPolicy::kAuto      ? ~0u
                             : policy_.mode == KeepPolicy::kSlowest ? uint32_t{kSlow}
                                                                    : uint32_t{kEvery};
  if (!(k.reasons & keep_mask)) {
    order_.insert(rank_of(step, k));
    evict(step);
    return;
  }
  order_.insert(rank_of(step, k));
  w_.step_detail(step, 1, causes_of(k.reasons));
}

void StepKeeper::evict(int64_t step) {
  auto it = kept_.find(step);
  if (it == kept_.end()) return;
  Kept& k = it->second;
  for (const auto& [a, b] : k.ranges) w_.delete_rows(a, b);
  order_.erase(rank_of(step, k));
  if (step < 0) {
    outside_evicted_ += k.records;
  } else {
    ++steps_evicted_;
    records_evicted_ += k.records;
    w_.step_detail(step, 0, causes_of(k.reasons));
  }
  kept_.erase(it);
}

void StepKeeper::fit() {
  since_check_ = 0;
  uint64_t used = w_.used_bytes();
  while (used > budget_ && !order_.empty() && std::get<0>(*order_.begin()) < kProtected) {
    evict(std::get<2>(*order_.begin()));
    used = w_.used_bytes();
  }
  if (used > budget_ && !summaries_full_) {
    summaries_full_ = true;
    std::fprintf(stderr,
                 "rocprof: --max-size %llu bytes: the step summaries alone fill it; the summaries "
                 "of later steps are not stored (counted in rocprof.bounded)\n",
                 static_cast<unsigned long long>(max_bytes_));
  }
}

void StepKeeper::finish() {
  if (finished_) return;
  finished_ = true;
  decide_ready(true);
  if (!pending_.empty()) {
    std::vector<Record> rest;
    rest.swap(pending_);
    write_outside(rest);
    fit();
  }
  if (steps_ == 0)
    std::fprintf(stderr,
                 "rocprof: --max-size: no step ranges were found (ROCTx ranges named step, iter "
                 "or batch, or one outermost name repeated); kept a plain size cap: %llu of "
                 "%llu records dropped, oldest first\n",
                 static_cast<unsigned long long>(outside_evicted_),
                 static_cast<unsigned long long>(outside_records_));
  if (steps_ != 0) {
    std::string slow;
    for (auto it = slowest_.rbegin(); it != slowest_.rend(); ++it)
      slow += (slow.empty() ? "" : ", ") + std::to_string(it->second);
    uint64_t whole = 0;
    for (const auto& [step, k] : kept_) whole += step >= 0;
    std::fprintf(stderr,
                 "rocprof: --max-size %llu bytes: %llu steps summarised, %llu kept whole "
                 "(slowest: %s); not stored: %llu records of summarised steps, %llu of steps "
                 "whose detail gave way, %llu that came after their step was summarised\n",
                 static_cast<unsigned long long>(max_bytes_),
                 static_cast<unsigned long long>(steps_ - summaries_dropped_),
                 static_cast<unsigned long long>(whole), slow.empty() ? "-" : slow.c_str(),
                 static_cast<unsigned long long>(records_summarised_),
                 static_cast<unsigned long long>(records_evicted_),
                 static_cast<unsigned long long>(records_late_));
  }
  w_.release_free_pages();
  write_counts();
}

void StepKeeper::write_counts() {
  uint64_t kept_now = 0;
  for (const auto& [step, k] : kept_) kept_now += step >= 0;
  const std::string json =
      "{\"max_size\":" + std::to_string(max_bytes_) + ",\"keep\":\"" +
      (policy_.mode == KeepPolicy::kAuto      ? std::string("auto")
       : policy_.mode == KeepPolicy::kSlowest ? "slowest:" + std::to_string(policy_.n)
                                              : "every:" + std::to_string(policy_.n)) +
      "\",\"step_name\":\"" + json_text(step_key_) + "\",\"steps\":" + std::to_string(steps_) +
      ",\"steps_with_detail\":" + std::to_string(kept_now) +
      ",\"steps_evicted\":" + std::to_string(steps_evicted_) +
      ",\"records_summarised\":" + std::to_string(records_summarised_) +
      ",\"records_evicted\":" + std::to_string(records_evicted_) +
      ",\"records_late\":" + std::to_string(records_late_) +
      ",\"outside_records\":" + std::to_string(outside_records_) +
      ",\"outside_evicted\":" + std::to_string(outside_evicted_) +
      ",\"summaries_dropped\":" + std::to_string(summaries_dropped_) + "}";
  w_.metadata("rocprof.bounded", json);
}

}  // namespace rocprof
