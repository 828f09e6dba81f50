// Benchmark-only binding (rocprof._core_testing._bench_baseline_insert, used by
// benchmarks/b4_throughput.py): B4's baseline, the rows the sink writes for n ROCTx ranges
// inserted by the plainest loop SQLite allows (two prepared statements, one transaction, same
// schema and pragmas). The sink's sustained rate is judged against this. It lives in the test
// module, so that nothing shipped carries benchmark code.
#include <stdexcept>
#include <string>

#include "bindings/registry.hpp"
#include "rocprof/clock.hpp"
#include "session/output_path.hpp"
#include "storage/rocpd_sink.hpp"
#include "storage/sqlite_api.hpp"

namespace py = pybind11;

namespace {

using namespace rocprof;

// Returns nanoseconds spent; *error set and 0 returned on failure.
uint64_t baseline_bulk_insert(const std::string& path, uint64_t n, std::string* error) {
  // The schema comes from the sink itself so both sides write into identical tables.
  SessionInfo info;
  info.path = path;
  info.guid = "00000000-0000-7000-8000-000000000000";
  session::output::Claim claim;
  if (!session::output::claim(path, false, &claim, error)) return 0;
  session::output::release(&claim);  // a fresh file of our own: written below
  {
    RocpdSink sink;
    if (!sink.open(info, error)) return 0;
    sink.write_strings(1, {"MARKER_CORE_API", "bench"});
    sink.close(0);
  }
  const sql::Api* api = sql::api(error);
  sql::sqlite3* db = nullptr;
  if (api->open_v2(path.c_str(), &db, sql::kOpenReadWrite, nullptr) != sql::kOk) {
    if (error) *error = "cannot reopen baseline database";
    return 0;
  }
  const std::string sfx = rocpd_suffix(info.guid);
  api->exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nullptr, nullptr, nullptr);
  sql::sqlite3_stmt* ev = nullptr;
  sql::sqlite3_stmt* rg = nullptr;
  api->prepare_v2(db,
                  ("INSERT INTO \"rocpd_event" + sfx +
                   "\"(id, category_id, stack_id, parent_stack_id, "
                   "correlation_id, call_stack, line_info, extdata) VALUES (?,1,0,0,0,'{}','{}',?)")
                      .c_str(),
                  -1, &ev, nullptr);
  api->prepare_v2(db,
                  ("INSERT INTO \"rocpd_region" + sfx +
                   "\"(nid, pid, tid, start, \"end\", name_id, "
                   "event_id, extdata) VALUES (1,1,1,?,?,2,?,'{}')")
                      .c_str(),
                  -1, &rg, nullptr);
  static const char kExt[] = "{\"message\":\"bench\"}";
  const uint64_t t0 = now_ns();
  api->exec(db, "BEGIN;", nullptr, nullptr, nullptr);
  for (uint64_t i = 1; i <= n; ++i) {
    api->bind_int64(ev, 1, static_cast<int64_t>(i));
    api->bind_text(ev, 2, kExt, sizeof kExt - 1, nullptr);
    api->step(ev);
    api->reset(ev);
    api->bind_int64(rg, 1, static_cast<int64_t>(1000 + 2 * i));
    api->bind_int64(rg, 2, static_cast<int64_t>(1001 + 2 * i));
    api->bind_int64(rg, 3, static_cast<int64_t>(i));
    api->step(rg);
    api->reset(rg);
  }
  api->exec(db, "COMMIT;", nullptr, nullptr, nullptr);
  const uint64_t t1 = now_ns();
  api->finalize(ev);
  api->finalize(rg);
  api->close_v2(db);
  return t1 - t0;
}

void bind(py::module_& m) {
  m.def(
      "_bench_baseline_insert",
      [](const std::string& path, uint64_t n) {
        std::string error;
        uint64_t ns;
        {
          py::gil_scoped_release nogil;
          ns = baseline_bulk_insert(path, n, &error);
        }
        if (ns == 0) throw std::runtime_error(error);
        return ns;
      },
      py::arg("path"), py::arg("n"), "benchmark B4 only: ns to insert n ranges with a bare loop");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
