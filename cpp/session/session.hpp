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

namespace rocprof::session {

struct Config {
  std::string output_template;  // may hold %pid% / %ppid%, resolved here (and again in children)
  std::string options_json = "{}";
  std::vector<std::pair<std::string, std::string>> metadata;
  CollectorOptions collector;
  bool null_sink = false;        // benchmarks: records are drained and discarded
  bool follow_fork = true;       // children of fork() record into their own database
  // Backend settings as text ("cupti.kernel" = "1", "sampling.hz" = "1000", ...): backends
  // read them in on_start through option(), so no backend needs its own configure call.
  std::map<std::string, std::string> backend_options;
};

// A hook a capture backend registers to start/stop with the session (CUPTI, sampling, ...).
struct Backend {
  const char* name;
  void (*on_start)(Collector&);   // may be null
  void (*on_stop)(Collector&);    // before the final drain; flush device buffers here
  void (*on_fork_child)();        // may be null
  // Whether the backend can work on this machine, and why not (rocprof info). May be null.
  void (*probe)(bool* live, std::string* reason);
};
void register_backend(const Backend& b);

struct BackendStatus {
  std::string name;
  bool compiled = true;
  bool live = false;
  std::string reason;
};
std::vector<BackendStatus> backend_statuses();

bool start(const Config& config, std::string* error);
void stop();
void flush();

extern std::atomic<Collector*> g_current;
extern std::atomic<bool> g_paused;

inline Collector* current() noexcept { return g_current.load(std::memory_order_acquire); }
inline bool recording() noexcept {
  return current() != nullptr && !g_paused.load(std::memory_order_relaxed);
}

StringTable& strings();
// A backend option of the running (or last started) session; `fallback` when unset.
std::string option(const std::string& name, const std::string& fallback = "");
std::string current_path();
// Interned ids of domain names used by several producers.
uint32_t category_id(const char* name);

// Starts a session from ROCPROF_AUTOSTART_* (see autostart.cpp) unless one is running.
// Called by the native entry libraries (libroctx64's constructor, the CUDA injection).
bool autostart();

// Database path for a template: %pid%, %ppid%, %rank% replaced; children of a fork whose template
// has no %pid% get "_<pid>" before "_results.db" so they never overwrite the parent's file.
std::string resolve_path(const std::string& tmpl, bool fork_child);
// Under `rocprof run -- CMD` (ROCPROF_MANIFEST set): lists `path` in the run's manifest and
// returns it, or NAME_<pid>_results.db when another process of the run already took it.
std::string claim_in_manifest(const std::string& path);

}  // namespace rocprof::session
