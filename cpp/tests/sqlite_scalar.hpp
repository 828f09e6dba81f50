// Tests: the first column of a query's first row, read back through SQLite from a database the
// sink wrote (-1 when the query gives no row or fails).
#pragma once
#include <cstdint>
#include <string>

#include "storage/sqlite_api.hpp"

namespace rocprof::testing {

inline int64_t sql_scalar(const std::string& path, const std::string& query,
                          int open_flags = sql::kOpenReadWrite) {
  std::string error;
  const sql::Api* api = sql::api(&error);
  sql::sqlite3* db = nullptr;
  api->open_v2(path.c_str(), &db, open_flags, nullptr);
  sql::sqlite3_stmt* s = nullptr;
  int64_t v = -1;
  if (api->prepare_v2(db, query.c_str(), -1, &s, nullptr) == sql::kOk && api->step(s) == sql::kRow)
    v = api->column_int64(s, 0);
  api->finalize(s);
  api->close_v2(db);
  return v;
}

}  // namespace rocprof::testing
