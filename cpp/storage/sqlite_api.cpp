#include "sqlite_api.hpp"

#include <dlfcn.h>

#include <mutex>

namespace rocprof::sql {
namespace {

template <class F>
bool load(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(lib ? dlsym(lib, name) : dlsym(RTLD_DEFAULT, name));
  return out != nullptr;
}

bool load_all(void* lib, Api& a) {
  return load(lib, "sqlite3_open_v2", a.open_v2) && load(lib, "sqlite3_close_v2", a.close_v2) &&
         load(lib, "sqlite3_exec", a.exec) && load(lib, "sqlite3_free", a.free) &&
         load(lib, "sqlite3_prepare_v2", a.prepare_v2) &&
         load(lib, "sqlite3_bind_int64", a.bind_int64) &&
         load(lib, "sqlite3_bind_double", a.bind_double) &&
         load(lib, "sqlite3_bind_text", a.bind_text) &&
         load(lib, "sqlite3_bind_null", a.bind_null) && load(lib, "sqlite3_step", a.step) &&
         load(lib, "sqlite3_reset", a.reset) && load(lib, "sqlite3_finalize", a.finalize) &&
         load(lib, "sqlite3_errmsg", a.errmsg) && load(lib, "sqlite3_changes", a.changes) &&
         load(lib, "sqlite3_column_int64", a.column_int64) &&
         load(lib, "sqlite3_column_text", a.column_text) &&
         load(lib, "sqlite3_libversion_number", a.libversion_number);
}

}  // namespace

bool load_sqlite_of(const std::string& module, std::string* error) {
  // Never closed: the module's own import later finds it mapped already.
  if (dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr) return true;
  if (error) *error = dlerror();
  return false;
}

const Api* api(std::string* error) {
  static Api a{};
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    if (load_all(nullptr, a)) {  // already in the process (Python's sqlite3 module)
      ok = true;
      return;
    }
    for (const char* name : {"libsqlite3.so.0", "libsqlite3.so"}) {
      if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL); lib && load_all(lib, a)) {
        ok = true;
        return;
      }
    }
  });
  if (!ok && error)
    *error = "SQLite library not found (install libsqlite3-0, or import sqlite3 first)";
  return ok ? &a : nullptr;
}

}  // namespace rocprof::sql
