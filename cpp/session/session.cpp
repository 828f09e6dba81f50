#include "session.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "capture/context.hpp"
#include "capture/markers/markers.hpp"
#include "session/capture_context.hpp"
#include "rocprof/clock.hpp"
#include "rocprof/version.hpp"
#include "storage/rocpd_sink.hpp"
#include "os_facts.hpp"
#include "signals.hpp"
#include "system_info.hpp"

namespace rocprof::session {

std::atomic<Collector*> g_current{nullptr};

namespace {

// Leaked on purpose: producers and exit handlers may run after static destructors, and
// backends register from static initialisers in other translation units.
StringTable& strings_() {
  static auto* t = new StringTable();
  return *t;
}
std::mutex& control_() {
  static auto* m = new std::mutex();
  return *m;
}
std::string& path_() {
  static auto* p = new std::string();
  return *p;
}
Config* g_config = nullptr;
SessionContext* g_context = nullptr;  // leaked with its collector
bool g_handlers_installed = false;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

bool start_locked(const Config& config, bool fork_child, std::string* error) {
  SessionInfo info;
  fill_system_info(info);
  info.init_ns = now_ns();
  info.guid = make_uuid_v7();
  info.path = claim_in_manifest(resolve_path(config.output_template, fork_child));
  info.options_json = config.options_json;
  {
    const CaptureSettings& s = g_config != nullptr ? g_config->settings : config.settings;
    info.kernel_rename = s.markers.kernel_rename;
    info.redact_text = s.markers.redact_text;
    info.guid_per_row = g_config != nullptr ? g_config->guid_per_row : config.guid_per_row;
  }
  info.metadata = config.metadata;
  info.metadata.emplace_back("rocprof.version", kVersion);
  if (fork_child) info.metadata.emplace_back("rocprof.forked_from", std::to_string(getppid()));

  // Every database is new: strings interned by earlier sessions of this process (ids are
  // kept for the process's life) must be written into this one too.
  strings_().rewind_taken();
  std::unique_ptr<Sink> sink;
  if (config.null_sink)
    sink = std::make_unique<NullSink>();
  else
    sink = std::make_unique<RocpdSink>();
  CollectorOptions opts = config.collector;
  opts.open_lazily = fork_child;  // a child that only execs leaves no empty database behind
  opts.thread_name = thread_name;
  if (!config.null_sink) opts.prepare_output = prepare_output;
  auto* c = new Collector(std::move(sink), info, strings_(), opts);
  if (!c->start(error)) {
    delete c;
    return false;
  }
  path_() = info.path;
  g_current.store(c, std::memory_order_release);
  g_context = new SessionContext(*c);
  const CaptureSettings& settings = g_config != nullptr ? g_config->settings : config.settings;
  capture::set_running(g_context, &settings);
  for (Backend* b : capture::backends()) {
    std::string why;
    if (!b->start(*g_context, settings, &why) && !why.empty())
      std::fprintf(stderr, "rocprof: %s: %s\n", b->name(), why.c_str());
  }
  return true;
}

void stop_locked() {
  Collector* c = g_current.load();
  if (c == nullptr) return;
  capture::set_running(nullptr, nullptr);
  for (Backend* b : capture::backends()) b->stop(*g_context);
  g_current.store(nullptr, std::memory_order_release);
  c->stop();
  // `c` is not deleted: a producer may still hold the pointer it loaded before the store.
}

void before_fork() {
  control_().lock();
  if (Collector* c = g_current.load()) c->before_fork();
  strings_().lock();
}

void after_fork_parent() {
  strings_().unlock();
  if (Collector* c = g_current.load()) c->after_fork_parent();
  control_().unlock();
}

void after_fork_child() {
  strings_().unlock();
  strings_().reset_after_fork();
  Collector* c = g_current.load();
  if (c != nullptr) {
    c->after_fork_child();
    g_current.store(nullptr);
    capture::set_running(nullptr, nullptr);
    for (Backend* b : capture::backends()) b->fork_child();
    if (g_config != nullptr && g_config->follow_fork) {
      std::string error;
      start_locked(*g_config, /*fork_child=*/true, &error);
    }
  }
  new (&control_()) std::mutex();  // held by the forking thread in the parent's image
}

void at_exit() {
  // Programs that never call stop (C programs using libroctx64, or a Python interpreter
  // shutting down with a session open) still leave a complete database.
  signals::Deferred defer;
  std::lock_guard<std::mutex> g(control_());
  stop_locked();
}

}  // namespace

std::vector<BackendStatus> backend_statuses() {
  std::vector<BackendStatus> out;
  for (Backend* b : capture::backends()) {
    BackendStatus s{b->name(), true, true, ""};
    b->probe(&s.live, &s.reason);
    out.push_back(s);
  }
  return out;
}

std::string resolve_path(const std::string& tmpl, bool fork_child) {
  std::string path = tmpl;
  if (fork_child && path.find("%pid%") == std::string::npos) {
    const std::string tail = "_results.db";
    const auto at = path.rfind(tail);
    const std::string tag = "_" + std::to_string(getpid());
    if (at != std::string::npos && at + tail.size() == path.size())
      path.insert(at, tag);
    else
      path += tag;
  }
  path = replace_all(path, "%pid%", std::to_string(getpid()));
  path = replace_all(path, "%ppid%", std::to_string(getppid()));
  if (path.find("%rank%") != std::string::npos) {
    // The global-rank variables, in the order rocprof.paths.rank() and rocpd read them.
    std::string rank = "0";
    for (const char* var :
         {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "PMIX_RANK"}) {
      const char* v = std::getenv(var);
      if (v != nullptr && *v != '\0' &&
          std::string(v).find_first_not_of("0123456789") == std::string::npos) {
        rank = v;
        break;
      }
    }
    path = replace_all(path, "%rank%", rank);
  }
  return path;
}

bool start(const Config& config, std::string* error) {
  signals::Deferred defer;  // before the lock: released after it
  std::lock_guard<std::mutex> g(control_());
  if (g_current.load() != nullptr) {
    if (error) *error = "a profiling session is already running in this process";
    return false;
  }
  std::string why;
  if (!capture::validate(config.settings, &why)) {
    if (error) *error = why;
    return false;
  }
  if (!g_handlers_installed) {
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    std::atexit(at_exit);
    signals::install();
    g_handlers_installed = true;
  }
  delete g_config;
  g_config = new Config(config);
  return start_locked(config, false, error);
}

void stop() {
  signals::Deferred defer;
  std::lock_guard<std::mutex> g(control_());
  stop_locked();
}

void flush() {
  if (Collector* c = current()) c->flush();
}

StringTable& strings() { return strings_(); }

bool recording() noexcept { return current() != nullptr && !markers::paused(); }

namespace {
// Capture code interns through the process's table, also between sessions.
struct InstallInterner {
  InstallInterner() {
    capture::set_interner(
        [](std::string_view s) noexcept -> uint32_t { return strings_().intern_cached(s); });
  }
} g_install_interner;
}  // namespace

CaptureContext* context() { return current() != nullptr ? g_context : nullptr; }

std::string current_path() { return current() ? path_() : std::string(); }

uint32_t category_id(const char* name) { return strings_().intern_cached(name); }

}  // namespace rocprof::session
