// A GPU hardware metric over time as counter samples, for the samplers of --gpu-metrics (NVIDIA:
// cupti/pm_sampling.cpp; AMD: rocprofiler_sdk/device_counting_sampler.cpp). A value is stored
// only where it changed (it holds until the next one: the analysis reads the series as a step
// function), and each series ends at the sampler's last read with its value again, so that the
// last value has a length. A series is described (its PmcInfo metadata) with its first value.
// One sampler thread owns its series and writer.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "capture/context.hpp"
#include "rocprof/info.hpp"
#include "rocprof/record.hpp"

namespace rocprof {

struct MetricSeries {
  uint32_t track = 0, key = 0;  // interned track name ("pm_<metric> [k]") and counter key
  PmcInfo info;
  bool described = false, stored = false;
  double last = 0;  // the value stored last, at last_t
  uint64_t last_t = 0;
  double pending = 0;  // the latest value seen, stored or not
  bool has_pending = false;
};

// The series of metric `key` ("pm_tensor_active") on GPU `ordinal` (rocpd agent `agent_id`) from
// sampler `component`: track "<key> [<ordinal>]", described as an absolute value of that GPU;
// the caller adds the symbol, units and description.
inline MetricSeries metric_series(CaptureContext& ctx, const std::string& component,
                                  uint32_t ordinal, uint32_t agent_id, const std::string& key) {
  MetricSeries s;
  s.track = ctx.intern(key + " [" + std::to_string(ordinal) + "]");
  s.key = ctx.intern("pmc:" + std::to_string(agent_id) + ":" + key);
  PmcInfo& p = s.info;
  p.key = s.key;
  p.agent_id = agent_id;
  p.target_arch = "GPU";
  p.name = key;
  p.component = component;
  p.value_type = "ABS";
  return s;
}

struct MetricSeriesWriter {
  CaptureContext* ctx = nullptr;
  uint32_t tid = 0, category = 0;
  uint64_t stored = 0, unchanged = 0;  // rocprof.gpu_metrics.values_stored / _unchanged

  void emit(MetricSeries& s, uint64_t t, double value) {
    if (std::isnan(value)) return;
    s.pending = value;
    s.has_pending = true;
    if (s.stored && value == s.last) {
      ++unchanged;
      return;
    }
    store(s, t, value);
  }

  // The series' last value again at `end` (the last read), where it has not been stored since.
  void finish(MetricSeries& s, uint64_t end) {
    if (s.has_pending && end > s.last_t) store(s, end, s.pending);
  }

 private:
  void store(MetricSeries& s, uint64_t t, double value) {
    if (!s.described) {
      ctx->info(s.info);
      s.described = true;
    }
    ctx->emit(counter_sample(t, tid, category, s.track, s.key, value));
    s.stored = true;
    s.last = value;
    s.last_t = t;
    ++stored;
  }
};

// The names of a --gpu-metrics-set given as metric or counter names, separated by commas or
// spaces.
inline std::vector<std::string> split_metric_names(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find_first_of(", ", at), text.size());
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace rocprof
