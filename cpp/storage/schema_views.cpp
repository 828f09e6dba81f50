// The schema's views, written as the rows of sqlite_master SQLite would write for them.
//
// A view is one row of sqlite_master (type 'view', rootpage 0, the statement's text) and no
// pages of its own. Running CREATE VIEW parses each view twice (the statement, then the new
// schema row that SQLite reads back), and the 43 views were two thirds of the CPU of a new
// database, which every profiled process (each followed child too) makes before or while its
// program starts (B7). The rows are inserted instead with writable_schema on, as SQLite's
// own .dump restores virtual tables; each text is what SQLite stores for the statement
// ("CREATE VIEW " and the statement from the view's name on, IF NOT EXISTS and the ';' left
// out). Readers parse them as they parse any schema when they open the file. Text not in
// that shape, or a library that refuses writable_schema (SQLITE_DBCONFIG_DEFENSIVE), gets
// the DDL as before; tests compare the rows with those CREATE VIEW makes.
#include <string_view>
#include <utility>
#include <vector>

#include "rocpd_writer.hpp"

namespace rocprof::rocpd {
namespace {

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// (name, stored text) of each `CREATE VIEW IF NOT EXISTS "name" ...;` of `sql`, in order;
// false when anything else is there besides whitespace and "--" comment lines.
bool view_rows(std::string_view sql, std::vector<std::pair<std::string, std::string>>* rows) {
  constexpr std::string_view kHead = "CREATE VIEW IF NOT EXISTS ";
  std::size_t at = 0;
  for (;;) {
    while (at < sql.size() && space(sql[at])) ++at;
    if (sql.substr(at, 2) == "--") {
      at = sql.find('\n', at);
      if (at == std::string_view::npos) return true;
      continue;
    }
    if (at >= sql.size()) return true;
    if (sql.substr(at, kHead.size()) != kHead) return false;
    const std::size_t name = at + kHead.size();
    if (name >= sql.size() || sql[name] != '"') return false;
    const std::size_t name_end = sql.find('"', name + 1);
    if (name_end == std::string_view::npos ||
        (name_end + 1 < sql.size() && sql[name_end + 1] == '"'))
      return false;  // no closing quote, or an escaped one ("" inside the name)
    std::size_t end = sql.find(";\n", name_end);
    if (end == std::string_view::npos) {
      end = sql.find_last_not_of(" \t\r\n");
      if (end == std::string_view::npos || end < name_end || sql[end] != ';') return false;
    }
    std::size_t last = end;
    while (last > name && space(sql[last - 1])) --last;
    rows->emplace_back(std::string(sql.substr(name + 1, name_end - name - 1)),
                       "CREATE VIEW " + std::string(sql.substr(name, last - name)));
    at = end + 1;
  }
}

}  // namespace

bool Writer::create_views(const std::string& sql, std::string* error) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (!view_rows(sql, &rows) || rows.empty() ||
      api_->exec(db_, "PRAGMA writable_schema=ON;", nullptr, nullptr, nullptr) != sql::kOk)
    return exec(sql, error);
  sql::sqlite3_stmt* s = nullptr;
  bool ok = api_->prepare_v2(db_,
                             "INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) "
                             "VALUES('view', ?1, ?1, 0, ?2)",
                             -1, &s, nullptr) == sql::kOk;
  std::size_t done = 0;
  for (; ok && done < rows.size(); ++done) {
    const auto& [name, text] = rows[done];
    api_->bind_text(s, 1, name.c_str(), static_cast<int>(name.size()), sql::kTransient);
    api_->bind_text(s, 2, text.c_str(), static_cast<int>(text.size()), sql::kTransient);
    ok = api_->step(s) == sql::kDone;
    api_->reset(s);
  }
  if (s != nullptr) api_->finalize(s);
  api_->exec(db_, "PRAGMA writable_schema=OFF;", nullptr, nullptr, nullptr);
  if (ok) return true;
  // Refused part way (a defensive library): the rest as DDL (CREATE VIEW IF NOT EXISTS keeps
  // the rows already in).
  return exec(sql, error);
}

}  // namespace rocprof::rocpd
