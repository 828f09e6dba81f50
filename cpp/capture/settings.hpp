// Typed settings of every capture backend, built once from the launcher's options (Python:
// rocprof.backends; native programs: the ROCPROF_AUTOSTART_OPTIONS text) and validated when
// the session starts. Plain structs: no vendor header, so the session and the bindings see
// them too. The defaults below are stated here and nowhere else.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "capture/activity.hpp"

namespace rocprof {

// How every GPU backend names and picks the kernels it traces (capture/kernel_names.hpp).
struct KernelNameSettings {
  bool truncate = false, mangled = false;  // display names: -T/--truncate-kernels, -M
  // --trace-kernel-include/exclude-regex: POSIX extended regular expressions (glibc; the
  // dialect rocpd.regex checks too) on the demangled name. A kernel left out is not traced.
  std::string include, exclude;
};

struct CuptiSettings {
  // What CUPTI can record; cupti_backend.cpp maps each to its activity kinds.
  static constexpr ActivitySet kSupported{
      Activity::kernels,     Activity::copies,     Activity::sets, Activity::allocations,
      Activity::runtime_api, Activity::driver_api, Activity::sync};
  bool enabled = false;  // GPU tracing asked for (the launcher's default turns it on)
  ActivitySet activities{Activity::kernels,     Activity::copies,     Activity::sets,
                         Activity::runtime_api, Activity::driver_api, Activity::sync};
  bool launch_sites = true;  // Python line of each launch (needs the Python extension)
  bool region = true;        // innermost ROCTx range of each launch
  // ENTER callbacks: "none", "launch" (launches/copies/sets), "all" (also syncs, allocations);
  // "" chooses: "all" when sync or allocations are traced (their thread comes from there).
  std::string callbacks;
  // Measurement knobs (benchmarks/gpu_b2_b5.py, ROCPROF_CUPTI_OPTIONS): the CLOCK_BOOTTIME
  // timestamp callback and turning buffers into records; off only to find where time goes.
  bool timestamp = true, process = true;
  // API activity of the frequent state queries (cudaGetDevice/GetLastError, event
  // create/destroy, and driver calls made inside the runtime and CUPTI such as
  // cuDevicePrimaryCtxGetState): off leaves them out at the source (cupti_backend.cpp lists
  // them). --runtime-trace-all turns it on.
  bool runtime_queries = false;
  // Kernels of CUDA graph replays (--graph-trace): "node", every kernel with its graph and node
  // ids and capture site; "graph", one span per replay (CUPTI's GRAPH_TRACE activity).
  std::string graph_trace = "node";
  uint32_t flush_ms = 250;         // CUPTI's periodic flush
  uint32_t buffer_mb = 4;          // per activity buffer (Kineto uses 4 MB)
  std::string library_candidates;  // ':'-separated libcupti paths tried first
};

struct SamplingSettings {
  static constexpr uint32_t kDefaultHz = 1000;
  uint32_t hz = 0;      // 0: no call-stack sampling
  bool wall = false;    // wall-clock timer instead of per-thread CPU time
  bool native = false;  // merge native frames (libunwind)
  // How samples are taken: "signal", a timer's SIGPROF on each sampled thread, which walks its
  // own frames (exact stacks, native frames possible); "thread", a reader thread walks them
  // while the threads run (no signals: capture/sampling/thread_reader.hpp).
  std::string method = "signal";
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
  // names to these (rocshared/kernel_metrics.py); the native side takes them as given.
  std::string metrics;
  std::string origin;  // what asked for them ("pmc", "sol"): stored in the database metadata
  // --kernel-include/exclude-regex (POSIX ERE on the demangled name): as rocprofv3's, they
  // pick the kernels whose counters are read; other kernels run unserialised, still traced.
  std::string kernel_include, kernel_exclude;
};

struct MarkersSettings {
  bool start_paused = false;  // --selected-regions: record only from roctxProfilerResume on
  // --kernel-rename: a dispatch's rocpd region name is its innermost ROCTx range's message
  // (the writer applies it; the range is recorded either way).
  bool kernel_rename = false;
  // Recorded text (ROCTx messages, thread and stream names) has URL credentials and tokens cut
  // as the writer stores it; false keeps it as written (--no-redact). The command line and the
  // environment are cut either way (storage/redact.hpp).
  bool redact_text = true;
};

// ---- AMD: HSA tools interface + HIP API callbacks (capture/hsa/) ----------------------
struct HsaSettings {
  // What the HSA tools interface and HIP callbacks can record; hsa_backend.cpp maps each
  // (runtime_api and hip_api are both HIP's runtime calls; hsa_api every HSA core/AMD-extension
  // call).
  static constexpr ActivitySet kSupported{Activity::kernels,     Activity::copies,
                                          Activity::allocations, Activity::runtime_api,
                                          Activity::hip_api,     Activity::hsa_api};
  bool enabled = false;  // AMD GPU tracing asked for (the launcher's default turns it on)
  ActivitySet activities{Activity::kernels, Activity::copies};
  bool launch_sites = true;  // Python line of each dispatch (needs the Python extension)
  bool region = true;        // innermost ROCTx range of each dispatch
};
// ---- end of the AMD block ---------------------------------------------------------------
// ---- device and host metrics over time (capture/metrics/) --------------------------------
// rocprof-sys's process sampling (its --process-freq, --gpus, --cpus): a thread of its own
// reads NVML / AMD SMI / ROCm SMI and /proc `hz` times a second and stores every value as a
// sampled counter (rocpd_info_pmc + rocpd_track + rocpd_sample + rocpd_pmc_event).
struct MetricsSettings {
  static constexpr uint32_t kDefaultHz = 20;  // --process-freq without a rate
  static constexpr uint32_t kMaxHz = 1000;
  // --energy: fast enough to tell a training step's joules apart (the launcher takes the
  // higher of it and --process-freq).
  static constexpr uint32_t kEnergyHz = 100;
  uint32_t hz = 0;  // 0: no metrics
  // >0: each GPU's energy counter (its power where it has none) read this often, and nothing
  // else on the ticks between `hz` readings; 0: energy only as one of the `hz` metrics.
  uint32_t energy_hz = 0;
  // "all", "none", or ordinals and ranges ("0,2-3"). GPUs are numbered as the process's GPU
  // runtime numbers them (CUDA/HIP ordinals, after *_VISIBLE_DEVICES); CPUs are the host's
  // cores, for per-core load and frequency (this process's own figures are always kept).
  std::string gpus = "all", cpus = "all";
};
// ---- end of device and host metrics -----------------------------------------------------

// ---- PC sampling (rocprof run --pc-sampling*, rocprofv3's option names) ----------------
// Where inside a kernel the time goes, per instruction and stall reason. NVIDIA: CUPTI's PC
// sampling API in continuous mode (kernels are not serialised); the hardware samples each
// SM's warps every 2^N cycles, so an interval is rounded to the nearest power of two (5..31).
struct PcSamplingSettings {
  bool enabled = false;
  std::string method = "stochastic";  // stochastic | host_trap (rocprofv3's names)
  std::string unit = "cycles";        // instructions | cycles | time (time: microseconds)
  uint32_t interval = 0;              // 0: the backend's default
  uint32_t poll_ms = 100;             // how often the collector thread fetches samples
};
// ---- end of PC sampling ------------------------------------------------------------------

// ---- GPU hardware metrics over time (rocprof run --gpu-metrics) ---------------------------
// The GPU's performance monitors sampled at a fixed rate, without replaying kernels. NVIDIA:
// CUPTI's PM sampling (capture/cupti/pm_sampling.*): one configuration per GPU, a hardware
// buffer the GPU writes samples into, drained by a thread of our own every decode_ms.
struct GpuMetricsSettings {
  // 5 kHz: a 1 ms kernel spans 5 samples. Evaluating a sample costs the host ~5 µs per metric
  // (H200, the default set of 16: ~80 µs), so 10 kHz took ~0.7 of a core and left gaps; 5 kHz
  // took ~0.2 and none (benchmarks/gpu_metrics_rates.py).
  static constexpr uint32_t kDefaultHz = 5000;
  static constexpr uint32_t kMaxHz = 200000;
  uint32_t hz = 0;  // 0: off
  // "default", "compute", "memory" (capture/cupti/pm_sampling.cpp lists each), or CUPTI
  // metric names separated by commas or spaces (one pass's worth).
  std::string set = "default";
  uint32_t decode_ms = 20;   // how often the hardware buffer is drained
  uint32_t buffer_mb = 256;  // the hardware buffer, per GPU
};
// ---- end of GPU hardware metrics ---------------------------------------------------------

// PyTorch's caching allocator (capture/python/torch_memory.hpp, through the torch observer):
// every block and segment action and out-of-memory, as allocator-level (VIRTUAL) rows.
struct TorchMemorySettings {
  bool enabled = false;  // --memory-allocation-trace / --sys-trace
};

// ---- bounded runs (rocprof run --max-size, --keep; storage/step_keeper.hpp) --------------
struct BoundedSettings {
  std::string max_size;       // bytes, in decimal ("" or "0": unbounded)
  std::string keep = "auto";  // auto | slowest:N | every:K
};

struct CaptureSettings {
  KernelNameSettings kernel_names;  // every GPU backend's
  CuptiSettings cupti;
  SamplingSettings sampling;
  MarkersSettings markers;
  HsaSettings hsa;  // AMD
  MetricsSettings metrics;
  CounterSettings counters;
  PcSamplingSettings pc_sampling;
  BoundedSettings bounded;
  GpuMetricsSettings gpu_metrics;
  TorchMemorySettings torch_memory;
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
// MetricsSettings::gpus/cpus: "all" (or "") sets *all; "none" gives an empty list; else the
// listed indices in order. false: not that syntax.
bool parse_index_list(const std::string& text, std::vector<uint32_t>* out, bool* all);
}  // namespace capture

}  // namespace rocprof
