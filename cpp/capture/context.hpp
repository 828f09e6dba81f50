// The one door a capture backend uses: everything a backend (markers, CUPTI, HSA/HIP,
// rocprofiler-sdk, sampling, device metrics, NCCL) may do with the rest of the core. Backends
// include this header and their own settings (capture/settings.hpp), never session/, buffer/,
// storage/ or bindings/ (cpp/tests/check_capture_includes.cmake fails the tests if one does):
// the session implements the context over its collector, tests over a fake
// (cpp/tests/fake_capture_context.hpp), so most of a backend is testable without its hardware.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocprof/info.hpp"
#include "rocprof/record.hpp"
#include "rocprof/thread_records.hpp"

namespace rocprof {

struct CaptureSettings;  // capture/settings.hpp

class CaptureContext {
 public:
  virtual ~CaptureContext() = default;

  // Hot path, on any thread: into the calling thread's buffer; never blocks. false: the
  // record was dropped (past the memory budget) and counted as such.
  virtual bool emit(const Record& r) noexcept = 0;
  // The calling thread's own buffer, for a producer that keeps it per thread and session (the
  // ROCTx push/pop stack does): filling a record in place there (claim/publish) skips emit()'s
  // call, thread lookup and copy. Owner thread only; valid until the session ends. Null where
  // the context has none (tests' fakes): emit() then.
  virtual ThreadRecords* thread_records() noexcept { return nullptr; }
  // For a backend's own delivery thread (CUPTI's buffer completions), never an application
  // thread: waits for the writer instead of dropping when the buffer budget is reached.
  virtual void emit_waiting(const Record& r) = 0;
  // Interned string id, stable for the life of the process (0 is "none"). Thread-safe;
  // lock-free for strings this thread has interned before.
  virtual uint32_t intern(std::string_view s) = 0;
  // A descriptive row: AgentInfo, StreamInfo (queues too), KernelSymbolInfo, ThreadInfo,
  // MetadataInfo, StackInfo (rocprof/info.hpp). Rare; may allocate.
  virtual void info(InfoRow row) = 0;
  // Records a source lost before they reached us (CUPTI's own drops, a full table): counted,
  // stored and printed under `cause`.
  virtual void drops(const std::string& cause, uint64_t n) = 0;
  // roctxProfilerPause/Resume (and --selected-regions): records made while paused are not
  // kept. One relaxed load.
  virtual bool paused() const noexcept = 0;
  // Waits until every record emitted before the call is committed.
  virtual void flush() = 0;
  // At a backend's stop: a range still open (a push never popped), closed at the end time and
  // flagged kFlagOpenAtExit. Stored and counted as such, not as a lost record.
  virtual void closed_at_exit(const Record& r) = 0;
};

// A capture source. One instance per backend registers itself at load time (its one
// capture::Registered line, below); the session starts the registered backends in order of
// registration with the typed settings built by the launcher.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Starts collecting into `ctx` (valid until stop returns). Returns false with `why` set when
  // the backend cannot run here; the session carries on without it. A backend whose settings
  // do not ask for it returns true and does nothing.
  virtual bool start(CaptureContext& ctx, const CaptureSettings& settings, std::string* why) = 0;
  // Flush device-side buffers into the context and stop; the context drains after this.
  virtual void stop(CaptureContext& ctx) = 0;
  // In a fork child: forget the parent's state without calling the vendor library.
  virtual void fork_child() {}
  // Whether it can work on this machine, and why not (rocprof info).
  virtual void probe(bool* live, std::string* reason) = 0;
};

// An entry that only answers `rocprof info`'s probe for what another backend collects (one
// CUPTI subscriber per process records its counters and PC samples).
class ProbeOnly final : public Backend {
 public:
  using ProbeFn = void (*)(bool* live, std::string* reason);
  ProbeOnly(const char* name, ProbeFn probe) : name_(name), probe_(probe) {}
  const char* name() const override { return name_; }
  bool start(CaptureContext&, const CaptureSettings&, std::string*) override { return true; }
  void stop(CaptureContext&) override {}
  void probe(bool* live, std::string* reason) override { probe_(live, reason); }

 private:
  const char* name_;
  ProbeFn probe_;
};

// The recording of another process, written from this one (`rocprof attach PID --method
// read-only`): its rows read as that process's own (pid, command line, start time, thread
// names). Records go in from any thread; nothing of this process is recorded into it.
class OtherProcessContext : public CaptureContext {
 public:
  // Drains, closes the database and frees its name; returns its path.
  virtual std::string finish() = 0;
};

namespace capture {
void register_backend(Backend* backend);  // the backend lives for the process's life
std::vector<Backend*> backends();         // in registration order
// A backend's one registration line, at namespace scope in its own translation unit:
//   const capture::Registered<MyBackend> g_registered;
// or, for a probe-only entry, `const capture::Registered<ProbeOnly> g_registered{name, fn};`.
template <class B>
struct Registered {
  template <class... Args>
  explicit Registered(Args&&... args) {
    register_backend(new B(std::forward<Args>(args)...));
  }
};
// A library that a runtime loads on its own (HSA_TOOLS_LIB, ROCP_TOOL_LIBRARIES,
// NCCL_PROFILER_PLUGIN) calls this from its entry point: a program with no session yet (a
// native one, with no Python launcher) starts one from the launcher's ROCPROF_AUTOSTART_*
// variables, stopped by an exit handler registered then, after the runtime's own start-up, so
// that it runs before the runtime's teardown. A running session is left alone.
void start_session_on_load();
// Creates the database of process `pid` at `output_template` (%pid% and the command-line
// placeholders are the process's) and starts its drain thread; null with a one-line *error.
std::unique_ptr<OtherProcessContext> record_other_process(
    uint32_t pid, const std::string& output_template, const std::string& options_json,
    std::vector<std::pair<std::string, std::string>> metadata, std::string* error);
// Called by the session once a context exists, so that a backend registered after the
// session started (a library loaded later) joins it; null when none runs.
void set_running(CaptureContext* ctx, const CaptureSettings* settings);
// The process's string table, also between sessions (ids are kept for the process's life:
// the Python roctx module caches them per name). Installed by the core at load time.
using InternFn = uint32_t (*)(std::string_view) noexcept;
void set_interner(InternFn fn);
uint32_t intern(std::string_view s) noexcept;
// The launch sites' key → call-site id (capture/python/launch_sites.hpp's resolve), installed by
// rocprof._core: the drain resolves records made where resolving is not allowed (kFlagSiteKey).
// wait=false: never waits for the resolver; *pending says the key is known and not resolved yet
// (asked again later). wait=true: as a GPU record's key is resolved (a bounded wait).
using SiteResolveFn = uint32_t (*)(uint64_t key, bool wait, bool* pending);
void set_site_resolver(SiteResolveFn fn);
uint32_t resolve_site(uint64_t key, bool wait, bool* pending);  // 0 when none is installed
// A stream handle as a runtime library names it (cudaStream_t; 0: the legacy default stream of
// the calling thread's current context) → the id the GPU's own records carry for that stream
// (CUPTI's streamId), so that an allocator's row joins its stream's kernels. Installed by the
// backend that traces GPU records, while it runs; 0 when none is or the handle is unknown.
// Called on the library's thread (the id of stream 0 depends on its current context).
using StreamIdFn = uint32_t (*)(uint64_t handle) noexcept;
void set_stream_id_fn(StreamIdFn fn);
uint32_t stream_id(uint64_t handle) noexcept;
}  // namespace capture

}  // namespace rocprof
