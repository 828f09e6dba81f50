// Typed settings of every capture backend, built once from the launcher's options (Python:
// rocprof.backends; native programs: the ROCPROF_AUTOSTART_OPTIONS text) and validated when
// the session starts. Plain structs: no vendor header, so the session and the bindings see
// them too. The defaults below are stated here and nowhere else.
#pragma once
#include <cstdint>
#include <string>

namespace rocprof {

struct CuptiSettings {
  bool enabled = false;  // GPU tracing asked for (the launcher's default turns it on)
  bool kernels = true, copies = true, allocations = false;
  bool runtime_api = true, driver_api = true, sync = true;
  bool launch_sites = true;  // Python line of each launch (needs the Python extension)
  bool region = true;        // innermost ROCTx range of each launch
  bool truncate = false, mangled = false;  // kernel display names (-T, -M)
  // POSIX extended regular expressions (glibc), the dialect rocpd.regex checks too.
  std::string kernel_include, kernel_exclude;
  // ENTER callbacks: "none", "launch" (launches/copies/sets), "all" (also syncs, allocations);
  // "" chooses: "all" when sync or allocations are traced (their thread comes from there).
  std::string callbacks;
  // Measurement knobs (benchmarks/gpu_b2_b5.py, ROCPROF_CUPTI_OPTIONS): the CLOCK_BOOTTIME
  // timestamp callback and turning buffers into records; off only to find where time goes.
  bool timestamp = true, process = true;
  uint32_t flush_ms = 250;         // CUPTI's periodic flush
  uint32_t buffer_mb = 4;          // per activity buffer (Kineto uses 4 MB)
  std::string library_candidates;  // ':'-separated libcupti paths tried first
};

struct SamplingSettings {
  static constexpr uint32_t kDefaultHz = 1000;
  uint32_t hz = 0;      // 0: no call-stack sampling
  bool wall = false;    // wall-clock timer instead of per-thread CPU time
  bool native = false;  // merge native frames (libunwind)
  // The launcher's own frames, cut from samples of `rocprof run script.py`.
  std::string launcher_file, runpy_file;
};

// Per-kernel hardware counters (rocprof run --pmc / --sol). Collecting them serialises kernels:
// each launch is profiled on its own (CUPTI range profiler, one auto range per kernel, kernel
// replay for the passes the metrics need), as rocprofv3 --pmc and Nsight Compute do.
struct CounterSettings {
  static constexpr uint32_t kMaxMetrics = 256;  // per run; CUPTI schedules them into passes
  // Vendor metric names (NVIDIA: CUPTI names with rollup, e.g. dram__bytes_read.sum),
  // separated by spaces; "?name": optional, left out on a chip without it (the --sol set spans
  // GPU generations). Empty: no counter collection. The launcher resolves rocprofv3-style
  // names to these (rocpd/metrics.py); the native side takes them as given.
  std::string metrics;
  std::string origin;  // what asked for them ("pmc", "sol"): stored in the database metadata
};

struct MarkersSettings {
  bool start_paused = false;  // --selected-regions: record only from roctxProfilerResume on
};

struct CaptureSettings {
  CuptiSettings cupti;
  SamplingSettings sampling;
  MarkersSettings markers;
  CounterSettings counters;
};

namespace capture {
// Checks the settings; on a bad value returns false with one line naming the option.
bool validate(const CaptureSettings& s, std::string* error);
// "section.key=value" lines (cupti.kernels=1, sampling.hz=1000) into `s`: the text form of
// the same settings, for native programs (ROCPROF_AUTOSTART_OPTIONS) and the measurement
// variable ROCPROF_CUPTI_OPTIONS ("key=value,..." with section "cupti."). Unknown keys and
// malformed values are an error naming them.
bool parse_text(const std::string& text, char separator, const std::string& section,
                CaptureSettings* s, std::string* error);
// The text form parse_text reads back (one "section.key=value" per line).
std::string to_text(const CaptureSettings& s);
}  // namespace capture

}  // namespace rocprof
