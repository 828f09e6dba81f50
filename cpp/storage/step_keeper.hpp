// Bounded runs (rocprof run --max-size SIZE --keep POLICY; docs/long-runs.md): records are held
// per step until the step is decided, every step gets its summary row (rocprof_step_summary,
// rocprof_step_kernels), and only the steps that matter keep their records: the first steps
// (warm-up), a rolling baseline of typical steps, the slowest, and the anomalous ones (outliers
// against a running median/MAD of step time, host time, kernel counts and per-kernel times;
// new kernels, extra syncs, pageable copies). Detail of steps that stop qualifying, or that the
// size budget cannot hold, is deleted by rowid ranges, and its pages reused.
//
// Steps are the outermost ROCTx ranges whose name (less a trailing number) says step, iter or
// batch, else the first outermost name repeated kLockRepeats times. A step is decided once
// kLag later steps have closed and, when GPU records are seen, GPU records up to its span's end
// have arrived (CUPTI delivers them late), or when too many wait. Without steps the keeper is
// a plain size cap: records go out in chunks and the oldest chunk is deleted first.
//
// Runs on the drain thread only (the sink's caller): no locks.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rocpd_writer.hpp"
#include "rocprof/record.hpp"
#include "step_figures.hpp"

namespace rocprof {

struct KeepPolicy {
  enum Mode { kAuto, kSlowest, kEvery } mode = kAuto;
  uint32_t n = 5;  // slowest:N; every:K
};
// "auto", "slowest:N", "every:K"; false with *error one line.
bool parse_keep_policy(const std::string& text, KeepPolicy* out, std::string* error);

class StepKeeper {
 public:
  // `write`: one record through the mapping into the writer; `text`: a string id's text;
  // `site`: a call site id's rocpd_event id (its node, written when the site was named).
  // `gpu_records`: GPU records are traced, so steps wait for them from the first one on.
  StepKeeper(rocpd::Writer& writer, uint64_t max_bytes, KeepPolicy policy, bool gpu_records,
             std::function<void(const Record&)> write,
             std::function<const std::string&(uint32_t)> text,
             std::function<int64_t(uint32_t)> site);
  void add(const Record* records, std::size_t n);
  // Decides the steps whose records have all come (the sink's commit, after a whole drain: GPU
  // records reach the writer through several threads' buffers, in no order between them).
  void decide();
  // Decides every waiting step (the session's end) and writes the counts.
  void finish();
  // rocprof.bounded.* metadata rows: what was kept, summarised and deleted.
  void write_counts();

 private:
  struct Step {
    int64_t index = -1;
    uint32_t name_id = 0;
    uint32_t tid = 0;
    uint64_t start = 0, end = 0;
  };
  struct Kept {  // a step (or an outside chunk: index < 0) whose records are in the tables
    std::vector<std::pair<rocpd::Writer::Marks, rocpd::Writer::Marks>> ranges;
    uint32_t reasons = 0;
    double score = 0;
    uint64_t records = 0;
    std::string causes;
  };
  using Rank = std::tuple<int, double, int64_t>;  // eviction order: class, score, step

  bool is_step(const Record& r);
  void take_step(const Record& r);
  void decide_ready(bool all);
  void decide(const Step& s, uint64_t span_end, std::vector<Record>& recs);
  void write_outside(std::vector<Record>& recs);
  void write_late(std::vector<Record>& recs);
  std::pair<rocpd::Writer::Marks, rocpd::Writer::Marks> write_all(const std::vector<Record>& r);
  void keep(int64_t step, uint32_t reasons, double score, uint64_t records,
            const std::pair<rocpd::Writer::Marks, rocpd::Writer::Marks>& range);
  void drop_reason(int64_t step, uint32_t reason);
  void evict(int64_t step);
  void fit();
  Rank rank_of(int64_t step, const Kept& k) const;
  std::string causes_of(uint32_t reasons) const;
  bool sync_name(uint32_t name_id);

  rocpd::Writer& w_;
  uint64_t max_bytes_, budget_;
  KeepPolicy policy_;
  std::function<void(const Record&)> write_;
  std::function<const std::string&(uint32_t)> text_;
  StepFigures figures_;  // energy, memory and launch lines per step

  std::vector<Record> pending_;  // records not yet given to a step (arrival order)
  std::deque<Step> open_;        // closed step ranges not yet decided, by start
  int64_t next_index_ = 0;       // the next step's index
  uint64_t decided_end_ = 0;     // records starting before this belong to decided steps
  std::map<uint64_t, std::pair<uint64_t, int64_t>> kept_spans_;  // start → (span end, step)
  uint64_t first_start_ = 0;
  bool gpu_seen_ = false;
  uint64_t gpu_high_ = 0;  // GPU records have come up to here: the lower of the two below
  uint64_t kernel_high_ = 0, copy_high_ = 0;  // latest end of a kernel, of a copy received
  bool copies_seen_ = false;
  uint64_t cpu_high_ = 0;  // latest end of any other record received

  // Step detection: the locked step name (key text), candidates before the lock.
  std::string step_key_;
  std::unordered_map<std::string, std::vector<Step>> candidates_;
  std::unordered_map<uint32_t, int8_t> sync_;  // API name id → waits for the GPU

  // The running robust model: the last kWindow typical values of each figure.
  std::deque<double> dur_, host_, kernels_, syncs_, pageable_, pageable_bytes_;
  std::unordered_map<uint32_t, std::deque<double>> kernel_ns_;  // per kernel name
  std::unordered_set<uint32_t> seen_kernels_;
  std::multiset<std::pair<uint64_t, int64_t>> slowest_;  // (duration, step), at most N

  std::map<int64_t, Kept> kept_;
  std::set<Rank> order_;
  std::deque<int64_t> baseline_;
  int64_t next_chunk_ = -1;  // outside chunks: -1, -2, ...
  std::deque<int64_t> chunks_;

  // Counts (rocprof.bounded.*).
  uint64_t steps_ = 0, steps_kept_ = 0, steps_evicted_ = 0, records_summarised_ = 0;
  uint64_t records_evicted_ = 0, records_late_ = 0, summaries_dropped_ = 0;
  uint64_t outside_records_ = 0, outside_evicted_ = 0;
  int64_t since_check_ = 0;  // steps decided since the last size check
  bool summaries_full_ = false, finished_ = false;
};

}  // namespace rocprof
