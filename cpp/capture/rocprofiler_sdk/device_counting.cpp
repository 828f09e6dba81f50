// The device counting sampler's pure parts (device_counting.hpp says how and why): the
// entry points it resolves, the metric sets, the choice per GPU and the formulas. The sampler
// thread and the backend are device_counting_sampler.cpp.
#include "device_counting.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <limits>

#include "capture/metric_series.hpp"

namespace rocprof::sdk::dc {

bool resolve(const std::string& library, Api* api, std::string* why) {
  void* h = nullptr;
  if (!library.empty() && library[0] == '/') h = dlopen(library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) h = RTLD_DEFAULT;
  api->library = library.empty() ? "(global symbols)" : library;
  const char* missing = nullptr;
#define ROCPROF_SDK_DC_FN(name)                                       \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(h, #name)); \
  if (api->name == nullptr && missing == nullptr) missing = #name;
  ROCPROF_SDK_DC_FUNCTIONS(ROCPROF_SDK_DC_FN)
#undef ROCPROF_SDK_DC_FN
  if (missing != nullptr) {
    *why = api->library + " lacks " + missing +
           " (the device counting service needs rocprofiler-sdk 0.6, ROCm 6.4 or newer)";
    return false;
  }
  return true;
}

namespace {

// The sets. Counter names are rocprofiler-sdk's (counter_defs.yaml) for gfx90a (MI200) and
// gfx940-942 (MI300); a GPU without one of a metric's counters leaves that metric out.
const MetricDef kGrActive{"pm_gr_active",
                          "GR Active",
                          "%",
                          "Cycles the graphics/compute engine was busy (GRBM_GUI_ACTIVE of "
                          "GRBM_COUNT)",
                          {"GRBM_GUI_ACTIVE", "GRBM_COUNT"},
                          Formula::kPercentOf};
const MetricDef kMfmaBusy{"pm_tensor_active",
                          "MFMA Busy",
                          "%",
                          "Cycles the SIMDs' matrix (MFMA) units were busy, of the elapsed cycles",
                          {"SQ_VALU_MFMA_BUSY_CYCLES", "GRBM_COUNT"},
                          Formula::kSimdCycles};
const MetricDef kCuActive{"pm_sm_active",
                          "CU Active",
                          "%",
                          "Cycles the compute units had a wave, averaged over the CUs",
                          {"SQ_BUSY_CU_CYCLES", "GRBM_COUNT"},
                          Formula::kCuQuadCycles};
const MetricDef kOccupancy{"pm_occupancy",
                           "Waves Active",
                           "%",
                           "Waves in flight of the CUs' wave slots (achieved occupancy)",
                           {"SQ_WAVE_CYCLES", "GRBM_COUNT"},
                           Formula::kWaveSlots};
const MetricDef kDramRead{"pm_dram_read_bytes",
                          "Memory Read",
                          "B/s",
                          "Bytes the L2 fetched from device memory per second (FETCH_SIZE)",
                          {"FETCH_SIZE"},
                          Formula::kKibPerSecond};
const MetricDef kDramWrite{"pm_dram_write_bytes",
                           "Memory Write",
                           "B/s",
                           "Bytes the L2 wrote to device memory per second (WRITE_SIZE)",
                           {"WRITE_SIZE"},
                           Formula::kKibPerSecond};
const MetricDef kL2Hit{"pm_l2_hit_rate",
                       "L2 Hit Rate",
                       "%",
                       "L2 (TCC) requests that hit",
                       {"TCC_HIT_sum", "TCC_MISS_sum"},
                       Formula::kHitRate};
MetricDef mfma(const char* key, const char* symbol, const char* counter, const char* what) {
  return MetricDef{key, symbol, "FLOP/s", what, {counter}, Formula::kOpsOf512PerSecond};
}
// Matrix operations per precision (the counters count them divided by 512).
MetricDef mfma_f16() {
  return mfma("pm_mfma_f16", "MFMA F16", "SQ_INSTS_VALU_MFMA_MOPS_F16",
              "F16 MFMA operations a second");
}
MetricDef mfma_bf16() {
  return mfma("pm_mfma_bf16", "MFMA BF16", "SQ_INSTS_VALU_MFMA_MOPS_BF16",
              "BF16 MFMA operations a second");
}
MetricDef mfma_f32() {
  return mfma("pm_mfma_f32", "MFMA F32", "SQ_INSTS_VALU_MFMA_MOPS_F32",
              "F32 MFMA operations a second");
}
MetricDef mfma_f64() {
  return mfma("pm_mfma_f64", "MFMA F64", "SQ_INSTS_VALU_MFMA_MOPS_F64",
              "F64 MFMA operations a second");
}
MetricDef mfma_f8() {
  return mfma("pm_mfma_f8", "MFMA F8", "SQ_INSTS_VALU_MFMA_MOPS_F8", "F8 MFMA operations a second");
}

struct NamedSet {
  const char* name;
  std::vector<MetricDef> metrics;
};
const std::vector<NamedSet>& sets() {
  // Busy and memory first: with the blocks' counter limits, later metrics are the ones left out.
  static const std::vector<NamedSet> s{
      {"default",
       {kGrActive, kMfmaBusy, kCuActive, kOccupancy, kDramRead, kDramWrite, kL2Hit, mfma_f16(),
        mfma_bf16(), mfma_f32(), mfma_f64(), mfma_f8()}},
      {"compute",
       {kGrActive, kMfmaBusy, kCuActive, kOccupancy, mfma_f16(), mfma_bf16(), mfma_f32(),
        mfma_f64(), mfma_f8()}},
      {"memory", {kDramRead, kDramWrite, kL2Hit}}};
  return s;
}

// A set given as counter names: each its own metric, its increase per second.
std::vector<MetricDef> custom_set(const std::string& text, std::vector<std::string>* storage) {
  *storage = split_metric_names(text);
  std::vector<MetricDef> out;
  for (const std::string& n : *storage)
    out.push_back(MetricDef{
        n.c_str(), n.c_str(), "1/s", "Increase per second", {n.c_str()}, Formula::kPerSecond});
  return out;
}

}  // namespace

const std::vector<MetricDef>& named_set(const std::string& name) {
  static const std::vector<MetricDef> none;
  for (const NamedSet& s : sets())
    if (name == s.name) return s.metrics;
  return none;
}

bool choose(const std::vector<std::string>& supported, const std::string& chip,
            const std::string& set, FitCheck& fit, std::vector<Chosen>* out,
            std::vector<std::string>* counter_names, std::vector<std::string>* left_out,
            std::string* why) {
  std::vector<std::string> storage;
  std::vector<MetricDef> custom;
  const std::vector<MetricDef>* defs = &named_set(set);
  if (defs->empty()) defs = &(custom = custom_set(set, &storage));
  const auto has = [&supported](const char* n) {
    return std::find(supported.begin(), supported.end(), n) != supported.end();
  };
  for (const MetricDef& def : *defs) {
    std::string lacking;
    for (const char* n : def.counters)
      if (!has(n)) lacking += (lacking.empty() ? "" : ", ") + std::string(n);
    if (!lacking.empty()) {
      left_out->push_back(std::string(def.key) + ": " + chip + " has no counter " + lacking);
      continue;
    }
    std::vector<std::string> trial = *counter_names;
    for (const char* n : def.counters)
      if (std::find(trial.begin(), trial.end(), n) == trial.end()) trial.emplace_back(n);
    std::string refusal;
    if (!fit.fits(trial, &refusal)) {
      left_out->push_back(std::string(def.key) +
                          ": does not fit one pass with the metrics before it (" + refusal + ")");
      continue;
    }
    *counter_names = std::move(trial);
    Chosen c{def.key, def.symbol, def.units, def.description, def.formula, {}, {}};
    for (const char* n : def.counters) {
      c.counter_names.emplace_back(n);
      c.counters.push_back(static_cast<size_t>(
          std::find(counter_names->begin(), counter_names->end(), n) - counter_names->begin()));
    }
    out->push_back(std::move(c));
  }
  if (out->empty()) {
    *why = "none of the metrics of '" + set + "' can be sampled on " + chip;
    return false;
  }
  return true;
}

double evaluate(Formula f, const Delta* d, size_t n, double dt_s, const AgentFacts& agent) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto ratio = [nan](double num, double den) { return den > 0 ? num / den : nan; };
  const auto mean = [](const Delta& x) {
    return x.instances > 0 ? x.sum / static_cast<double>(x.instances) : 0.0;
  };
  if (n == 0) return nan;
  switch (f) {
    case Formula::kPercentOf:
      return n < 2 ? nan : 100.0 * ratio(d[0].sum, d[1].sum);
    case Formula::kCuQuadCycles:
      return n < 2 ? nan : 100.0 * ratio(4.0 * d[0].sum, mean(d[1]) * agent.cu_count);
    case Formula::kSimdCycles:
      return n < 2 ? nan : 100.0 * ratio(d[0].sum, mean(d[1]) * agent.simd_count);
    case Formula::kWaveSlots:
      return n < 2 ? nan
                   : 100.0 * ratio(4.0 * d[0].sum,
                                   mean(d[1]) * agent.cu_count * agent.max_waves_per_cu);
    case Formula::kHitRate:
      return n < 2 ? nan : 100.0 * ratio(d[0].sum, d[0].sum + d[1].sum);
    case Formula::kKibPerSecond:
      return ratio(1024.0 * d[0].sum, dt_s);
    case Formula::kOpsOf512PerSecond:
      return ratio(512.0 * d[0].sum, dt_s);
    case Formula::kPerSecond:
      return ratio(d[0].sum, dt_s);
  }
  return nan;
}

}  // namespace rocprof::sdk::dc
