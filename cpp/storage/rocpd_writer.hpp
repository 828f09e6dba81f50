// Writes rocpd rows (rocpd_mapping.hpp) into one SQLite database: the embedded schema
// (rocpd/schema/*.sql), prepared statements, bounded transactions, and what happens when the
// output itself fails (disk full, I/O error, read-only). It decides nothing about what a row
// holds. The row writers are split by table group: rows_info.cpp (node, process, thread,
// agent, stream, queue, kernel symbol, pmc), rows_events.cpp (event, region, kernel dispatch,
// memory copy/allocation, track, sample, pmc event), rows_meta.cpp (metadata, strings).
//
// The caller hands it a path where no database is (session/os_facts.hpp prepares it).
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <tuple>
#include <vector>

#include "rocpd_mapping.hpp"
#include "rocprof/info.hpp"
#include "sqlite_api.hpp"

namespace rocprof::rocpd {

class Writer {
 public:
  Writer() = default;
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Creates the database at `path` with the schema for `guid`/`suffix` and prepares every
  // statement; leaves a transaction open for the base rows. `guid_per_row`: every table's guid
  // column is stored in each row (DEFAULT) instead of generated (tables.sql says why), and so
  // are the record tables' nid and `pid` (the process every row belongs to).
  bool open(const std::string& path, const std::string& guid, const std::string& suffix,
            bool guid_per_row, int64_t pid, std::string* error);
  // Whether the guid is stored per row: asked for, or this SQLite predates generated columns.
  bool guid_per_row() const { return guid_per_row_; }
  bool is_open() const { return db_ != nullptr; }
  // Ends open()'s transaction and starts the first bounded one.
  bool begin_recording(std::string* error);

  // ---- rows_meta.cpp
  void metadata(const std::string& tag, const std::string& value);  // upsert by tag
  void string(uint32_t id, const std::string& text);

  // ---- rows_info.cpp
  void node(const NodeRow& r);
  void process(const ProcessRow& r);
  void thread(const ThreadRow& r);
  void agent(const AgentInfo& a, int64_t pid);
  void stream(const StreamInfo& s, int64_t pid);  // rocpd_info_queue when s.is_queue
  void kernel_symbol(const KernelSymbolInfo& k, int64_t pid);
  void pmc(const PmcRow& r);
  void process_end(const ProcessEndRow& r);
  void threads_end(int64_t end);  // every thread row still without an end

  // ---- rows_events.cpp (event, region, kernel, copy and sample rows are batched: see Batch)
  void event(const EventRow& r);
  void region(const RegionRow& r);
  void kernel(const KernelRow& r);
  void copy(const CopyRow& r);
  void alloc(const AllocRow& r);
  void track(const TrackRow& r);
  void sample(const SampleRow& r);
  void pmc_event(const PmcEventRow& r);
  void arg(const ArgRow& r);
  void thread_name(const ThreadNameRow& r);
  void pc_sample(const PcSampleRow& r);  // rows_pc.cpp
  // Applied now and again at close: a device or stream is often named before its row exists.
  void name_object(const NameRow& r);

  // ---- bounded runs (rows_steps.cpp): --max-size, storage/step_keeper.hpp decides
  // Before open(): the database is created with auto_vacuum=INCREMENTAL (deleted detail gives
  // its pages back), a WAL kept to a share of `max_bytes`, and the step tables (steps.sql).
  void set_bounded(uint64_t max_bytes) { bounded_bytes_ = max_bytes; }
  struct StepRow {
    int64_t step;
    Id name_id;
    int64_t tid, start, end, kernels, kernel_ns, gpu_busy_ns, copies, copy_bytes;
    int64_t pageable_copies, syncs, api_calls, records, detail;
    std::string_view causes;      // "" is NULL
    bool has_energy, has_memory;  // false: the columns below are NULL
    double energy_j;
    int64_t mem_alloc_bytes, mem_peak_bytes;
  };
  void step_summary(const StepRow& r);
  void step_kernel(int64_t step, Id name_id, int64_t calls, int64_t total_ns, int64_t max_ns);
  void step_line(int64_t step, int64_t site_id, int64_t kernels, int64_t kernel_ns);
  void step_detail(int64_t step, int64_t detail, std::string_view causes);
  // The last rowid of each record table (batches flushed first): a step written between two
  // marks is exactly the rows in (before, after], so it can be deleted by rowid ranges.
  static constexpr int kMarkTables = 8;
  struct Marks {
    int64_t last[kMarkTables] = {};
  };
  Marks marks();
  void delete_rows(const Marks& before, const Marks& after);
  // Pages that hold rows (free pages left out), and the WAL's share of the budget.
  uint64_t used_bytes();
  uint64_t wal_bytes() const { return wal_bytes_; }
  uint64_t wal_file_bytes() const;  // the -wal file's size now
  // Frees up to `pages` free pages back to the file system (0: all).
  void release_free_pages(int64_t pages = 0);

  // ---- transactions and failure (rocpd_writer.cpp)
  // One more record in the open transaction; true when the transaction is due for a commit
  // (bounded: a burst drained in one go must not become one transaction that a nearly full
  // disk can never take, and that a write error would take back whole).
  bool count_record() { return ++txn_records_ >= kMaxTxnRecords; }
  void commit();
  void close(const std::optional<ProcessEndRow>& end);
  // Why the output stopped ("" while it works): "disk full", "I/O error", "read-only".
  const std::string& failure() const { return failure_; }
  // After close(): the file is a complete database, its journal folded in and closed, as
  // read_status would find it (rocpd_status.hpp).
  bool closed_complete() const { return closed_complete_; }
  // Records that could not be stored; may be read from any thread.
  uint64_t unstored() const { return unstored_.load(std::memory_order_relaxed); }
  void add_unstored(uint64_t n) { unstored_.fetch_add(n, std::memory_order_relaxed); }
  // After a failure: metadata kept for one last try at close (the drop counts).
  void late_metadata(const std::string& tag, const std::string& value);

 private:
  enum Stmt {
    kString,
    kAlloc,
    kPmcEvent,
    kArg,
    kTrack,
    kThread,
    kThreadName,
    kNameDevice,
    kNameAgent,
    kNameStream,
    kAgent,
    kStream,
    kQueue,
    kSymbol,
    kPmc,
    kMetaUpdate,
    kMetaInsert,
    kPcSample,
    kStmtCount
  };
  static constexpr uint64_t kMaxTxnRecords = 4096;
  static constexpr uint64_t kCheckpointIntervalNs = 2'000'000'000;
  void reapply_names();
  void apply_name(Stmt which, int64_t object, std::string_view name);
  std::vector<std::tuple<Stmt, int64_t, std::string>> names_;  // ROCTx names, for close

  bool create(const std::string& path, const std::string& guid, const std::string& suffix,
              bool guid_per_row, std::string* error);
  void abandon();
  bool exec(const std::string& sql, std::string* error = nullptr);
  // The CREATE VIEW statements of `sql` (schema_views.cpp).
  bool create_views(const std::string& sql, std::string* error);
  sql::sqlite3_stmt* prepare(const std::string& sql);
  // Each group's statements, next to its row writers.
  void prepare_meta();
  void prepare_info();
  void prepare_events();
  void prepare_pc();
  void run(sql::sqlite3_stmt* s);
  // One-off statements (base rows, end times): prepared, run once, finalized.
  template <class Bind>
  void run_once(const std::string& sql, Bind&& bind_all) {
    sql::sqlite3_stmt* s = prepare(sql);
    if (s == nullptr) return;
    bind_all(s);
    run(s);
    api_->finalize(s);
  }

  // ---- batched rows (rows_batch.cpp)
  // The hottest tables' rows wait here and go in up to kBatchRows at a time, by one multi-row
  // INSERT: SQLite's per-statement work (AUTOINCREMENT's read and write of sqlite_sequence,
  // opening the table) is paid once per batch instead of once per row. Every batch is flushed
  // before each commit, so what a commit covers is exactly what was handed to the writer
  // before it. Rows keep their order (one batch per table).
  enum BatchKind { kBatchEvent, kBatchRegion, kBatchKernel, kBatchCopy, kBatchSample, kBatchCount };
  static constexpr int kBatchRows = 32;
  static constexpr int kBatchSizes[] = {32, 8, 2, 1};  // statements per batch, largest first
  struct Value {
    enum Kind : uint8_t { kInt, kNull, kReal, kText } kind;
    uint32_t len;
    union {
      int64_t i;
      double d;
      uint64_t off;  // into Batch::text
    };
  };
  struct Batch {
    std::string head, row;  // "INSERT INTO t(columns) VALUES ", "(?,…)" with `params` ?s
    int params = 0;
    int rows = 0;
    bool keyed = false;  // the first column is the row's id (sort_by_id)
    std::vector<Value> values;
    std::string text;
    sql::sqlite3_stmt* stmts[4] = {};  // per kBatchSizes, prepared when first needed
  };
  void batch_init(BatchKind k, std::string head, std::string row);
  void add(Batch& b, int64_t v) { b.values.push_back(Value{Value::kInt, 0, {v}}); }
  void add(Batch& b, double v) {
    Value x{Value::kReal, 0, {0}};
    x.d = v;
    b.values.push_back(x);
  }
  void add(Batch& b, Id id) {
    if (id.value == 0)
      b.values.push_back(Value{Value::kNull, 0, {0}});
    else
      add(b, static_cast<int64_t>(id.value));
  }
  void add(Batch& b, std::string_view v);  // copied: the text may change before the flush
  void end_row(Batch& b) {
    if (++b.rows == kBatchRows) flush(b);
  }
  void flush(Batch& b);
  void sort_by_id(Batch& b);
  void flush_all();
  void bind_values(sql::sqlite3_stmt* s, const Batch& b, std::size_t first, std::size_t n);
  void finalize_batches();
  Batch batches_[kBatchCount];

  void bind(sql::sqlite3_stmt* s, int i, int64_t v) { api_->bind_int64(s, i, v); }
  void bind(sql::sqlite3_stmt* s, int i, double v) { api_->bind_double(s, i, v); }
  void bind(sql::sqlite3_stmt* s, int i, Id id) {
    if (id.value == 0)
      api_->bind_null(s, i);
    else
      api_->bind_int64(s, i, id.value);
  }
  void bind(sql::sqlite3_stmt* s, int i, const std::optional<int64_t>& v) {
    if (v)
      api_->bind_int64(s, i, *v);
    else
      api_->bind_null(s, i);
  }
  // Copied by SQLite: the text may change before the statement runs.
  void bind(sql::sqlite3_stmt* s, int i, std::string_view v) {
    api_->bind_text(s, i, v.data(), static_cast<int>(v.size()), sql::kTransient);
  }
  void bind(sql::sqlite3_stmt* s, int i, const std::string& v) { bind(s, i, std::string_view(v)); }
  // Not copied: the text outlives the step that follows (hot rows).
  void bind_static(sql::sqlite3_stmt* s, int i, std::string_view v) {
    api_->bind_text(s, i, v.data(), static_cast<int>(v.size()), nullptr);
  }

  // A write error of the output itself (not of one statement).
  bool storage_error(int rc);
  void fail_storage(int rc);
  void close_failed(const std::optional<ProcessEndRow>& end);
  void build_indexes();
  void reserve_space();

  // ---- bounded runs (rows_steps.cpp)
  void prepare_steps();
  void finalize_steps();
  int64_t pragma_int(const char* sql);
  uint64_t bounded_bytes_ = 0;  // 0: not bounded
  uint64_t wal_bytes_ = 0;
  sql::sqlite3_stmt* step_stmts_[4 + 2 * kMarkTables] = {};  // rows_steps.cpp's order

  const sql::Api* api_ = nullptr;
  sql::sqlite3* db_ = nullptr;
  sql::sqlite3_stmt* stmts_[kStmtCount] = {};
  std::string path_, suffix_;
  int64_t pid_ = 0;
  bool in_txn_ = false;
  bool failed_ = false;  // a statement did not prepare (schema and writer disagree)
  bool guid_per_row_ = false;
  bool quiet_ = false;  // no per-row error lines once the output has failed
  // After a storage failure nothing more is inserted; what was committed stays valid.
  std::string failure_;
  bool closed_complete_ = false;
  uint64_t txn_records_ = 0;         // records in the open transaction
  uint64_t last_checkpoint_ns_ = 0;  // steady clock
  bool synced_ = false;              // synchronous=NORMAL (from the first commit of records on)
  std::atomic<uint64_t> unstored_{0};
  std::vector<std::pair<std::string, std::string>> late_metadata_;  // written at close
  int reserve_fd_ = -1;  // space given back to the disk when it is full
};

}  // namespace rocprof::rocpd
