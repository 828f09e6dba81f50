#include "collector.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "rocprof/clock.hpp"

namespace rocprof {
namespace {

std::atomic<uint64_t> g_generation{1};

// The calling thread's buffer. Trivially destructible, so reaching it costs one thread-local
// lookup and no initialisation guard on every record; the thread's end is seen through a
// pthread key (on_thread_exit), set when the thread registers.
struct TlsSlot {
  ThreadBuffer* buffer = nullptr;
  uint64_t generation = 0;
};
thread_local TlsSlot t_slot;

// Thread exit: tell the drain thread it may free the buffer once drained. Collectors are
// never destroyed while a generation is live, so this is safe.
void on_thread_exit(void* slot) {
  auto* s = static_cast<TlsSlot*>(slot);
  if (s->buffer != nullptr && s->generation == g_generation.load(std::memory_order_acquire)) {
    s->buffer->end.store(now_ns(), std::memory_order_relaxed);
    s->buffer->exited.store(true, std::memory_order_release);
  }
}

pthread_key_t exit_key() {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    pthread_key_create(&k, on_thread_exit);
    return k;
  }();
  return key;
}

uint32_t os_tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

}  // namespace

Collector::Collector(std::unique_ptr<Sink> sink, SessionInfo info, StringTable& strings,
                     CollectorOptions opts)
    : pool_(std::make_shared<ChunkPool>(opts.ring_capacity, opts.buffer_budget_bytes)),
      sink_(std::move(sink)),
      info_(std::move(info)),
      strings_(strings),
      opts_(opts),
      generation_(g_generation.fetch_add(1) + 1) {
  batch_.reserve(1u << 16);
}

Collector::~Collector() { stop(); }

bool Collector::start(std::string* error) {
  retire({});
  if (!opts_.open_lazily) {
    if (opts_.prepare_output && !opts_.prepare_output(&info_.path, error)) return false;
    prepared_ = opts_.open_on_drain_thread;
  }
  if (!opts_.open_lazily && !prepared_) {
    if (!sink_->open(info_, error)) {
      if (error) *error = "cannot create the database " + info_.path + ": " + *error;
      if (opts_.abandon_output) opts_.abandon_output(info_.path);
      return false;
    }
    opened_ = true;
  }
  last_commit_ns_ = now_ns();
  if (tsc_stamps()) tsc_.calibrate();  // before any stamp of this session
  // The drain thread must never take the sampling profiler's signals (architecture rule).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = new std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return true;
}

void Collector::stop(uint64_t drain_deadline_ns) {
  if (thread_ == nullptr) return;
  {
    std::lock_guard<std::mutex> g(wake_mu_);
    stop_requested_ = true;
    drain_deadline_ns_ = drain_deadline_ns;
  }
  wake_cv_.notify_all();
  thread_->join();
  delete thread_;
  thread_ = nullptr;
  // Invalidate thread-local pointers into this collector's buffers. The buffers themselves
  // are only retired: a producer that loaded this collector before the session ended may
  // still be inside push() (roctxRangePop on another thread during exit, a Python thread
  // between two GIL releases). They are freed when the next session starts.
  g_generation.fetch_add(1);
  std::lock_guard<std::mutex> g(registry_mu_);
  retire(std::move(buffers_));
  buffers_.clear();
}

void Collector::retire(std::vector<ThreadBuffer*> buffers) {
  static std::mutex mu;
  static auto* retired = new std::vector<ThreadBuffer*>();
  std::lock_guard<std::mutex> g(mu);
  if (buffers.empty()) {  // called by start(): free what earlier sessions left
    for (ThreadBuffer* b : *retired) delete b;
    retired->clear();
  } else {
    retired->insert(retired->end(), buffers.begin(), buffers.end());
  }
}

ThreadBuffer* Collector::thread_buffer() noexcept {
  TlsSlot& s = t_slot;
  if (s.generation == generation_ && s.buffer != nullptr) return s.buffer;
  ThreadBuffer* b = register_thread();
  if (s.buffer == nullptr) pthread_setspecific(exit_key(), &s);  // once per thread
  s.buffer = b;
  s.generation = generation_;
  return b;
}

ThreadBuffer* Collector::register_thread() {
  auto* b = new ThreadBuffer(pool_, os_tid(), now_ns());
  std::lock_guard<std::mutex> g(registry_mu_);
  buffers_.push_back(b);
  return b;
}

void Collector::add_info(InfoRow row) {
  std::lock_guard<std::mutex> g(info_mu_);
  pending_info_.push_back(std::move(row));
}

void Collector::add_drops(const std::string& source, uint64_t n) {
  if (n == 0) return;
  std::lock_guard<std::mutex> g(info_mu_);
  extra_drops_[source] += n;
}

void Collector::add_closed_at_exit(const Record& r) {
  std::lock_guard<std::mutex> g(info_mu_);
  closed_at_exit_.push_back(r);
  ++open_at_exit_;
}

uint64_t Collector::dropped_total() const {
  uint64_t total = ring_drops_of_dead_threads_ + (sink_ ? sink_->unstored() : 0);
  {
    std::lock_guard<std::mutex> g(registry_mu_);
    for (const ThreadBuffer* b : buffers_) total += b->ring.dropped();
  }
  std::lock_guard<std::mutex> g(info_mu_);
  for (const auto& kv : extra_drops_) total += kv.second;
  return total;
}

void Collector::flush() {
  if (thread_ == nullptr) return;
  std::unique_lock<std::mutex> lk(wake_mu_);
  const uint64_t ticket = ++flush_asked_;
  flush_requested_ = true;
  wake_cv_.notify_all();
  flushed_cv_.wait(lk, [&] { return flush_done_ >= ticket || stop_requested_; });
}

void Collector::run() {
  // A drain that moved this many records means producers are running at full rate: drain
  // again at once instead of sleeping, or their rings fill (and drop) while the sink idles.
  constexpr std::size_t kBusyBatch = 4096;
  bool busy = false;
  if (prepared_) {
    std::lock_guard<std::mutex> g(drain_mu_);  // a fork waits for the schema
    ensure_open();
  }
  uint64_t deadline = 0;
  for (;;) {
    bool stopping, flushing;
    uint64_t ticket;
    {
      std::unique_lock<std::mutex> lk(wake_mu_);
      if (!busy)
        wake_cv_.wait_for(lk, std::chrono::milliseconds(opts_.flush_interval_ms),
                          [&] { return stop_requested_ || flush_requested_; });
      stopping = stop_requested_;
      flushing = flush_requested_;
      flush_requested_ = false;
      ticket = flush_asked_;
      deadline = drain_deadline_ns_;
    }
    const bool commit_due = now_ns() - last_commit_ns_ >= opts_.commit_interval_ms * 1000000ull;
    final_sites_ = stopping || flushing;  // what was emitted before is written now
    // A flush or the stop must take everything, however many slices that needs.
    std::size_t moved = drain_once(stopping || flushing || commit_due);
    busy = moved >= kBusyBatch;
    if (stopping) {
      drain_for_stop(moved, deadline);
      break;
    }
    while (flushing && moved >= kDrainSlice) moved = drain_once(true);
    if (flushing) {
      std::lock_guard<std::mutex> g(wake_mu_);
      flush_done_ = ticket;
      flushed_cv_.notify_all();
    }
  }
  std::lock_guard<std::mutex> g(drain_mu_);
  // Under a deadline the process may die while the database is closed (its indexes built, its
  // journal folded in): what was lost is said first.
  if (deadline != 0) report_at_exit();
  // A lazily opened child that never recorded anything leaves no file behind.
  if (opened_) {
    sink_->close(now_ns());
    if (opts_.output_complete && sink_->closed_complete()) opts_.output_complete(info_.path);
  }
  if (deadline == 0) report_at_exit();
  // The session's memory goes back when it ends, not at exit (a Python program goes on, and
  // -S reads the database in this process): the strings' hand-over vector and the chunks
  // beyond the ones producer threads still hold.
  std::vector<std::string>().swap(new_strings_);
  pool_->restock(0, /*trim=*/true);
}

void Collector::drain_for_stop(std::size_t moved, uint64_t deadline) {
  // Producers no longer reach this collector (the session let go of it first): the backlog
  // only shrinks, so the loop ends, at the deadline if there is one.
  while (moved >= kDrainSlice && (deadline == 0 || now_ns() < deadline)) moved = drain_once(true);
  if (moved >= kDrainSlice) {
    std::vector<ThreadBuffer*> snapshot;
    {
      std::lock_guard<std::mutex> g(registry_mu_);
      snapshot = buffers_;
    }
    uint64_t left = 0;
    for (ThreadBuffer* b : snapshot) left += b->ring.drain([](const Record&) {});
    add_drops("stop_deadline", left);
  }
  if (opts_.take_late_records) add_drops("after_stop", opts_.take_late_records());
  drain_once(true);  // the last commit: the counts above with it
}

// Lost or unfinished data is said once, at the end, whatever the launcher's options: the
// database holds the same counts (metadata rocprof.dropped_records.*), but nobody reads
// metadata unless told to.
void Collector::report_at_exit() {
  std::map<std::string, uint64_t> drops;
  uint64_t open_at_exit = 0;
  {
    std::lock_guard<std::mutex> g(info_mu_);
    drops = extra_drops_;
    open_at_exit = open_at_exit_;
  }
  uint64_t ring = ring_drops_of_dead_threads_;
  {
    std::lock_guard<std::mutex> g(registry_mu_);
    for (const ThreadBuffer* b : buffers_) ring += b->ring.dropped();
  }
  if (ring != 0) drops["buffer_budget"] += ring;
  if (sink_ && sink_->unstored() != 0) drops["storage"] += sink_->unstored();
  uint64_t total = 0;
  std::string parts;
  for (const auto& kv : drops) {
    if (kv.second == 0) continue;
    total += kv.second;
    parts += (parts.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second);
  }
  if (total == 0 && open_at_exit == 0) return;
  std::string line = "rocprof: " + info_.path + ":";
  if (total != 0) line += " " + std::to_string(total) + " records dropped (" + parts + ")";
  if (total != 0 && open_at_exit != 0) line += ";";
  if (open_at_exit != 0)
    line += " " + std::to_string(open_at_exit) +
            (open_at_exit == 1 ? " range was" : " ranges were") +
            " still open at exit (closed at the exit time, marked open_at_exit)";
  std::fprintf(stderr, "%s\n", line.c_str());
}

bool Collector::ensure_open() {
  if (opened_) return true;
  if (open_failed_) return false;
  std::string error;
  if (!prepared_ && opts_.prepare_output && !opts_.prepare_output(&info_.path, &error)) {
    std::fprintf(stderr, "rocprof: not recording pid %d: %s\n", getpid(), error.c_str());
    open_failed_ = true;
    return false;
  }
  if (!sink_->open(info_, &error)) {
    std::fprintf(stderr, "rocprof: cannot create the database %s: %s\n", info_.path.c_str(),
                 error.c_str());
    if (opts_.abandon_output) opts_.abandon_output(info_.path);
    open_failed_ = true;
    return false;
  }
  opened_ = true;
  return true;
}

void Collector::to_boottime(std::vector<Record>& records) {
  const auto stamped = [](const Record& r) { return (r.flags & kFlagTscTime) != 0; };
  if (std::none_of(records.begin(), records.end(), stamped)) return;
  // A point after every stamp here was made (they were all published before this drain took
  // them): each maps between two points.
  tsc_.calibrate();
  for (Record& r : records) {
    if (!stamped(r)) continue;
    r.start = tsc_.boottime(r.start);
    r.end = tsc_.boottime(r.end);
    r.flags = static_cast<uint16_t>(r.flags & ~kFlagTscTime);
  }
}

void Collector::resolve_sites(std::vector<Record>& records, bool final) {
  if (!held_sites_.empty()) {  // held by an earlier drain: asked again
    records.insert(records.end(), held_sites_.begin(), held_sites_.end());
    held_sites_.clear();
  }
  size_t kept = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    Record& r = records[i];
    if ((r.flags & kFlagSiteKey) && r.kind == RecordKind::kMemoryAlloc && opts_.resolve_site) {
      // alloc.reserved counts the drains the record was held for.
      const bool wait =
          final || r.alloc.reserved >= kSiteHoldDrains || held_sites_.size() >= kSiteHoldMax;
      bool pending = false;
      const uint32_t id = opts_.resolve_site(r.alloc.site_key, wait, &pending);
      if (pending && !wait) {
        ++r.alloc.reserved;
        held_sites_.push_back(r);
        continue;
      }
      r.alloc.callsite_id = id;
      r.alloc.reserved = 0;
    }
    r.flags = static_cast<uint16_t>(r.flags & ~kFlagSiteKey);
    if (kept != i) records[kept] = r;
    ++kept;
  }
  records.resize(kept);
}

std::size_t Collector::drain_once(bool commit_now) {
  std::lock_guard<std::mutex> drain_guard(drain_mu_);
  std::vector<ThreadBuffer*> snapshot;
  {
    std::lock_guard<std::mutex> g(registry_mu_);
    snapshot = buffers_;
  }
  batch_.clear();
  std::vector<ThreadInfo> threads;
  std::vector<ThreadBuffer*> finished;
  for (ThreadBuffer* b : snapshot) {
    const bool exited = b->exited.load(std::memory_order_acquire);  // before draining
    const std::size_t room = kDrainSlice > batch_.size() ? kDrainSlice - batch_.size() : 0;
    const std::size_t got = b->ring.drain([&](const Record& r) { batch_.push_back(r); }, room);
    if (!b->announced) {
      if (opts_.announce_producers) threads.push_back(ThreadInfo{b->tid, b->start, 0, {}});
      b->announced = true;
    }
    if (exited && got < room) {  // all of an exited thread's records are out: free it
      if (opts_.announce_producers)
        threads.push_back(ThreadInfo{b->tid, b->start, b->end.load(), {}});
      finished.push_back(b);
    }
  }
  std::vector<InfoRow> infos;
  {
    std::lock_guard<std::mutex> g(info_mu_);
    infos.swap(pending_info_);
    batch_.insert(batch_.end(), closed_at_exit_.begin(), closed_at_exit_.end());
    closed_at_exit_.clear();
  }
  to_boottime(batch_);
  resolve_sites(batch_, final_sites_);
  new_strings_.clear();
  const uint32_t first = strings_.take_new(new_strings_);
  const bool have_data = !batch_.empty() || !infos.empty() || !threads.empty();
  if (opened_ || (have_data && ensure_open())) {
    if (!new_strings_.empty()) sink_->write_strings(first, new_strings_);
    if (opts_.thread_name) {
      // The kernel's name for a new thread (what `top -H` shows) until roctx names it.
      auto name = [&](ThreadInfo& t) {
        if (t.name.empty() && t.end == 0) t.name = opts_.thread_name(t.tid);
      };
      for (ThreadInfo& t : threads) name(t);
      for (InfoRow& row : infos)
        if (auto* t = std::get_if<ThreadInfo>(&row)) name(*t);
    }
    for (const ThreadInfo& t : threads) sink_->write_info(t);
    for (const InfoRow& row : infos) sink_->write_info(row);
    if (!batch_.empty()) sink_->write_records(batch_.data(), batch_.size());
    records_written_.fetch_add(batch_.size(), std::memory_order_relaxed);
    if (commit_now) {
      last_commit_ns_ = now_ns();
      uint64_t ring_drops = ring_drops_of_dead_threads_;
      for (ThreadBuffer* b : snapshot) ring_drops += b->ring.dropped();
      uint64_t total = ring_drops;
      {
        std::lock_guard<std::mutex> g(info_mu_);
        if (open_at_exit_ != 0)
          sink_->write_info(
              MetadataInfo{"rocprof.ranges_open_at_exit", std::to_string(open_at_exit_)});
        for (const auto& kv : extra_drops_) {
          sink_->write_info(
              MetadataInfo{"rocprof.dropped_records." + kv.first, std::to_string(kv.second)});
          total += kv.second;
        }
      }
      if (const uint64_t unstored = sink_->unstored()) {
        sink_->write_info(
            MetadataInfo{"rocprof.dropped_records.storage", std::to_string(unstored)});
        total += unstored;
      }
      sink_->write_info(
          MetadataInfo{"rocprof.dropped_records.buffer_budget", std::to_string(ring_drops)});
      sink_->write_info(
          MetadataInfo{"rocprof.buffer_peak_bytes", std::to_string(pool_->peak_bytes())});
      sink_->write_info(MetadataInfo{"rocprof.dropped_records", std::to_string(total)});
      sink_->commit();
    }
  } else if (!new_strings_.empty()) {
    strings_.rewind_taken();  // no database yet (lazy child): send them all once it opens
  }
  if (!finished.empty()) {
    std::lock_guard<std::mutex> g(registry_mu_);
    for (ThreadBuffer* b : finished) {
      ring_drops_of_dead_threads_ += b->ring.dropped();
      for (auto it = buffers_.begin(); it != buffers_.end(); ++it) {
        if (*it == b) {
          buffers_.erase(it);
          break;
        }
      }
      delete b;
    }
  }
  // Producers find a chunk ready when theirs fills (once one thread has filled its first);
  // after a burst (a drain that moved less than a chunk) the memory beyond that reserve goes
  // back to the system.
  constexpr uint32_t kReserve = 4;
  pool_->restock(pool_->grown() ? kReserve : 0,
                 /*trim=*/batch_.size() < pool_->records_per_chunk());
  return batch_.size();
}

void Collector::before_fork() {
  drain_mu_.lock();
  registry_mu_.lock();
  info_mu_.lock();
  wake_mu_.lock();
}

void Collector::after_fork_parent() {
  wake_mu_.unlock();
  info_mu_.unlock();
  registry_mu_.unlock();
  drain_mu_.unlock();
}

void Collector::after_fork_child() {
  wake_mu_.unlock();
  info_mu_.unlock();
  registry_mu_.unlock();
  drain_mu_.unlock();
  // The drain thread does not exist here and the sink's connection belongs to the parent:
  // leak both (closing the connection could release the parent's file locks).
  thread_ = nullptr;
  // Thread-exit destructors in the child must not touch the buffers freed below.
  g_generation.fetch_add(1);
  (void)sink_.release();
  for (ThreadBuffer* b : buffers_) delete b;  // the parent drains its own copies
  buffers_.clear();
}

}  // namespace rocprof
