// The slice of SQLite's C API the writer uses, loaded at run time.
//
// Resolving SQLite with dlopen (the copy Python already loaded, else libsqlite3.so.0) means
// the wheel builds without SQLite's headers and never ships a second SQLite into a process
// that has one. The declarations are SQLite's stable public ABI.
#pragma once
#include <cstdint>
#include <string>

namespace rocprof::sql {

struct sqlite3;
struct sqlite3_stmt;

inline constexpr int kOk = 0;
inline constexpr int kRow = 100;
inline constexpr int kDone = 101;
inline constexpr int kOpenReadOnly = 0x00000001;
inline constexpr int kOpenReadWrite = 0x00000002;
inline constexpr int kOpenCreate = 0x00000004;
inline constexpr int kOpenNoMutex = 0x00008000;

struct Api {
  int (*open_v2)(const char*, sqlite3**, int, const char*);
  int (*close_v2)(sqlite3*);
  int (*exec)(sqlite3*, const char*, int (*)(void*, int, char**, char**), void*, char**);
  void (*free)(void*);
  int (*prepare_v2)(sqlite3*, const char*, int, sqlite3_stmt**, const char**);
  int (*bind_int64)(sqlite3_stmt*, int, int64_t);
  int (*bind_double)(sqlite3_stmt*, int, double);
  int (*bind_text)(sqlite3_stmt*, int, const char*, int, void (*)(void*));
  int (*bind_null)(sqlite3_stmt*, int);
  int (*step)(sqlite3_stmt*);
  int (*reset)(sqlite3_stmt*);
  int (*finalize)(sqlite3_stmt*);
  const char* (*errmsg)(sqlite3*);
  int (*changes)(sqlite3*);
  int64_t (*column_int64)(sqlite3_stmt*, int);
  const unsigned char* (*column_text)(sqlite3_stmt*, int);
  int (*libversion_number)();
};

// Null with *error set when no SQLite library can be found.
const Api* api(std::string* error);

// Maps `module` (Python's _sqlite3 extension) without running it, so that the SQLite library
// it links is in the process for api() to find first: the writer then uses Python's copy, as
// importing the module would make it, without the module's own imports (functools ...).
// Returns false with *error when it cannot be loaded.
bool load_sqlite_of(const std::string& module, std::string* error);

// SQLITE_TRANSIENT: SQLite copies bound text before bind returns.
inline void (*const kTransient)(void*) = reinterpret_cast<void (*)(void*)>(-1);

}  // namespace rocprof::sql
