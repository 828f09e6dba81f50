#include "session.hpp"

#include <dlfcn.h>
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
#include "output_path.hpp"
#include "run_manifest.hpp"
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
// The running session's database: its name is settled (claimed) when the file is created,
// on the drain thread for a lazily opened fork child, so readers take the lock.
std::mutex& path_mu_() {
  static auto* m = new std::mutex();
  return *m;
}
std::string& path_() {
  static auto* p = new std::string();
  return *p;
}
output::Claim& claim_() {
  static auto* c = new output::Claim();
  return *c;
}
std::string& parent_path_() {  // the expansion a fork child compares its own with
  static auto* p = new std::string();
  return *p;
}
Config* g_config = nullptr;
std::atomic<long> g_owner_pid{0};     // the process whose session this is (see before_exec)
SessionContext* g_context = nullptr;  // leaked with its collector
bool g_handlers_installed = false;
// Around an exec (before_exec): whether it closed a session, and how deep the wrappers are.
// They nest (rocprof.session's os.exec*, librocprof_exec's, libroctx64's, one calling the
// next): the outermost closes the session and, if the exec fails, resumes it.
bool g_stopped_for_exec = false;
int g_exec_depth = 0;

// Creates the database file under its final name (output_path.hpp: claim) just before the
// sink opens it; says so when the name asked for was taken.
bool claim_output(std::string* path, bool strict, std::string* error) {
  output::Claim c;
  if (!output::claim(*path, strict, &c, error)) return false;
  if (!c.note.empty()) std::fprintf(stderr, "rocprof: %s\n", c.note.c_str());
  std::lock_guard<std::mutex> g(path_mu_());
  output::release(&claim_());
  claim_() = c;
  *path = c.path;
  path_() = c.path;
  return true;
}

bool start_locked(const Config& config, bool fork_child, std::string* error) {
  SessionInfo info;
  fill_system_info(info);
  info.init_ns = now_ns();
  info.guid = make_uuid_v7();
  if (!resolve_path(config, fork_child, &info.path, error)) {
    if (fork_child)
      std::fprintf(stderr, "rocprof: not recording pid %d: %s\n", getpid(), error->c_str());
    return false;
  }
  info.options_json = config.options_json;
  {
    const CaptureSettings& s = g_config != nullptr ? g_config->settings : config.settings;
    info.kernel_rename = s.markers.kernel_rename;
    info.redact_text = s.markers.redact_text;
    info.max_size = std::strtoull(s.bounded.max_size.c_str(), nullptr, 10);
    info.keep = s.bounded.keep;
    const auto gpu = [](bool on, ActivitySet a) {
      return on && (a.has(Activity::kernels) || a.has(Activity::copies));
    };
    info.gpu_records =
        gpu(s.cupti.enabled, s.cupti.activities) || gpu(s.hsa.enabled, s.hsa.activities);
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
  opts.thread_name = [](uint32_t tid) { return thread_name(tid); };
  opts.take_late_records = [] { return markers::take_late_records(); };
  opts.resolve_site = [](uint64_t key, bool wait, bool* pending) {
    return capture::resolve_site(key, wait, pending);
  };
  if (!config.null_sink) {
    const bool strict = config.strict;
    opts.prepare_output = [strict](std::string* path, std::string* why) {
      return claim_output(path, strict, why);
    };
    opts.abandon_output = [](const std::string& path) {
      // The file this process created and could not make a database of (a full disk):
      // nothing is left behind that readers would take for a database.
      std::lock_guard<std::mutex> g(path_mu_());
      manifest::Lock run;
      for (const char* ext : {"", "-wal", "-shm", "-journal"}) ::unlink((path + ext).c_str());
      run.remove(path);
      output::release(&claim_());
    };
    opts.output_complete = [](const std::string& path) { manifest::Lock().closed_complete(path); };
  }
  {
    std::lock_guard<std::mutex> g(path_mu_());
    path_() = info.path;
    if (!fork_child) parent_path_() = info.path;
  }
  auto* c = new Collector(std::move(sink), info, strings_(), opts);
  if (!c->start(error)) {
    delete c;
    return false;
  }
  g_owner_pid.store(getpid());
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

void stop_locked(uint64_t drain_deadline_ns = 0) {
  Collector* c = g_current.load();
  if (c == nullptr) return;
  capture::set_running(nullptr, nullptr);
  for (Backend* b : capture::backends()) b->stop(*g_context);
  g_current.store(nullptr, std::memory_order_release);
  c->stop(drain_deadline_ns);
  // `c` is not deleted: a producer may still hold the pointer it loaded before the store.
  std::lock_guard<std::mutex> g(path_mu_());
  output::release(&claim_());  // the database is closed: its name is free for a later run
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
  new (&path_mu_()) std::mutex();
  output::forget_after_fork(&claim_());
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
  g_exec_depth = 0;  // another thread of the parent may have been on its way to an exec
  g_stopped_for_exec = false;
}

void at_exit() {
  // Programs that never call stop (C programs using libroctx64, or a Python interpreter
  // shutting down with a session open) still leave a complete database.
  signals::Deferred defer;
  std::lock_guard<std::mutex> g(control_());
  stop_locked();
}

}  // namespace

std::vector<BackendStatus> backend_statuses(const std::string& only) {
  std::vector<BackendStatus> out;
  for (Backend* b : capture::backends()) {
    if (!only.empty() && only != b->name()) continue;
    BackendStatus s{b->name(), true, true, ""};
    b->probe(&s.live, &s.reason);
    out.push_back(s);
  }
  return out;
}

bool resolve_path(const Config& config, bool fork_child, std::string* out, std::string* error) {
  if (!output::expand(config.output_template, config.argv, out, error)) return false;
  // A fork child whose template names no per-process value (%pid%) would write its parent's
  // file: it gets "_<pid>" before "_results.db".
  std::lock_guard<std::mutex> g(path_mu_());
  if (fork_child && *out == parent_path_()) *out = output::with_pid_tag(*out, getpid());
  return true;
}

namespace {
// `rocprof run -- CMD` preloads librocprof_exec (inject/exec_preload.cpp) into the command's
// processes: its exec family reaches this session also where the program's exec calls never
// reach libroctx64's (the session was started by an injected tool library, or by libroctx64
// opened with dlopen). Found in the global scope, where preloaded libraries are.
void register_exec_hooks() {
  using Register = void (*)(void (*)(), void (*)());
  if (auto reg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "rocprof_exec_hooks")))
    reg(&before_exec, &after_failed_exec);
}
}  // namespace

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
    register_exec_hooks();
    g_handlers_installed = true;
  }
  delete g_config;
  g_config = new Config(config);
  return start_locked(config, false, error);
}

void stop(uint64_t drain_deadline_ns) {
  signals::Deferred defer;
  std::lock_guard<std::mutex> g(control_());
  stop_locked(drain_deadline_ns);
}

void before_exec() {
  // A vfork() child runs in its parent's memory until it execs: the session it sees is the
  // parent's, which it must neither stop nor lock.
  if (g_owner_pid.load() != getpid()) return;
  signals::Deferred defer;
  std::lock_guard<std::mutex> g(control_());
  if (g_exec_depth++ > 0) return;
  g_stopped_for_exec = g_current.load() != nullptr;
  stop_locked();
}

void after_failed_exec() {
  if (g_owner_pid.load() != getpid()) return;
  signals::Deferred defer;
  std::lock_guard<std::mutex> g(control_());
  if (g_exec_depth == 0 || --g_exec_depth > 0) return;
  const bool resume = g_stopped_for_exec;
  g_stopped_for_exec = false;
  if (!resume || g_current.load() != nullptr || g_config == nullptr) return;
  std::string error;
  if (!start_locked(*g_config, false, &error))
    std::fprintf(stderr, "rocprof: exec failed and recording could not resume: %s\n",
                 error.c_str());
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

std::string current_path() {
  if (current() == nullptr) return std::string();
  std::lock_guard<std::mutex> g(path_mu_());
  return path_();
}

uint32_t category_id(const char* name) { return strings_().intern_cached(name); }

}  // namespace rocprof::session
