// GPU hardware metrics over time on NVIDIA GPUs (rocprof run --gpu-metrics): CUPTI's PM
// sampling API (cupti_pmsampling.h, CUDA 12.6+). The GPU's performance monitors are read at a
// fixed rate into a hardware buffer while kernels run as usual: no replay, no serialisation.
//
// How, per GPU (one configuration each; Turing and later):
//   host side (the Profiler Host API, counters_host.hpp): the chip's PM-sampling tables give
//   each metric of the set the first CUPTI name the chip has that keeps the configuration to
//   one pass (PM sampling cannot replay); a metric the chip lacks is left out with one line;
//   target side: cuptiPmSamplingEnable -> SetConfig (config image, hardware buffer, interval in
//   ns, GPU_TIME_INTERVAL trigger) -> counter data image -> Start; a thread of our own calls
//   DecodeData every decode_ms (the hardware buffer is ours to drain: an undrained buffer
//   overflows and loses samples, counted), evaluates every completed sample with the host
//   object and emits one counter sample per metric on a track "<key> [<device>]", then resets
//   the counter data image; a full image (decode stop reason COUNTER_DATA_FULL) is decoded
//   again at once. At stop: Stop, decode to the end of the records, Disable.
//
// A GPU is set up when the program's first CUDA context on it appears (the context-created
// callback, or the first driver call of a context made before the session), on the sampler's
// thread: the application's thread only posts the device. Values equal to a series' previous
// one are not stored (an idle GPU's zeros): a value holds until the next sample of its track,
// and the last sample of every series is stored at the end.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cupti_loader.hpp"

namespace rocprof {
class CaptureContext;
struct GpuMetricsSettings;
}  // namespace rocprof

namespace rocprof::cupti::pm {

// One metric of a set: its track name (key), label and units, and the CUPTI names that measure
// it, best first (a chip has at most one of several spellings; GB100 lacks dramc__*, Turing
// has no realtime tensor counter).
struct MetricDef {
  const char* key;
  const char* symbol;
  const char* units;
  const char* description;
  std::vector<const char*> names;
};

// The metrics --gpu-metrics-set names ("default", "compute", "memory"); empty for another name
// (then the set is CUPTI metric names, separated by commas or spaces).
const std::vector<MetricDef>& named_set(const std::string& name);
std::vector<std::string> set_names();

struct Chosen {
  std::string key, symbol, units, description, cupti_name;
};

// For `chip`: each metric's first name the chip has that keeps the set to one pass, in the
// set's order; `left_out` gets one line per metric the chip lacks or that no longer fits.
// `availability`: the device's counter availability image (null: CUPTI's tables alone, as for
// `rocprof avail`; the final config image needs it). false with *why when nothing is left.
bool choose(const Api& a, const std::string& chip, const std::vector<uint8_t>* availability,
            const std::string& set, std::vector<Chosen>* out, std::vector<std::string>* left_out,
            std::string* why);

// ---- lifecycle, called by the CUPTI backend ------------------------------------------------
// Prepares sampling (no CUDA call yet) and starts the sampler thread. false with *why when PM
// sampling cannot run here (a CUPTI without it).
bool start(CaptureContext& c, const GpuMetricsSettings& s, const Api& a, std::string* why);
bool active() noexcept;
// A CUDA context appeared (resource callback), or a driver call ran in one (contexts made
// before the session): its device is set up on the sampler thread.
void on_context_created(CUcontext ctx) noexcept;
void on_api_enter(CUcontext ctx) noexcept;
// Stops sampling, decodes the rest and writes the run's metadata. Disable comes later
// (disable_all), after the backend's last CUPTI activity flush.
void stop(CaptureContext& c) noexcept;
void disable_all() noexcept;
void fork_child() noexcept;

// The clock CUPTI stamps samples in, told from one sample `ts` read at `boottime` /
// `realtime`: the offset that moves it to CLOCK_BOOTTIME (0 when it is already there).
int64_t clock_offset(uint64_t ts, uint64_t boottime, uint64_t realtime, const char** name);

}  // namespace rocprof::cupti::pm
