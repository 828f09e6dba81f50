// The one door a capture backend uses: everything a backend (CUPTI, sampling, and the HSA/HIP,
// device-metrics and counter backends to come) may do with the rest of the core. Backends
// include this header and their own settings (capture/settings.hpp), never session/ or
// storage/: the session implements the context over its collector, tests over a fake
// (cpp/tests/fake_capture_context.hpp), so most of a backend is testable without its hardware.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rocprof/info.hpp"
#include "rocprof/record.hpp"

namespace rocprof {

struct CaptureSettings;  // capture/settings.hpp
class ChunkChain;        // buffer/chunk_pool.hpp: one thread's record buffer

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
  virtual ChunkChain* thread_records() noexcept { return nullptr; }
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

// A capture source. One instance per backend registers itself at load time (a static
// registrar in its own translation unit); the session starts the registered backends in
// order of registration with the typed settings built by the launcher.
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

namespace capture {
void register_backend(Backend* backend);  // the backend lives for the process's life
std::vector<Backend*> backends();         // in registration order
// Called by the session once a context exists, so that a backend registered after the
// session started (a library loaded later) joins it; null when none runs.
void set_running(CaptureContext* ctx, const CaptureSettings* settings);
// The process's string table, also between sessions (ids are kept for the process's life:
// the Python roctx module caches them per name). Installed by the core at load time.
using InternFn = uint32_t (*)(std::string_view) noexcept;
void set_interner(InternFn fn);
uint32_t intern(std::string_view s) noexcept;
}  // namespace capture

}  // namespace rocprof
