// The rocpd SQLite sink: one database per process in ROCm's schema v3 (rocpd/schema/*.sql,
// embedded at build time). WAL journal + a commit every few hundred ms: a killed process
// leaves a database that opens and holds everything but the last moment.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sink.hpp"
#include "sqlite_api.hpp"

namespace rocprof {

class RocpdSink final : public Sink {
 public:
  RocpdSink() = default;
  ~RocpdSink() override;

  bool open(const SessionInfo& info, std::string* error) override;
  void write_strings(uint32_t first_id, const std::vector<std::string>& strings) override;
  void write_info(const InfoRow& row) override;
  void write_records(const Record* records, std::size_t n) override;
  void commit() override;
  void close(uint64_t end_ns) override;

  uint64_t unstored() const override { return unstored_.load(std::memory_order_relaxed); }
  // Why the output stopped ("" while it works): "disk full", "I/O error", "read-only".
  const std::string& storage_failure() const { return failure_; }

  const std::string& suffix() const { return suffix_; }

 private:
  enum Stmt {
    kString, kEvent, kEventPlain, kRegion, kKernel, kCopy, kAlloc, kSampleRow, kTrack, kThread, kThreadName,
    kAgent, kStream, kQueue, kSymbol, kMetaUpdate, kMetaInsert, kStmtCount
  };

  bool exec(const std::string& sql, std::string* error = nullptr);
  sql::sqlite3_stmt* prepare(const std::string& sql);
  void bind(sql::sqlite3_stmt* s, int i, int64_t v) { api_->bind_int64(s, i, v); }
  void bind_text(sql::sqlite3_stmt* s, int i, const std::string& v) {
    api_->bind_text(s, i, v.data(), static_cast<int>(v.size()), sql::kTransient);
  }
  void bind_id(sql::sqlite3_stmt* s, int i, uint32_t id) {
    if (id == 0) api_->bind_null(s, i); else api_->bind_int64(s, i, id);
  }
  void run(sql::sqlite3_stmt* s);
  // A write error of the output itself (not of one statement): see rocpd_sink_failure.cpp.
  bool storage_error(int rc);
  void fail_storage(int rc);
  void close_failed(uint64_t end_ns);
  void reserve_space();
  int64_t insert_event(const Record& r, const std::string& extdata);
  const std::string& message_json(uint32_t name_id);
  int64_t track_for(uint32_t tid, uint32_t category_id);
  void write_record(const Record& r);
  void write_metadata(const std::string& tag, const std::string& value);
  void write_base_rows(const SessionInfo& info);

  static constexpr uint64_t kMaxTxnRecords = 4096;

  const sql::Api* api_ = nullptr;
  sql::sqlite3* db_ = nullptr;
  sql::sqlite3_stmt* stmts_[kStmtCount] = {};
  SessionInfo info_;
  std::string suffix_;
  int64_t next_event_id_ = 1;
  std::vector<std::string> strings_;  // id - 1 → text, for JSON extdata
  std::vector<std::string> message_json_;  // name id → {"message": ...}, built on first use
  std::unordered_map<uint64_t, int64_t> tracks_;
  std::string scratch_;
  bool in_txn_ = false;
  bool failed_ = false;
  bool quiet_ = false;  // no per-row error lines once the output has failed
  // After a storage failure nothing more is inserted; what was committed stays valid.
  std::string failure_;
  uint64_t txn_records_ = 0;              // records in the open transaction
  std::atomic<uint64_t> unstored_{0};
  std::vector<std::pair<std::string, std::string>> late_metadata_;  // written at close
  int reserve_fd_ = -1;                   // space given back to the disk when it is full
};

// "_" + guid with '-' replaced by '_' (rocpd-schema.md).
std::string rocpd_suffix(const std::string& guid);

}  // namespace rocprof
