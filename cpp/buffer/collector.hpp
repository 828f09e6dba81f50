// Per-thread rings → one drain thread → a Sink.
//
// Producers call emit(): the record goes into the calling thread's ring (registered on the
// thread's first record — the only allocation and the only lock a producer ever takes).
// The drain thread wakes every flush interval, moves all rings' records, new strings and
// queued info rows into the sink, and commits at least every commit interval. Drops (full
// rings, sources that report their own) are counted and written to metadata.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rocprof/info.hpp"
#include "rocprof/record.hpp"
#include "storage/sink.hpp"
#include "string_table.hpp"
#include "thread_buffer.hpp"
#include "tsc_map.hpp"

namespace rocprof {

struct CollectorOptions {
  uint32_t ring_capacity = 1u << 14;  // records per chunk of a thread's buffer (2 MiB)
  // All threads' buffers together grow up to this much in a burst; past it records are
  // dropped and counted (cause "buffer_budget"). Why 2 GiB: see README "Overflow".
  uint64_t buffer_budget_bytes = 2ull << 30;
  uint32_t flush_interval_ms = 20;
  uint32_t commit_interval_ms = 250;  // a SIGKILL loses at most ~this much
  bool open_lazily = false;           // fork children: create the file on first data
  // Whether each producing thread gets a thread row (its tid, start, end). Off where the
  // database is another process's (session/other_process.hpp): the producer is ours, and the
  // records name their threads of that process with ThreadInfo rows of their own.
  bool announce_producers = true;
  // Python children: the file is claimed at start (prepare_output: its name, the run
  // manifest), the schema written by the drain thread while the program starts. A sink that
  // fails there says so on stderr instead of failing start().
  bool open_on_drain_thread = false;
  // OS facts, gathered by the session (session/os_facts.hpp) and handed in, so neither the
  // collector nor the sink reads /proc or touches folders. Either may be empty (tests).
  // A new thread's row (ThreadInfo with no name, not ended) is named with thread_name(tid).
  std::function<std::string(uint32_t tid)> thread_name;
  // Called with the database path just before the sink opens it; settles the file's name
  // (it may change *path) or returns false with *error (then nothing is recorded).
  std::function<bool(std::string* path, std::string* error)> prepare_output;
  // Called when the sink could not create the database prepare_output made room for.
  std::function<void(const std::string& path)> abandon_output;
  // Called on the drain thread when the sink has closed the database complete.
  std::function<void(const std::string& path)> output_complete;
  // Called once, just before the last commit of a stop: records producers made after the stop
  // began, which no buffer took (counted, cause "after_stop"); the count ends there.
  std::function<uint64_t()> take_late_records;
  // Records flagged kFlagSiteKey (a caching allocator's action, made with the allocator's lock
  // held): the call-site id of alloc.site_key, asked on the drain thread. wait=false never
  // waits and sets *pending when the launch sites' resolver has not named the key yet: the
  // record is held for a later drain (see resolve_sites). Unset: they keep no line.
  std::function<uint32_t(uint64_t key, bool wait, bool* pending)> resolve_site;
};

class Collector {
 public:
  Collector(std::unique_ptr<Sink> sink, SessionInfo info, StringTable& strings,
            CollectorOptions opts);
  ~Collector();

  // Opens the sink (unless lazy) and starts the drain thread.
  bool start(std::string* error);
  // Drains everything, closes the sink, joins the drain thread. With a deadline (CLOCK_BOOTTIME
  // ns; a fatal signal allows the process only so long), the drain stops there: what is still
  // buffered then is counted (cause "stop_deadline"), stored in metadata and said on stderr
  // before the database is closed, since the process may die while closing it.
  void stop(uint64_t drain_deadline_ns = 0);

  // Producer side: the calling thread's buffer, found through a thread-local pointer that is
  // checked against this collector's generation (a new session or fork starts clean).
  bool emit(const Record& r) noexcept {
    ThreadBuffer* b = thread_buffer();
    return b != nullptr && b->ring.push(r);
  }
  ThreadBuffer* thread_buffer() noexcept;
  void add_info(InfoRow row);
  void add_drops(const std::string& source, uint64_t n);
  // Session end: a range still open (a push never popped, a start never stopped), closed at
  // the end time by its producer module and flagged kFlagOpenAtExit. Stored with the last
  // drain and counted (rocprof.ranges_open_at_exit); not a lost record.
  void add_closed_at_exit(const Record& r);
  // Every live thread's buffer, under the registry lock (session end, tests).
  template <class Fn>
  void for_each_buffer(Fn&& fn) {
    std::lock_guard<std::mutex> g(registry_mu_);
    for (ThreadBuffer* b : buffers_) fn(*b);
  }
  // Wakes the drain thread and waits until everything emitted before the call is committed.
  void flush();

  uint64_t dropped_total() const;
  const ChunkPool& pool() const { return *pool_; }
  uint64_t records_written() const { return records_written_.load(); }
  const SessionInfo& info() const { return info_; }
  StringTable& strings() { return strings_; }

  // fork() support: prepare takes every lock so no other thread holds one across fork;
  // the child abandons the parent's drain thread and sink without touching them.
  void before_fork();
  void after_fork_parent();
  void after_fork_child();  // leaves the collector dead; the session builds a new one

 private:
  ThreadBuffer* register_thread();
  // ROCTx records stamped with the CPU's counter (kFlagTscTime) to CLOCK_BOOTTIME, in place.
  void to_boottime(std::vector<Record>& records);
  // kFlagSiteKey records' launch-site keys to call-site ids (opts_.resolve_site), in place; a
  // record whose key the resolver has not reached yet moves to held_sites_ for the next drain
  // (the resolver needs the GIL, which the program may hold for a while), at most
  // kSiteHoldDrains drains, and never past a flush or the stop (final).
  void resolve_sites(std::vector<Record>& records, bool final);
  static constexpr uint32_t kSiteHoldDrains = 250;  // ~5 s at the 20 ms drain interval
  static constexpr size_t kSiteHoldMax = 1u << 18;  // records held at most (32 MiB)
  std::vector<Record> held_sites_;                  // under drain_mu_
  bool final_sites_ = false;                        // drain thread: a flush or the stop
  // Ended sessions' buffers are kept until the next session starts (an empty list frees them).
  static void retire(std::vector<ThreadBuffer*> buffers);
  void run();
  // Returns the records moved: at most kDrainSlice, so a burst's backlog is written in
  // slices (a bounded batch) while producers go on filling their chunks.
  static constexpr std::size_t kDrainSlice = 1u << 16;
  std::size_t drain_once(bool commit_now);
  // The stop's drain: everything, or what the deadline allows and the rest counted; then the
  // last commit, with every count.
  void drain_for_stop(std::size_t moved, uint64_t deadline);
  bool ensure_open();
  void report_at_exit();

  std::shared_ptr<ChunkPool> pool_;
  std::unique_ptr<Sink> sink_;
  SessionInfo info_;
  StringTable& strings_;
  CollectorOptions opts_;
  const uint64_t generation_;

  std::mutex drain_mu_;  // held while the drain thread works; fork waits for it
  mutable std::mutex registry_mu_;
  std::vector<ThreadBuffer*> buffers_;
  mutable std::mutex info_mu_;
  std::vector<InfoRow> pending_info_;
  std::map<std::string, uint64_t> extra_drops_;  // guarded by info_mu_
  std::vector<Record> closed_at_exit_;           // guarded by info_mu_
  uint64_t open_at_exit_ = 0;                    // guarded by info_mu_

  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool stop_requested_ = false;
  uint64_t drain_deadline_ns_ = 0;  // guarded by wake_mu_ until the drain thread reads it
  bool flush_requested_ = false;
  uint64_t flush_done_ = 0, flush_asked_ = 0;
  std::condition_variable flushed_cv_;

  std::thread* thread_ = nullptr;  // raw: the child of a fork must never join or destroy it
  bool prepared_ = false;          // prepare_output done: the drain thread opens the sink
  bool opened_ = false;
  bool open_failed_ = false;
  uint64_t last_commit_ns_ = 0;
  uint64_t ring_drops_of_dead_threads_ = 0;
  std::atomic<uint64_t> records_written_{0};
  std::vector<Record> batch_;
  TscMap tsc_;  // drain thread (and start): ROCTx counter stamps to CLOCK_BOOTTIME
  std::vector<std::string> new_strings_;
};

}  // namespace rocprof
