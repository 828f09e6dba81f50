#include "rocpd_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "rocpd_status.hpp"
#include "rocprof_schema_sql.hpp"  // generated from rocpd/schema/*.sql

namespace rocprof::rocpd {
namespace {

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fdatasync(fd);
  ::close(fd);
}

}  // namespace

Writer::~Writer() {
  if (db_ != nullptr) close(std::nullopt);
}

bool Writer::exec(const std::string& sql, std::string* error) {
  char* msg = nullptr;
  const int rc = api_->exec(db_, sql.c_str(), nullptr, nullptr, &msg);
  if (rc != sql::kOk && in_txn_ && error == nullptr && storage_error(rc)) {
    if (msg) api_->free(msg);
    fail_storage(rc);
    return false;
  }
  if (rc != sql::kOk) {
    std::string text = msg ? msg : "unknown SQLite error";
    if (msg) api_->free(msg);
    if (error)
      *error = text;
    else
      std::fprintf(stderr, "rocprof: SQLite: %s\n", text.c_str());
    return false;
  }
  return true;
}

sql::sqlite3_stmt* Writer::prepare(const std::string& text) {
  sql::sqlite3_stmt* s = nullptr;
  // {NP} and {NPV}: the columns nid, pid and their values where they are stored (tables.sql);
  // generated, they are left out.
  const std::string np = guid_per_row_ ? "nid, pid, " : "";
  const std::string npv = guid_per_row_ ? "1," + std::to_string(pid_) + "," : "";
  const std::string full =
      replace_all(replace_all(replace_all(text, "{S}", suffix_), "{NPV}", npv), "{NP}", np);
  if (api_->prepare_v2(db_, full.c_str(), -1, &s, nullptr) != sql::kOk) {
    std::fprintf(stderr, "rocprof: SQLite prepare failed: %s (%s)\n", api_->errmsg(db_),
                 full.c_str());
    failed_ = true;
  }
  return s;
}

void Writer::run(sql::sqlite3_stmt* s) {
  if (s == nullptr) return;
  const int rc = api_->step(s);
  if (rc != sql::kDone && rc != sql::kRow && in_txn_ && storage_error(rc)) {
    api_->reset(s);
    fail_storage(rc);
    return;
  }
  if (rc != sql::kDone && rc != sql::kRow && !failed_ && !quiet_) {
    std::fprintf(stderr, "rocprof: SQLite insert failed: %s\n", api_->errmsg(db_));
  }
  api_->reset(s);
}

bool Writer::open(const std::string& path, const std::string& guid, const std::string& suffix,
                  bool guid_per_row, int64_t pid, std::string* error) {
  pid_ = pid;
  if (create(path, guid, suffix, guid_per_row, error)) return true;
  abandon();
  return false;
}

// A database that could not be set up is let go without the close() path: its transaction
// is gone already (a full disk rolls it back), and a COMMIT would only add a second error.
void Writer::abandon() {
  finalize_batches();
  for (auto*& s : stmts_) {
    if (s) api_->finalize(s);
    s = nullptr;
  }
  if (db_ != nullptr) api_->close_v2(db_);
  db_ = nullptr;
  in_txn_ = false;
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
  reserve_fd_ = -1;
}

bool Writer::create(const std::string& path, const std::string& guid, const std::string& suffix,
                    bool guid_per_row, std::string* error) {
  api_ = sql::api(error);
  if (api_ == nullptr) return false;
  // Generated columns need SQLite 3.31 (2020-01); an older library stores the guid per row.
  guid_per_row_ = guid_per_row || api_->libversion_number() < 3031000;
  path_ = path;
  suffix_ = suffix;
  if (api_->open_v2(path.c_str(), &db_, sql::kOpenReadWrite | sql::kOpenCreate | sql::kOpenNoMutex,
                    nullptr) != sql::kOk) {
    if (error) *error = db_ ? api_->errmsg(db_) : "cannot open";
    if (db_) api_->close_v2(db_);
    db_ = nullptr;
    return false;
  }
  // WAL: a commit is durable against process death without a full-file rewrite;
  // A checkpoint (WAL → database) syncs the file: one per 256 MiB of WAL instead of SQLite's
  // default 4 MiB keeps the writer near a bare insert loop's rate (B4).
  // Until the first records are committed, synchronous=OFF: an OS crash then could only lose
  // a file that holds no records yet, and every process is spared the rollback journal's and
  // the first checkpoint's six fsyncs and, at that first commit, the new WAL header's sync and
  // its folder's (B7: a short process ends with the one fsync of close()). Recording runs
  // with synchronous=NORMAL, no fsync per commit: only an OS crash could lose the tail.
  // A bounded run (--max-size) gives deleted detail's pages back (auto_vacuum, set before the
  // first table) and keeps its WAL to an eighth of the budget (at most 64 MiB).
  std::string bounded;
  if (bounded_bytes_ != 0) {
    wal_bytes_ = std::min<uint64_t>(bounded_bytes_ / 8, 64ull << 20);
    bounded = "PRAGMA auto_vacuum=INCREMENTAL; ";
  }
  if (!exec(bounded +
                "PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL; PRAGMA temp_store=MEMORY; "
                "PRAGMA wal_autocheckpoint=" +
                std::to_string(bounded_bytes_ != 0 ? std::max<uint64_t>(wal_bytes_ / 4096 / 2, 16)
                                                   : 65536) +
                ";" +
                (bounded_bytes_ != 0
                     ? " PRAGMA journal_size_limit=" + std::to_string(wal_bytes_) + ";"
                     : std::string()),
            error))
    return false;
  const std::string guid_column =
      guid_per_row_ ? "DEFAULT '{{guid}}'" : "GENERATED ALWAYS AS ('{{guid}}') VIRTUAL";
  std::string tables = replace_all(schema::kTablesSql, "{{guid_column}}", guid_column);
  tables = replace_all(
      tables, "{{nid_column}}",
      guid_per_row_ ? "" : "GENERATED ALWAYS AS (" + std::to_string(kNodeId) + ") VIRTUAL");
  tables = replace_all(
      tables, "{{pid_column}}",
      guid_per_row_ ? "" : "GENERATED ALWAYS AS (" + std::to_string(pid_) + ") VIRTUAL");
  tables = replace_all(replace_all(tables, "{{uuid}}", suffix), "{{guid}}", guid);
  const std::string table_views =
      replace_all(replace_all(schema::kTableViewsSql, "{{uuid}}", suffix), "{{guid}}", guid);
  if (!exec("BEGIN;", error) || !exec(tables, error) ||
      !create_views(table_views + schema::kViewsSql, error))
    return false;
  if (bounded_bytes_ != 0 && !exec(replace_all(schema::kStepsSql, "{{uuid}}", suffix), error))
    return false;
  prepare_meta();
  prepare_info();
  prepare_events();
  prepare_pc();
  if (bounded_bytes_ != 0) prepare_steps();
  if (failed_) {
    if (error) *error = "schema and writer disagree (see the message above)";
    return false;
  }
  return true;
}

namespace {
uint64_t steady_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
}  // namespace

bool Writer::begin_recording(std::string* error) {
  // The schema and base rows reach the .db itself at once: a copy of the file alone, or one
  // whose -wal was lost, opens and says "in-progress" (until close() says otherwise).
  metadata(kStatusTag, kStatusInProgress);
  if (!exec("COMMIT; PRAGMA wal_checkpoint(PASSIVE); BEGIN;", error)) {
    abandon();
    return false;
  }
  last_checkpoint_ns_ = steady_ns();
  in_txn_ = true;
  reserve_space();
  return true;
}

void Writer::commit() {
  if (db_ == nullptr || !failure_.empty()) return;
  flush_all();
  if (!failure_.empty()) return;
  const uint64_t now = steady_ns();
  if (!synced_) {  // the first records: committed unsynced, then NORMAL (see create())
    if (!exec("COMMIT;")) return;
    in_txn_ = false;
    exec("PRAGMA synchronous=NORMAL;");
    synced_ = true;
    in_txn_ = true;
    if (exec("BEGIN;")) txn_records_ = 0;
    return;
  }
  if (bounded_bytes_ != 0 && wal_file_bytes() > wal_bytes_ / 2) {
    // A bounded run's WAL is part of its budget: folded back and cut to nothing at once.
    if (!exec("COMMIT;")) return;
    in_txn_ = false;
    api_->exec(db_, "PRAGMA wal_checkpoint(TRUNCATE);", nullptr, nullptr, nullptr);
    last_checkpoint_ns_ = now;
    in_txn_ = true;
    if (exec("BEGIN;")) txn_records_ = 0;
    return;
  }
  if (now - last_checkpoint_ns_ < kCheckpointIntervalNs) {
    if (exec("COMMIT; BEGIN;")) txn_records_ = 0;
    return;
  }
  // A checkpoint every few seconds (beside SQLite's own per 256 MiB of WAL): what a killed
  // process committed up to then is in the .db itself, readable without its -wal.
  if (!exec("COMMIT;")) return;
  in_txn_ = false;
  api_->exec(db_, "PRAGMA wal_checkpoint(PASSIVE);", nullptr, nullptr, nullptr);  // best effort
  last_checkpoint_ns_ = now;
  in_txn_ = true;
  if (exec("BEGIN;")) txn_records_ = 0;
}

void Writer::close(const std::optional<ProcessEndRow>& end) {
  if (db_ == nullptr) return;
  if (!failure_.empty()) {
    close_failed(end);
    return;
  }
  if (end) {
    process_end(*end);
    threads_end(end->end);
  }
  reapply_names();
  flush_all();
  metadata(kStatusTag, kStatusComplete);
  exec("COMMIT;");
  if (!failure_.empty()) {  // the last commit met a full disk
    close_failed(end);
    return;
  }
  finalize_batches();
  for (auto*& s : stmts_) {
    if (s) api_->finalize(s);
    s = nullptr;
  }
  // Fold the WAL back in and leave a single self-contained file that read-only readers
  // (and copies of just the .db) can open (leaving WAL mode checkpoints and removes the WAL).
  // SQLite's own fsyncs of that switch (five, with the folder's) give way to one of the
  // finished file once it is closed: an OS crash within these milliseconds could damage it;
  // once close() returns the file is on disk.
  in_txn_ = false;
  build_indexes();
  const bool folded = exec("PRAGMA synchronous=OFF; PRAGMA journal_mode=DELETE;");
  closed_complete_ = api_->close_v2(db_) == sql::kOk && folded && failure_.empty();
  db_ = nullptr;
  sync_file(path_);
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
  reserve_fd_ = -1;
}

// The start indexes, in one sorted pass over the finished tables (indexes.sql says why), in a
// transaction of their own after the records': an index that cannot be built (a full disk)
// leaves a complete database without it, never takes the last records with it. The sort spills
// to a temporary file, not to memory (temp_store=MEMORY is for the statement journals while
// recording): a run of 10 M records would otherwise hold ~200 MB at its exit.
void Writer::build_indexes() {
  const std::string sql =
      "PRAGMA temp_store=FILE; BEGIN; " +
      replace_all(replace_all(schema::kIndexesSql, "{{uuid}}", suffix_), "{{guid}}", "") +
      "COMMIT;";
  char* msg = nullptr;
  if (api_->exec(db_, sql.c_str(), nullptr, nullptr, &msg) == sql::kOk) return;
  std::fprintf(stderr,
               "rocprof: %s: the start indexes were not built (%s); every record is there, "
               "time-window queries read the whole table\n",
               path_.c_str(), msg ? msg : "unknown SQLite error");
  if (msg) api_->free(msg);
  api_->exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
}

// ---- storage failures ----------------------------------------------------------------
// A full disk used to produce one "insert failed" line per row, strings lost while their
// rows went in, "(unknown)" names and a summary saying nothing was dropped. Now the first
// write error of the output stops all inserting: the open transaction is rolled back (what
// was committed stays valid), every record from it on is counted as unstored, one line says
// so at once, and the drop counts are written at close into the room the reserve gave back.

bool Writer::storage_error(int rc) {
  switch (rc & 0xff) {
    case 8:   // SQLITE_READONLY (a read-only remount)
    case 10:  // SQLITE_IOERR
    case 11:  // SQLITE_CORRUPT
    case 13:  // SQLITE_FULL
    case 14:  // SQLITE_CANTOPEN
      return true;
    default:
      return false;
  }
}

void Writer::fail_storage(int rc) {
  const int code = rc & 0xff;
  failure_ = code == 13 ? "disk full" : code == 8 ? "read-only" : "I/O error";
  const std::string why = api_->errmsg(db_);
  unstored_.fetch_add(txn_records_, std::memory_order_relaxed);
  txn_records_ = 0;
  in_txn_ = false;
  quiet_ = true;
  api_->exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
  reserve_fd_ = -1;
  std::fprintf(stderr,
               "rocprof: cannot write %s: %s (%s): recording to it stops here; what was committed "
               "is kept, every record from now on is counted as dropped\n",
               path_.c_str(), failure_.c_str(), why.c_str());
  // Said in the database too while the reserve's room lasts (a SIGKILL may follow).
  metadata("rocprof.storage_error", failure_ + ": " + why);
}

void Writer::late_metadata(const std::string& tag, const std::string& value) {
  for (auto& kv : late_metadata_)
    if (kv.first == tag) {
      kv.second = value;
      return;
    }
  late_metadata_.emplace_back(tag, value);
}

void Writer::close_failed(const std::optional<ProcessEndRow>& end) {
  quiet_ = true;
  in_txn_ = false;
  api_->exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
  bool ok = api_->exec(db_, "BEGIN;", nullptr, nullptr, nullptr) == sql::kOk;
  if (ok) {
    metadata("rocprof.storage_error", failure_);
    metadata(kStatusTag, failure_ == "disk full" ? kStatusDiskFull : kStatusWriteError);
    for (const auto& kv : late_metadata_) metadata(kv.first, kv.second);
    if (end) process_end(*end);
    ok = api_->exec(db_, "COMMIT;", nullptr, nullptr, nullptr) == sql::kOk;
    if (!ok) api_->exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
  }
  if (!ok)
    std::fprintf(stderr, "rocprof: %s: the drop counts could not be stored either (%s)\n",
                 path_.c_str(), failure_.c_str());
  finalize_batches();  // their rows were counted as unstored with the failed transaction
  for (auto*& s : stmts_) {
    if (s) api_->finalize(s);
    s = nullptr;
  }
  // May fail for want of room: the .db and its -wal then stay a valid pair.
  api_->exec(db_, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;", nullptr, nullptr,
             nullptr);
  api_->close_v2(db_);
  db_ = nullptr;
}

// Room held back on the database's own filesystem (an unlinked file, so nothing is left
// behind whatever way the process ends) and given back when the disk fills: enough for the
// rollback, the failure and drop-count rows and the process's end time.
void Writer::reserve_space() {
  constexpr off_t kReserve = 256 * 1024;
  std::string dir = path_;
  const auto slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::string tmpl = dir + "/.rocprof-reserve-XXXXXX";
    fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(tmpl.c_str());
  }
  if (fd < 0) return;
  if (::posix_fallocate(fd, 0, kReserve) != 0) {
    ::close(fd);
    return;
  }
  reserve_fd_ = fd;
}

}  // namespace rocprof::rocpd
