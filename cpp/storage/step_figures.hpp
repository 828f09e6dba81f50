// Bounded runs: the figures of a step's summary that need more than the step's own records —
// the GPU energy it used (the device energy counters' samples, which come on their own clock),
// the device memory live at its peak (a running total across steps) — and the launch lines
// that put its kernels on the GPU. The step keeper (step_keeper.hpp) shows it every record as
// it arrives and asks for a step's figures when it decides the step. Drain thread only.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rocprof/record.hpp"

namespace rocprof {

class StepFigures {
 public:
  struct Line {
    int64_t site = 0;  // rocpd_event id of the call site's node
    int64_t kernels = 0, kernel_ns = 0;
  };
  struct Figures {
    bool has_energy = false, has_memory = false;
    double energy_j = 0;
    int64_t mem_alloc_bytes = 0;  // allocated during the step
    int64_t mem_peak_bytes = 0;   // the most live at once during the step
    std::vector<Line> lines;      // the top launch lines by kernel time, at most kTopLines
  };
  static constexpr std::size_t kTopLines = 3;

  // `text`: a string id's text; `site`: a call-site id's rocpd_event id (0: none stored).
  StepFigures(std::function<const std::string&(uint32_t)> text,
              std::function<int64_t(uint32_t)> site);
  // Every record as it arrives (energy samples are taken from the stream, not the step).
  void see(const Record& r);
  // The energy counters have come up to `t` (or there are none): a step ending at `t` can be
  // given its energy.
  bool energy_until(uint64_t t) const;
  // The figures of the step [start, end] whose records are `recs` (steps in order).
  Figures of(uint64_t start, uint64_t end, std::vector<Record>& recs);

 private:
  bool is_energy(uint32_t name_id);
  int block_kind(const Record& r);  // 1: an allocator block, 0: runtime (REAL), -1: other
  double energy_at(const std::deque<std::pair<uint64_t, double>>& s, uint64_t t) const;

  std::function<const std::string&(uint32_t)> text_;
  std::function<int64_t(uint32_t)> site_;
  std::unordered_map<uint32_t, int8_t> energy_names_;  // name id → is a device_energy track
  std::unordered_map<uint32_t, std::deque<std::pair<uint64_t, double>>> energy_;  // by track
  uint32_t block_category_ = 0;  // TORCH_ALLOCATOR_BLOCK's id, once seen
  bool blocks_seen_ = false, real_seen_ = false;
  int64_t live_ = 0;  // bytes live (allocator blocks, else runtime allocations) before the step
};

}  // namespace rocprof
