// The process-wide profiling session: owns the current Collector, resolves the output path,
// and keeps recording correct across fork() (the child gets its own database).
//
// Producers reach the session through current(): one atomic load. A Collector is never
// freed while the process lives, so a producer racing with stop() touches valid memory.
#pragma once
#include <atomic>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "buffer/collector.hpp"
#include "capture/settings.hpp"

namespace rocprof {
class CaptureContext;
}

namespace rocprof::session {

struct Config {
  // The database path with its placeholders (output_path.hpp), expanded in the process that
  // writes (a fork child again, for its own %pid%); `argv` is the profiled program's command
  // line for %tag%/%argt% (empty: the process's own).
  std::string output_template;
  std::vector<std::string> argv;
  bool strict = false;  // --no-clobber: an existing file is an error, never replaced or renamed
  std::string options_json = "{}";
  std::vector<std::pair<std::string, std::string>> metadata;
  CollectorOptions collector;
  bool null_sink = false;     // benchmarks: records are drained and discarded
  bool follow_fork = true;    // children of fork() record into their own database
  bool guid_per_row = false;  // the guid column stored in every row (rocpd/schema/tables.sql)
  // What each capture backend collects: typed, validated at start (one line naming the bad
  // option), handed to every backend through capture/context.hpp.
  CaptureSettings settings;
};

struct BackendStatus {
  std::string name;
  bool compiled = true;
  bool live = false;
  std::string reason;
};
// Every registered backend's status, or only the one named `only` (a probe may load libraries:
// a session asks about the backends its options need, not all of them).
std::vector<BackendStatus> backend_statuses(const std::string& only = "");

bool start(const Config& config, std::string* error);
// With a deadline (CLOCK_BOOTTIME ns), what is not written by then is counted instead
// (Collector::stop): a fatal signal's stop.
void stop(uint64_t drain_deadline_ns = 0);
void flush();

extern std::atomic<Collector*> g_current;

inline Collector* current() noexcept { return g_current.load(std::memory_order_acquire); }
// A session runs and ROCTx is not paused (roctxProfilerPause lives with the markers).
bool recording() noexcept;

StringTable& strings();
// The running session's capture context (null when none runs): for bindings and tests.
CaptureContext* context();
std::string current_path();
// Interned ids of domain names used by several producers.
uint32_t category_id(const char* name);

// Starts a session from ROCPROF_AUTOSTART_* (see autostart.cpp) unless one is running.
// Called by the native entry libraries (libroctx64's constructor, the CUDA injection).
bool autostart();

// The database path of `config` for this process (output_path.hpp: expand); a fork child
// whose path equals its parent's gets "_<pid>" before "_results.db".
bool resolve_path(const Config& config, bool fork_child, std::string* out, std::string* error);

// Around exec*(): the database is closed first (drained, committed, checkpointed: the new
// image starts its own), and opened anew under another name if the exec failed.
void before_exec();
void after_failed_exec();

}  // namespace rocprof::session
