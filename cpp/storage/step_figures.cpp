// A bounded run's per-step energy, memory and launch lines (step_figures.hpp).
#include "step_figures.hpp"

#include <algorithm>
#include <limits>

namespace rocprof {
namespace {
constexpr const char kEnergyTrack[] = "device_energy [";  // "device_energy [k]": GPU k's counter
constexpr const char kBlockCategory[] = "TORCH_ALLOCATOR_BLOCK";
}  // namespace

StepFigures::StepFigures(std::function<const std::string&(uint32_t)> text,
                         std::function<int64_t(uint32_t)> site)
    : text_(std::move(text)), site_(std::move(site)) {}

bool StepFigures::is_energy(uint32_t name_id) {
  auto [it, added] = energy_names_.try_emplace(name_id, 0);
  if (added) it->second = text_(name_id).rfind(kEnergyTrack, 0) == 0 ? 1 : 0;
  return it->second != 0;
}

int StepFigures::block_kind(const Record& r) {
  if (r.kind != RecordKind::kMemoryAlloc || r.alloc.op > 1) return -1;
  if (r.alloc.level == 0) return 0;
  if (r.alloc.level != 1) return -1;
  if (block_category_ == 0 && text_(r.category_id) == kBlockCategory)
    block_category_ = r.category_id;
  return block_category_ != 0 && r.category_id == block_category_ ? 1 : -1;
}

void StepFigures::see(const Record& r) {
  if (r.kind == RecordKind::kSample && (r.flags & kFlagCounter) && is_energy(r.name_id)) {
    auto& s = energy_[r.name_id];
    if (s.empty() || r.start > s.back().first) s.emplace_back(r.start, r.sample.value);
    return;
  }
  const int k = block_kind(r);
  if (k == 1) blocks_seen_ = true;
  if (k == 0) real_seen_ = true;
}

bool StepFigures::energy_until(uint64_t t) const {
  for (const auto& [track, s] : energy_)
    if (s.empty() || s.back().first < t) return false;
  return true;
}

double StepFigures::energy_at(const std::deque<std::pair<uint64_t, double>>& s, uint64_t t) const {
  // The cumulative counter at t: linear between the samples around it (a counter that updates
  // every ~100 ms spreads its step over the time since the last update), held past the ends.
  auto it = std::lower_bound(
      s.begin(), s.end(), t,
      [](const std::pair<uint64_t, double>& p, uint64_t x) { return p.first < x; });
  if (it == s.end()) return s.back().second;
  if (it == s.begin() || it->first == t) return it->second;
  const auto& [t1, e1] = *it;
  const auto& [t0, e0] = *(it - 1);
  return e0 + (e1 - e0) * static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
}

StepFigures::Figures StepFigures::of(uint64_t start, uint64_t end, std::vector<Record>& recs) {
  Figures f;
  // Energy: each GPU's counter over [start, end]; samples before the step's start (one kept
  // for the interpolation) are no longer needed, since steps are decided in order.
  for (auto& [track, s] : energy_) {
    if (s.empty()) continue;
    f.has_energy = true;
    f.energy_j += std::max(0.0, energy_at(s, end) - energy_at(s, start));
    while (s.size() > 2 && s[1].first <= start) s.pop_front();
  }
  // Memory: the allocator's blocks where it reports them, else the runtime's allocations.
  const int kind = blocks_seen_ ? 1 : real_seen_ ? 0 : -1;
  std::unordered_map<uint32_t, Line> by_site;
  std::vector<std::pair<uint64_t, int64_t>> deltas;
  for (const Record& r : recs) {
    if (r.kind == RecordKind::kKernelDispatch && r.kernel.callsite_id != 0) {
      Line& l = by_site[r.kernel.callsite_id];
      ++l.kernels;
      l.kernel_ns += r.end > r.start ? static_cast<int64_t>(r.end - r.start) : 0;
    } else if (kind >= 0 && block_kind(r) == kind) {
      const auto bytes = static_cast<int64_t>(r.alloc.bytes);
      deltas.emplace_back(r.start, r.alloc.op == 0 ? bytes : -bytes);
      if (r.alloc.op == 0) f.mem_alloc_bytes += bytes;
    }
  }
  if (kind >= 0) {
    f.has_memory = true;
    std::stable_sort(deltas.begin(), deltas.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    int64_t peak = live_;
    for (const auto& [t, d] : deltas) peak = std::max(peak, live_ += d);
    f.mem_peak_bytes = std::max<int64_t>(peak, 0);
  }
  for (auto& [callsite, l] : by_site) {
    l.site = site_(callsite);
    f.lines.push_back(l);
  }
  std::sort(f.lines.begin(), f.lines.end(), [](const Line& a, const Line& b) {
    return a.kernel_ns != b.kernel_ns ? a.kernel_ns > b.kernel_ns : a.site < b.site;
  });
  if (f.lines.size() > kTopLines) f.lines.resize(kTopLines);
  return f;
}

}  // namespace rocprof
