// Batched rows (rocpd_writer.hpp, Batch): the values of up to kBatchRows rows of one table, and
// the multi-row INSERT statements that write them.
#include "rocpd_writer.hpp"

#include <algorithm>

namespace rocprof::rocpd {

void Writer::batch_init(BatchKind k, std::string head, std::string row) {
  Batch& b = batches_[k];
  b.head = replace_all(std::move(head), "{S}", suffix_);
  b.row = std::move(row);
  b.params = 0;
  for (char c : b.row) b.params += c == '?';
  b.keyed = b.head.find("(id, ") != std::string::npos;
  b.values.reserve(static_cast<std::size_t>(b.params) * kBatchRows);
}

void Writer::add(Batch& b, std::string_view v) {
  Value x{Value::kText, static_cast<uint32_t>(v.size()), {0}};
  x.off = b.text.size();
  b.text.append(v);
  b.values.push_back(x);
}

void Writer::bind_values(sql::sqlite3_stmt* s, const Batch& b, std::size_t first, std::size_t n) {
  int i = 1;
  for (std::size_t k = first; k < first + n; ++k) {
    const Value& v = b.values[k];
    switch (v.kind) {
      case Value::kInt:
        api_->bind_int64(s, i, v.i);
        break;
      case Value::kNull:
        api_->bind_null(s, i);
        break;
      case Value::kReal:
        api_->bind_double(s, i, v.d);
        break;
      case Value::kText:  // not copied: the text stays until the batch is cleared
        api_->bind_text(s, i, b.text.data() + v.off, static_cast<int>(v.len), nullptr);
        break;
    }
    ++i;
  }
}

// Rows whose first column is their id go in by id: nested ROCTx ranges end inner first, so
// their ids come as 2, 1, 4, 3, ... An insert below the last key of the table's last page splits
// it in two half-full ones, where rows in key order only ever append to it.
void Writer::sort_by_id(Batch& b) {
  const auto params = static_cast<std::size_t>(b.params);
  const auto rows = static_cast<std::size_t>(b.rows);
  bool sorted = true;
  for (std::size_t r = 1; r < rows && sorted; ++r)
    sorted = b.values[(r - 1) * params].i < b.values[r * params].i;
  if (sorted) return;
  std::vector<std::size_t> order(rows);
  for (std::size_t r = 0; r < rows; ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return b.values[x * params].i < b.values[y * params].i;
  });
  std::vector<Value> out;
  out.reserve(b.values.size());
  for (std::size_t r : order)
    out.insert(out.end(), b.values.begin() + static_cast<std::ptrdiff_t>(r * params),
               b.values.begin() + static_cast<std::ptrdiff_t>((r + 1) * params));
  b.values.swap(out);
}

void Writer::flush(Batch& b) {
  if (b.keyed) sort_by_id(b);
  const int rows = b.rows;
  b.rows = 0;
  std::size_t done = 0;  // rows written
  const auto params = static_cast<std::size_t>(b.params);
  while (static_cast<int>(done) < rows && db_ != nullptr && failure_.empty() && !b.head.empty()) {
    const int left = rows - static_cast<int>(done);
    int which = 0;
    while (kBatchSizes[which] > left) ++which;
    const int n = kBatchSizes[which];
    sql::sqlite3_stmt*& s = b.stmts[which];
    if (s == nullptr) {
      std::string text = b.head;
      for (int r = 0; r < n; ++r) (text += r ? "," : "") += b.row;
      s = prepare(text);
      if (s == nullptr) break;
    }
    bind_values(s, b, done * params, static_cast<std::size_t>(n) * params);
    const int rc = api_->step(s);
    api_->reset(s);
    if (rc != sql::kDone && rc != sql::kRow) {
      if (in_txn_ && storage_error(rc)) {
        fail_storage(rc);
        break;
      }
      if (n == 1) {
        if (!failed_ && !quiet_)
          std::fprintf(stderr, "rocprof: SQLite insert failed: %s\n", api_->errmsg(db_));
      } else {
        // One bad row must not take the others with it: this group again, row by row, so
        // that only that row fails (and says why).
        sql::sqlite3_stmt* one = b.stmts[3];
        if (one == nullptr) one = b.stmts[3] = prepare(b.head + b.row);
        for (int r = 0; r < n && one != nullptr && failure_.empty(); ++r) {
          bind_values(one, b, (done + static_cast<std::size_t>(r)) * params, params);
          const int rc1 = api_->step(one);
          api_->reset(one);
          if (rc1 != sql::kDone && rc1 != sql::kRow) {
            if (in_txn_ && storage_error(rc1))
              fail_storage(rc1);
            else if (!failed_ && !quiet_)
              std::fprintf(stderr, "rocprof: SQLite insert failed: %s\n", api_->errmsg(db_));
          }
        }
      }
    }
    done += static_cast<std::size_t>(n);
  }
  b.values.clear();
  b.text.clear();
}

void Writer::flush_all() {
  for (Batch& b : batches_)
    if (b.rows != 0) flush(b);
}

void Writer::finalize_batches() {
  finalize_steps();
  for (Batch& b : batches_) {
    b.rows = 0;
    b.values.clear();
    b.text.clear();
    for (auto*& s : b.stmts) {
      if (s != nullptr && api_ != nullptr) api_->finalize(s);
      s = nullptr;
    }
  }
}

}  // namespace rocprof::rocpd
