// The drain path end to end through a MemorySink: records from many threads, strings
// before the records that use them, exited threads' buffers reclaimed, drops counted.
#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <vector>

#include "buffer/collector.hpp"

using namespace rocprof;

namespace {
Record region(uint32_t name_id, uint64_t t) {
  Record r{};
  r.kind = RecordKind::kRegion;
  r.name_id = name_id;
  r.start = t;
  r.end = t + 1;
  return r;
}
}  // namespace

TEST(Collector, DeliversEveryRecordFromEveryThread) {
  StringTable strings;
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  Collector c(std::move(sink), SessionInfo{}, strings, CollectorOptions{});
  std::string error;
  ASSERT_TRUE(c.start(&error)) << error;
  constexpr int kThreads = 4, kPer = 10000;
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      const uint32_t id = strings.intern_cached("thread-" + std::to_string(w));
      for (int i = 0; i < kPer; ++i) {
        while (!c.emit(region(id, i))) std::this_thread::yield();  // test waits; producers never do
      }
    });
  }
  for (auto& t : threads) t.join();
  c.flush();
  c.stop();
  ASSERT_EQ(mem->records.size(), static_cast<size_t>(kThreads * kPer));
  EXPECT_GE(mem->commits, 1);
  EXPECT_TRUE(mem->opened);
  // Every referenced string was delivered.
  for (const Record& r : mem->records) {
    ASSERT_GE(r.name_id, 1u);
    ASSERT_LE(r.name_id, mem->strings.size());
  }
  // Each exited thread produced a ThreadInfo with an end time.
  int ended = 0;
  for (const InfoRow& row : mem->infos)
    if (auto* t = std::get_if<ThreadInfo>(&row); t && t->end > 0) ++ended;
  EXPECT_EQ(ended, kThreads);
  EXPECT_EQ(c.dropped_total(), 0u) << "producers waited, so nothing may be dropped";
}

// A database of another process (session/other_process.hpp) gets thread rows only for the
// threads its records name: the thread that produced them is the recorder's, not the
// recorded process's.
TEST(Collector, ProducersUnannouncedForAnotherProcess) {
  StringTable strings;
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  CollectorOptions opts;
  opts.announce_producers = false;
  opts.thread_name = [](uint32_t tid) { return "t" + std::to_string(tid); };
  Collector c(std::move(sink), SessionInfo{}, strings, opts);
  std::string error;
  ASSERT_TRUE(c.start(&error)) << error;
  std::thread producer([&] {
    c.add_info(ThreadInfo{4242, 1, 0, {}});
    Record r = region(strings.intern("x"), 5);
    r.tid = 4242;
    ASSERT_TRUE(c.emit(r));
  });
  producer.join();
  c.flush();
  c.stop();
  ASSERT_EQ(mem->records.size(), 1u);
  std::vector<std::pair<uint32_t, std::string>> rows;
  for (const InfoRow& row : mem->infos)
    if (auto* t = std::get_if<ThreadInfo>(&row)) rows.emplace_back(t->tid, t->name);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], std::make_pair(4242u, std::string("t4242")));
}

TEST(Collector, FullRingCountsDropsInMetadata) {
  StringTable strings;
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  CollectorOptions opts;
  opts.ring_capacity = 16;
  opts.buffer_budget_bytes = 1;   // no chunk beyond each thread's first
  opts.flush_interval_ms = 1000;  // the drain thread sleeps: the buffer must overflow
  Collector c(std::move(sink), SessionInfo{}, strings, opts);
  std::string error;
  ASSERT_TRUE(c.start(&error));
  int accepted = 0;
  for (int i = 0; i < 100; ++i) accepted += c.emit(region(0, i));
  EXPECT_EQ(accepted, 16);
  EXPECT_EQ(c.dropped_total(), 84u);
  c.add_drops("gpu", 5);
  c.flush();
  c.stop();
  std::string total;
  for (const InfoRow& row : mem->infos)
    if (auto* m = std::get_if<MetadataInfo>(&row); m && m->tag == "rocprof.dropped_records")
      total = m->value;
  EXPECT_EQ(total, "89");
}

TEST(Collector, NullSinkCountsRecords) {
  StringTable strings;
  auto sink = std::make_unique<NullSink>();
  NullSink* null = sink.get();
  Collector c(std::move(sink), SessionInfo{}, strings, CollectorOptions{});
  std::string error;
  ASSERT_TRUE(c.start(&error));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(c.emit(region(0, i)));
  c.stop();
  EXPECT_EQ(null->count, 1000u);
}

namespace {
// Where open() ran, and whether it may succeed.
class ThreadSink final : public Sink {
 public:
  explicit ThreadSink(bool ok) : ok_(ok) {}
  bool open(const SessionInfo&, std::string* error) override {
    opened_on = std::this_thread::get_id();
    if (!ok_) *error = "database or disk is full";
    return ok_;
  }
  void write_strings(uint32_t, const std::vector<std::string>&) override {}
  void write_info(const InfoRow&) override {}
  void write_records(const Record*, std::size_t n) override { records += n; }
  void commit() override {}
  void close(uint64_t) override { closed = true; }
  bool closed_complete() const override { return closed; }
  std::thread::id opened_on;
  std::size_t records = 0;
  bool closed = false;

 private:
  bool ok_;
};
}  // namespace

// A Python child's database: its name is claimed by start() (prepare_output, on the caller's
// thread: a bad path still fails start), the schema is written by the drain thread while the
// program starts, and a sink that cannot open there is abandoned, not a failed start(). One
// closed complete is said to be (output_complete: the run manifest).
TEST(Collector, OpensOnTheDrainThreadWhenAsked) {
  for (const bool ok : {true, false}) {
    StringTable strings;
    auto sink = std::make_unique<ThreadSink>(ok);
    ThreadSink* s = sink.get();
    std::thread::id prepared_on;
    std::string abandoned, complete;
    CollectorOptions opts;
    opts.open_on_drain_thread = true;
    opts.prepare_output = [&](std::string*, std::string*) {
      prepared_on = std::this_thread::get_id();
      return true;
    };
    opts.abandon_output = [&](const std::string& path) { abandoned = path; };
    opts.output_complete = [&](const std::string& path) { complete = path; };
    SessionInfo info;
    info.path = "child_results.db";
    Collector c(std::move(sink), info, strings, opts);
    std::string error;
    ASSERT_TRUE(c.start(&error)) << error;
    EXPECT_EQ(prepared_on, std::this_thread::get_id());
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(c.emit(region(0, i)));
    c.stop();
    EXPECT_NE(s->opened_on, std::thread::id());
    EXPECT_NE(s->opened_on, std::this_thread::get_id()) << "the schema is the drain thread's";
    EXPECT_EQ(s->records, ok ? 100u : 0u);
    EXPECT_EQ(s->closed, ok);
    EXPECT_EQ(abandoned, ok ? "" : "child_results.db");
    EXPECT_EQ(complete, ok ? "child_results.db" : "");
  }
}

// A burst far larger than one chunk, with the drain thread asleep, is kept
// whole within the budget; past the budget the drops are counted under their cause.
TEST(Collector, BurstGrowsBufferInsteadOfDropping) {
  StringTable strings;
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  CollectorOptions opts;
  opts.ring_capacity = 1024;
  opts.flush_interval_ms = 1000;
  Collector c(std::move(sink), SessionInfo{}, strings, opts);
  std::string error;
  ASSERT_TRUE(c.start(&error));
  constexpr int kN = 100000;  // ~98 chunks
  for (int i = 0; i < kN; ++i) ASSERT_TRUE(c.emit(region(0, i))) << i;
  EXPECT_EQ(c.dropped_total(), 0u);
  EXPECT_GE(c.pool().peak_bytes(), kN * sizeof(Record));
  c.stop();
  ASSERT_EQ(mem->records.size(), static_cast<size_t>(kN));
  for (int i = 0; i < kN; ++i) ASSERT_EQ(mem->records[i].start, static_cast<uint64_t>(i));
}

TEST(Collector, DropsOnlyPastTheBudgetAndNamesTheCause) {
  StringTable strings;
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  CollectorOptions opts;
  opts.ring_capacity = 1024;
  opts.flush_interval_ms = 1000;
  ChunkPool probe(1024, 0);
  opts.buffer_budget_bytes = 4 * probe.chunk_bytes();  // the first chunk and 3 more
  Collector c(std::move(sink), SessionInfo{}, strings, opts);
  std::string error;
  ASSERT_TRUE(c.start(&error));
  int accepted = 0;
  for (int i = 0; i < 10000; ++i) accepted += c.emit(region(0, i));
  EXPECT_EQ(accepted, 4 * 1024);
  EXPECT_EQ(c.dropped_total(), 10000u - 4 * 1024);
  c.stop();
  std::map<std::string, std::string> meta;
  for (const InfoRow& row : mem->infos)
    if (auto* m = std::get_if<MetadataInfo>(&row)) meta[m->tag] = m->value;
  EXPECT_EQ(meta["rocprof.dropped_records.buffer_budget"], std::to_string(10000 - 4 * 1024));
  EXPECT_EQ(meta["rocprof.dropped_records"], std::to_string(10000 - 4 * 1024));
}

// A fatal signal's stop has a deadline: what the drain did not write by then is counted and
// stored (cause stop_deadline), as are the records producers made after the stop began; every
// record emitted is either in the sink or in the counts.
TEST(Collector, StopPastItsDeadlineCountsWhatItDidNotWrite) {
  StringTable strings;
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  CollectorOptions opts;
  opts.flush_interval_ms = 60000;  // nothing drained before the stop
  opts.take_late_records = [] { return uint64_t{7}; };
  Collector c(std::move(sink), SessionInfo{}, strings, opts);
  std::string error;
  ASSERT_TRUE(c.start(&error));
  constexpr int kN = 300000;  // several drain slices
  for (int i = 0; i < kN; ++i) ASSERT_TRUE(c.emit(region(0, i)));
  c.stop(/*drain_deadline_ns=*/1);
  std::map<std::string, std::string> meta;
  for (const InfoRow& row : mem->infos)
    if (auto* m = std::get_if<MetadataInfo>(&row)) meta[m->tag] = m->value;
  const uint64_t unwritten = std::stoull(meta["rocprof.dropped_records.stop_deadline"]);
  EXPECT_GT(unwritten, 0u);
  EXPECT_EQ(mem->records.size() + unwritten, static_cast<size_t>(kN));
  EXPECT_EQ(meta["rocprof.dropped_records.after_stop"], "7");
  EXPECT_EQ(meta["rocprof.dropped_records"], std::to_string(unwritten + 7));
}

// A short session (a few records, no thread past its first chunk) faults in no reserve:
// its memory peak is the one chunk its thread writes into. Once a thread has needed a second
// chunk, the drain keeps ready ones in reserve.
TEST(Collector, KeepsNoReserveUntilAThreadFillsItsFirstChunk) {
  auto peak_after = [](int records) {
    StringTable strings;
    auto sink = std::make_unique<MemorySink>();
    MemorySink* mem = sink.get();
    CollectorOptions opts;
    opts.ring_capacity = 1024;
    Collector c(std::move(sink), SessionInfo{}, strings, opts);
    std::string error;
    EXPECT_TRUE(c.start(&error));
    for (int i = 0; i < records; ++i) c.emit(region(0, i));
    c.flush();
    c.flush();  // a second drain: the reserve, if any, is stocked by now
    c.stop();
    std::string peak;
    for (const InfoRow& row : mem->infos)
      if (auto* m = std::get_if<MetadataInfo>(&row))
        if (m->tag == "rocprof.buffer_peak_bytes") peak = m->value;
    return std::stoull(peak);
  };
  const uint64_t chunk = ChunkPool(1024, 0).chunk_bytes();
  EXPECT_EQ(peak_after(10), chunk);
  EXPECT_GT(peak_after(1500), 2 * chunk);
}

TEST(ChunkPool, TrimGivesMemoryBackAndChunksAreReused) {
  ChunkPool pool(1024, 64 * 1024 * 1024);
  std::vector<Chunk*> taken;
  for (int i = 0; i < 10; ++i) taken.push_back(pool.take());
  for (Chunk* ch : taken) pool.give(ch);
  EXPECT_EQ(pool.resident_bytes(), 10 * pool.chunk_bytes());
  pool.restock(2, /*trim=*/true);
  EXPECT_LT(pool.resident_bytes(), 3 * pool.chunk_bytes());
  pool.restock(6, /*trim=*/false);  // the trimmed chunks come back first
  EXPECT_GE(pool.resident_bytes(), 6 * (pool.chunk_bytes() - 4096));
  EXPECT_EQ(pool.peak_bytes(), 10 * pool.chunk_bytes());
}
