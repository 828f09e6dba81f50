// Interned strings: each distinct string gets a stable 32-bit id (1, 2, ...) once.
//
// intern() takes a mutex only on a miss; callers on hot paths go through
// intern_cached(), which first looks in a thread-local map of string_views that point into
// this table's never-moving storage, so the steady state is lock-free and allocation-free.
// The drain thread copies out new strings with take_new() and writes them before the
// records that use them (a record is pushed only after its ids exist).
#pragma once
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rocprof {

class StringTable {
 public:
  uint32_t intern(std::string_view s);
  // Hot-path variant; `generation` invalidates thread-local caches of older tables.
  uint32_t intern_cached(std::string_view s);

  // Strings with id > last_taken, appended to out; returns the id of the first one.
  uint32_t take_new(std::vector<std::string>& out);
  std::string get(uint32_t id) const;
  std::size_t size() const;
  // Entries in the calling thread's cache of intern_cached() (bounded; see string_table.cpp).
  static std::size_t local_cache_size();

  // After fork() in the child: the mutex may have been held by a thread that no longer
  // exists; re-create it. Everything interned so far stays valid (ids are re-sent).
  void reset_after_fork();
  void lock() { mu_.lock(); }
  void unlock() { mu_.unlock(); }
  uint64_t generation() const { return generation_; }
  void rewind_taken() {
    std::lock_guard<std::mutex> g(mu_);
    taken_ = 0;
  }

 private:
  mutable std::mutex mu_;
  std::deque<std::string> storage_;  // deque: elements never move, views stay valid
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::size_t taken_ = 0;
  uint64_t generation_ = next_generation();
  static uint64_t next_generation();
};

}  // namespace rocprof
