// The hardware-counter catalogue without vendor types, for the Python bindings
// (cpp/bindings/counters.cpp): what `rocprof avail` lists and what the launcher checks names
// against. Implemented in counters_list.cpp over CUPTI's Profiler Host API.
#pragma once
#include <string>
#include <vector>

namespace rocprof::cupti {

struct CounterMetric {
  std::string name, type, description, hw_unit, dim_unit;
  std::vector<std::string> submetrics;  // full names (base + rollup/submetric), when asked for
};

struct CounterDevice {
  int index = -1;  // CUDA device ordinal; -1 for a chip listed without a device
  std::string name, chip;
  std::vector<CounterMetric> metrics;
};

// The counters of every NVIDIA GPU here. Initialises CUDA in the calling process (`rocprof
// avail`, never a profiled one). false with *why when there is no GPU or no usable CUPTI.
bool list_devices(bool submetrics, std::vector<CounterDevice>* out, std::string* why);
// The counters CUPTI's own tables hold for `chip` (e.g. GH100): no GPU needed.
bool list_chip(const std::string& chip, bool submetrics, CounterDevice* out, std::string* why);
bool counter_chips(std::vector<std::string>* out, std::string* why);
// For each name, "" when CUPTI can collect it on `chip`, else why not.
bool check_metrics(const std::string& chip, const std::vector<std::string>& names,
                   std::vector<std::string>* problems, std::string* why);

// PM sampling (--gpu-metrics, capture/cupti/pm_sampling.cpp): what `set` samples on `chip`
// from CUPTI's tables (no GPU): each metric's track key, CUPTI name and units, and one line per
// metric left out (the chip lacks it, or it no longer fits one pass).
struct PmChoice {
  std::string key, cupti_name, units;
};
bool pm_sampling_set(const std::string& chip, const std::string& set, std::vector<PmChoice>* chosen,
                     std::vector<std::string>* left_out, std::string* why);

}  // namespace rocprof::cupti
