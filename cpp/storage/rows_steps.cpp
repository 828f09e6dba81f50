// Bounded runs (--max-size): the step tables' rows (rocpd/schema/steps.sql), the rowid marks
// that delimit a step's detail, its deletion, and the database's size as SQLite counts it.
// What to keep is decided by the step keeper (step_keeper.hpp), never here.
#include <sys/stat.h>

#include <algorithm>

#include "rocpd_writer.hpp"

namespace rocprof::rocpd {
namespace {

// The tables a step's records write rows into (its event, then its record's own row, then
// counter values and arguments); rocpd_track and rocpd_info_thread rows are shared and stay.
constexpr const char* kMarkTableNames[Writer::kMarkTables] = {
    "rocpd_event",           "rocpd_region", "rocpd_kernel_dispatch", "rocpd_memory_copy",
    "rocpd_memory_allocate", "rocpd_sample", "rocpd_pmc_event",       "rocpd_arg"};

enum : int {
  kSummary,
  kKernels,
  kDetail,
  kLines,
  kMax
};  // kMax + t: max(rowid); kMax + 8 + t: DELETE

}  // namespace

void Writer::prepare_steps() {
  step_stmts_[kSummary] = prepare(
      "INSERT OR REPLACE INTO \"rocprof_step_summary{S}\"(step, name_id, tid, start, \"end\", "
      "kernels, kernel_ns, gpu_busy_ns, copies, copy_bytes, pageable_copies, syncs, api_calls, "
      "records, detail, causes, energy_j, mem_alloc_bytes, mem_peak_bytes) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  step_stmts_[kKernels] = prepare(
      "INSERT INTO \"rocprof_step_kernels{S}\"(step, name_id, calls, total_ns, max_ns) "
      "VALUES (?,?,?,?,?)");
  step_stmts_[kDetail] =
      prepare("UPDATE \"rocprof_step_summary{S}\" SET detail = ?, causes = ? WHERE step = ?");
  step_stmts_[kLines] = prepare(
      "INSERT INTO \"rocprof_step_lines{S}\"(step, site_id, kernels, kernel_ns) VALUES (?,?,?,?)");
  for (int t = 0; t < kMarkTables; ++t) {
    const std::string table = std::string("\"") + kMarkTableNames[t] + "{S}\"";
    step_stmts_[kMax + t] = prepare("SELECT coalesce(max(rowid), 0) FROM " + table);
    step_stmts_[kMax + kMarkTables + t] =
        prepare("DELETE FROM " + table + " WHERE rowid > ? AND rowid <= ?");
  }
}

void Writer::finalize_steps() {
  for (auto*& s : step_stmts_) {
    if (s != nullptr && api_ != nullptr) api_->finalize(s);
    s = nullptr;
  }
}

void Writer::step_summary(const StepRow& r) {
  sql::sqlite3_stmt* s = step_stmts_[kSummary];
  if (s == nullptr) return;
  const int64_t v[] = {r.step,
                       static_cast<int64_t>(r.name_id.value),
                       r.tid,
                       r.start,
                       r.end,
                       r.kernels,
                       r.kernel_ns,
                       r.gpu_busy_ns,
                       r.copies,
                       r.copy_bytes,
                       r.pageable_copies,
                       r.syncs,
                       r.api_calls,
                       r.records,
                       r.detail};
  int i = 1;
  for (int64_t x : v) bind(s, i++, x);
  if (r.causes.empty())
    api_->bind_null(s, i);
  else
    bind(s, i, r.causes);
  if (r.has_energy)
    api_->bind_double(s, ++i, r.energy_j);
  else
    api_->bind_null(s, ++i);
  for (int64_t x : {r.mem_alloc_bytes, r.mem_peak_bytes}) {
    if (r.has_memory)
      bind(s, ++i, x);
    else
      api_->bind_null(s, ++i);
  }
  run(s);
}

void Writer::step_line(int64_t step, int64_t site_id, int64_t kernels, int64_t kernel_ns) {
  sql::sqlite3_stmt* s = step_stmts_[kLines];
  if (s == nullptr) return;
  int i = 1;
  for (int64_t x : {step, site_id, kernels, kernel_ns}) bind(s, i++, x);
  run(s);
}

void Writer::step_kernel(int64_t step, Id name_id, int64_t calls, int64_t total_ns,
                         int64_t max_ns) {
  sql::sqlite3_stmt* s = step_stmts_[kKernels];
  if (s == nullptr) return;
  bind(s, 1, step);
  bind(s, 2, static_cast<int64_t>(name_id.value));
  bind(s, 3, calls);
  bind(s, 4, total_ns);
  bind(s, 5, max_ns);
  run(s);
}

void Writer::step_detail(int64_t step, int64_t detail, std::string_view causes) {
  sql::sqlite3_stmt* s = step_stmts_[kDetail];
  if (s == nullptr) return;
  bind(s, 1, detail);
  if (causes.empty())
    api_->bind_null(s, 2);
  else
    bind(s, 2, causes);
  bind(s, 3, step);
  run(s);
}

Writer::Marks Writer::marks() {
  Marks m;
  if (db_ == nullptr || !failure_.empty()) return m;
  flush_all();
  for (int t = 0; t < kMarkTables; ++t) {
    sql::sqlite3_stmt* s = step_stmts_[kMax + t];
    if (s == nullptr) continue;
    if (api_->step(s) == sql::kRow) m.last[t] = api_->column_int64(s, 0);
    api_->reset(s);
  }
  return m;
}

void Writer::delete_rows(const Marks& before, const Marks& after) {
  if (db_ == nullptr || !failure_.empty()) return;
  flush_all();
  for (int t = 0; t < kMarkTables; ++t) {
    if (after.last[t] <= before.last[t]) continue;
    sql::sqlite3_stmt* s = step_stmts_[kMax + kMarkTables + t];
    bind(s, 1, before.last[t]);
    bind(s, 2, after.last[t]);
    run(s);
  }
}

int64_t Writer::pragma_int(const char* text) {
  int64_t v = 0;
  sql::sqlite3_stmt* s = nullptr;
  if (api_->prepare_v2(db_, text, -1, &s, nullptr) != sql::kOk) return 0;
  if (api_->step(s) == sql::kRow) v = api_->column_int64(s, 0);
  api_->finalize(s);
  return v;
}

uint64_t Writer::used_bytes() {
  if (db_ == nullptr) return 0;
  flush_all();
  const int64_t pages = pragma_int("PRAGMA page_count") - pragma_int("PRAGMA freelist_count");
  return static_cast<uint64_t>(std::max<int64_t>(pages, 0) * pragma_int("PRAGMA page_size"));
}

uint64_t Writer::wal_file_bytes() const {
  struct stat st{};
  return ::stat((path_ + "-wal").c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

void Writer::release_free_pages(int64_t pages) {
  if (db_ == nullptr || !failure_.empty()) return;
  const std::string sql = "PRAGMA incremental_vacuum(" + std::to_string(pages) + ");";
  api_->exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
}

}  // namespace rocprof::rocpd
