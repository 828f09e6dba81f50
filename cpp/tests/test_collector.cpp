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
