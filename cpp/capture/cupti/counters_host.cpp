#include "counters_host.hpp"

namespace rocprof::cupti {

std::string call_error(const Api& a, const char* what, CUptiResult r) {
  return std::string(what) + ": " + result_string(a, r);
}

const char* metric_type_name(int type) {
  switch (type) {
    case CUPTI_METRIC_TYPE_COUNTER:
      return "counter";
    case CUPTI_METRIC_TYPE_RATIO:
      return "ratio";
    case CUPTI_METRIC_TYPE_THROUGHPUT:
      return "throughput";
    default:
      return "unknown";
  }
}

MetricHost::~MetricHost() {
  if (host_ != nullptr && a_.counters.cuptiProfilerHostDeinitialize != nullptr) {
    auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = host_;
    a_.counters.cuptiProfilerHostDeinitialize(&p);
  }
}

bool MetricHost::init(const std::string& chip, const std::vector<uint8_t>* availability,
                      std::string* why, int type) {
  if (!a_.counters_missing.empty()) {
    *why = a_.path + " lacks " + a_.counters_missing + " (hardware counters need CUDA 12.6+)";
    return false;
  }
  chip_ = chip;  // CUPTI may keep the pointer: the string lives as long as this object
  auto p = params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = static_cast<CUpti_ProfilerType>(type);
  p.pChipName = chip_.c_str();
  p.pCounterAvailabilityImage =
      availability != nullptr && !availability->empty() ? availability->data() : nullptr;
  const CUptiResult r = a_.counters.cuptiProfilerHostInitialize(&p);
  if (r != CUPTI_SUCCESS || p.pHostObject == nullptr) {
    *why = call_error(a_, ("cuptiProfilerHostInitialize(" + chip + ")").c_str(), r);
    return false;
  }
  host_ = p.pHostObject;
  return true;
}

bool MetricHost::properties(const std::string& name, MetricProps* out) const {
  auto p = params<CUpti_Profiler_Host_GetMetricProperties_Params>(
      CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pMetricName = name.c_str();
  if (host_ == nullptr || a_.counters.cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS)
    return false;
  out->description = p.pDescription ? p.pDescription : "";
  out->hw_unit = p.pHwUnit ? p.pHwUnit : "";
  out->dim_unit = p.pDimUnit ? p.pDimUnit : "";
  out->type = static_cast<int>(p.metricType);
  return true;
}

bool MetricHost::base_metrics(int type, std::vector<std::string>* out, std::string* why) const {
  auto p = params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
      CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.metricType = static_cast<CUpti_MetricType>(type);
  const CUptiResult r = a_.counters.cuptiProfilerHostGetBaseMetrics(&p);
  if (r != CUPTI_SUCCESS) {
    *why = call_error(a_, "cuptiProfilerHostGetBaseMetrics", r);
    return false;
  }
  for (size_t i = 0; i < p.numMetrics; ++i)
    if (p.ppMetricNames[i] != nullptr) out->emplace_back(p.ppMetricNames[i]);
  return true;
}

bool MetricHost::sub_metrics(int type, const std::string& base,
                             std::vector<std::string>* out) const {
  auto p = params<CUpti_Profiler_Host_GetSubMetrics_Params>(
      CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.metricType = static_cast<CUpti_MetricType>(type);
  p.pMetricName = base.c_str();
  if (a_.counters.cuptiProfilerHostGetSubMetrics(&p) != CUPTI_SUCCESS) return false;
  for (size_t i = 0; i < p.numOfSubmetrics; ++i)
    if (p.ppSubMetrics[i] != nullptr) out->push_back(base + p.ppSubMetrics[i]);
  return true;
}

bool MetricHost::add_metrics(const std::vector<const char*>& names, std::string* why) {
  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host_;
  add.ppMetricNames = const_cast<const char**>(names.data());
  add.numMetrics = names.size();
  const CUptiResult r = a_.counters.cuptiProfilerHostConfigAddMetrics(&add);
  if (r != CUPTI_SUCCESS) {
    *why = call_error(a_, "cuptiProfilerHostConfigAddMetrics", r);
    return false;
  }
  return true;
}

bool MetricHost::config_image(const std::vector<const char*>& names, std::vector<uint8_t>* image,
                              size_t* passes, std::string* why) {
  const auto& c = a_.counters;
  if (!add_metrics(names, why)) return false;
  CUptiResult r;
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host_;
  if ((r = c.cuptiProfilerHostGetConfigImageSize(&size)) != CUPTI_SUCCESS ||
      size.configImageSize == 0) {
    *why = r != CUPTI_SUCCESS ? call_error(a_, "cuptiProfilerHostGetConfigImageSize", r)
                              : "cuptiProfilerHostGetConfigImageSize: empty image (no counter "
                                "availability for this device)";
    return false;
  }
  image->assign(size.configImageSize, 0);
  auto get = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  get.pHostObject = host_;
  get.configImageSize = image->size();
  get.pConfigImage = image->data();
  if ((r = c.cuptiProfilerHostGetConfigImage(&get)) != CUPTI_SUCCESS) {
    *why = call_error(a_, "cuptiProfilerHostGetConfigImage", r);
    return false;
  }
  auto np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  np.configImageSize = image->size();
  np.pConfigImage = image->data();
  if ((r = c.cuptiProfilerHostGetNumOfPasses(&np)) != CUPTI_SUCCESS) {
    *why = call_error(a_, "cuptiProfilerHostGetNumOfPasses", r);
    return false;
  }
  *passes = np.numOfPasses;
  return true;
}

bool MetricHost::evaluate(const std::vector<uint8_t>& counter_data, size_t range,
                          const std::vector<const char*>& names, double* values,
                          std::string* why) const {
  auto p = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range;
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  p.pMetricValues = values;
  const CUptiResult r = a_.counters.cuptiProfilerHostEvaluateToGpuValues(&p);
  if (r != CUPTI_SUCCESS) {
    *why = call_error(a_, "cuptiProfilerHostEvaluateToGpuValues", r);
    return false;
  }
  return true;
}

std::string check_metric(const Api& a, const std::string& chip, const std::string& name) {
  MetricHost host(a);
  std::string why;
  if (!host.init(chip, nullptr, &why)) return why;
  MetricProps props;
  if (!host.properties(name, &props)) return "not a metric of " + chip;
  // Adding judges the full name (a base metric without its rollup is refused here); the image
  // itself needs the device's counter availability, which a machine without it lacks.
  if (host.add_metrics({name.c_str()}, &why)) return "";
  if (name.find('.') == std::string::npos)
    return "a base metric: name a rollup (" + name + ".sum, .avg, .max, .min) or a submetric";
  return why;
}

bool supported_chips(const Api& a, std::vector<std::string>* out, std::string* why) {
  if (!a.counters_missing.empty()) {
    *why = a.path + " lacks " + a.counters_missing + " (hardware counters need CUDA 12.6+)";
    return false;
  }
  auto p = params<CUpti_Profiler_Host_GetSupportedChips_Params>(
      CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  const CUptiResult r = a.counters.cuptiProfilerHostGetSupportedChips(&p);
  if (r != CUPTI_SUCCESS) {
    *why = call_error(a, "cuptiProfilerHostGetSupportedChips", r);
    return false;
  }
  for (size_t i = 0; i < p.numChips; ++i)
    if (p.ppChipNames[i] != nullptr) out->emplace_back(p.ppChipNames[i]);
  return true;
}

}  // namespace rocprof::cupti
