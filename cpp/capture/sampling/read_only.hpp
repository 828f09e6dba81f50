// Read-only sampling of another process's Python stacks (`rocprof attach PID --method
// read-only`, as py-spy --pid --nonblocking): a thread of this process reads the target's
// thread states and frames every tick (capture/python/remote_frames.hpp) and records each
// thread's stack as `rocprof run --sample` does (kSample records on the target's thread ids,
// PYTHON_SAMPLE / PYTHON_SAMPLE_STACK, one node row per distinct stack: stack.hpp) into a
// database of the target (capture::record_other_process). Nothing runs in the target, nothing
// stops it; only the kernel's ptrace access check for reading its memory applies.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace rocprof::sampling {

struct ReadOnlyOptions {
  uint32_t pid = 0;
  std::string output_template;  // output_path.hpp; %pid% is the target's
  uint32_t hz = 100;
  // wall: every Python thread at every tick; cpu: only threads the kernel shows running
  // (state R) at the tick, so the samples say where the CPU went.
  bool wall = false;
  std::string options_json = "{}";
};

struct ReadOnlyResult {
  std::string path;
  uint64_t taken = 0, missed = 0, threads = 0;
  bool target_ended = false;  // sampling stopped because the process ended
};

class ReadOnlySampler {
 public:
  ReadOnlySampler();
  ~ReadOnlySampler();
  // Finds the target's interpreter, creates its database and starts the sampling thread.
  // False with a one-line *error and *err_no (EPERM/EACCES: reading its memory was refused;
  // 0: no errno applies).
  bool start(const ReadOnlyOptions& options, std::string* error, int* err_no);
  // Sampling, until stop() or the target's end.
  bool running() const;
  // "3.11 (headers)": the target's Python and where its layout came from.
  std::string layout() const;
  // Ends sampling, finishes the database; its path and counts.
  ReadOnlyResult stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rocprof::sampling
