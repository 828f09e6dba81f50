#include "rocpd_status.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "sqlite_api.hpp"

namespace rocprof::rocpd {

FileStatus read_status(const std::string& path) {
  FileStatus out;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    out.error = std::strerror(errno);
    return out;
  }
  if (st.st_size == 0) {
    out.error = "empty file (its writer never got to create the database)";
    return out;
  }
  const sql::Api* api = sql::api(&out.error);
  if (api == nullptr) return out;
  sql::sqlite3* db = nullptr;
  if (api->open_v2(path.c_str(), &db, sql::kOpenReadOnly, nullptr) != sql::kOk) {
    out.error = db ? api->errmsg(db) : "cannot open";
    if (db) api->close_v2(db);
    return out;
  }
  // Every part's metadata (a merged file holds several): the least complete status wins.
  sql::sqlite3_stmt* s = nullptr;
  const char* q =
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'rocpd_metadata*'";
  std::string tables_error;
  std::vector<std::string> tables;
  if (api->prepare_v2(db, q, -1, &s, nullptr) == sql::kOk) {
    while (api->step(s) == sql::kRow)
      tables.emplace_back(reinterpret_cast<const char*>(api->column_text(s, 0)));
    api->finalize(s);
  } else {
    tables_error = api->errmsg(db);
  }
  if (!tables_error.empty() || tables.empty()) {
    out.error = tables_error.empty() ? "not a rocpd database (no rocpd_metadata table)"
                                     : "not a readable SQLite database (" + tables_error + ")";
    api->close_v2(db);
    return out;
  }
  out.readable = true;
  for (const std::string& t : tables) {
    const std::string sql = "SELECT value FROM \"" + t + "\" WHERE tag = '" + kStatusTag + "'";
    if (api->prepare_v2(db, sql.c_str(), -1, &s, nullptr) != sql::kOk) continue;
    if (api->step(s) == sql::kRow) {
      const char* v = reinterpret_cast<const char*>(api->column_text(s, 0));
      const std::string status = v ? v : "";
      if (out.status.empty() || out.status == kStatusComplete) out.status = status;
    }
    api->finalize(s);
  }
  api->close_v2(db);
  return out;
}

}  // namespace rocprof::rocpd
