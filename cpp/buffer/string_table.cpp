#include "string_table.hpp"

#include <atomic>
#include <new>

#include "rocprof/exit_safe_tls.hpp"

namespace rocprof {

uint64_t StringTable::next_generation() {
  static std::atomic<uint64_t> g{1};
  return g.fetch_add(1);
}

uint32_t StringTable::intern(std::string_view s) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  storage_.emplace_back(s);
  const uint32_t id = static_cast<uint32_t>(storage_.size());
  ids_.emplace(std::string_view(storage_.back()), id);
  return id;
}

namespace {
constexpr std::size_t kLocalCacheMax = 1 << 16;
struct LocalCache {
  uint64_t generation = 0;
  std::unordered_map<std::string_view, uint32_t> ids;
};
// Not a plain thread_local: the cache is used from exit handlers (exit_safe_tls.hpp says why).
thread_local LocalCache* t_cache = nullptr;
}  // namespace

uint32_t StringTable::intern_cached(std::string_view s) {
  LocalCache& c = exit_safe_tls::get(t_cache);
  if (c.generation != generation_) {
    c.ids.clear();
    c.generation = generation_;
  }
  auto it = c.ids.find(s);
  if (it != c.ids.end()) return it->second;
  const uint32_t id = intern(s);
  // Programs that make a new string for every call (a message with a step number) would grow
  // each thread's copy of the table without bound: past kLocalCacheMax it starts over, and the
  // strings used again soon are found again after one locked lookup each.
  if (c.ids.size() >= kLocalCacheMax) c.ids = {};
  // The key must view the table's copy, not the caller's buffer, which may be reused.
  std::string_view stable;
  {
    std::lock_guard<std::mutex> g(mu_);
    stable = storage_[id - 1];
  }
  c.ids.emplace(stable, id);
  return id;
}

std::size_t StringTable::local_cache_size() { return t_cache != nullptr ? t_cache->ids.size() : 0; }

uint32_t StringTable::take_new(std::vector<std::string>& out) {
  std::lock_guard<std::mutex> g(mu_);
  const uint32_t first = static_cast<uint32_t>(taken_ + 1);
  for (; taken_ < storage_.size(); ++taken_) out.push_back(storage_[taken_]);
  return first;
}

std::string StringTable::get(uint32_t id) const {
  std::lock_guard<std::mutex> g(mu_);
  if (id == 0 || id > storage_.size()) return {};
  return storage_[id - 1];
}

std::size_t StringTable::size() const {
  std::lock_guard<std::mutex> g(mu_);
  return storage_.size();
}

void StringTable::reset_after_fork() {
  new (&mu_) std::mutex();
  taken_ = 0;  // the child's database is new: every string is written again
}

}  // namespace rocprof
