// CUPTI's Profiler Host API for one chip (cupti_profiler_host.h): metric names → the config
// image the range profiler runs, decoded counter data → metric values, and the chip's metric
// tables for `rocprof avail`. Host-only: names, properties and validation need no GPU (the
// tables ship with CUPTI), so tests check the project's metric catalogue against the real
// library on a machine without one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cupti_loader.hpp"

namespace rocprof::cupti {

// A CUPTI parameter struct: zeroed, with its size set (the size tells CUPTI which fields the
// caller knows of).
template <class P>
P params(size_t struct_size) {
  P p;
  std::memset(&p, 0, sizeof p);
  p.structSize = struct_size;
  return p;
}

// "<what>: <CUPTI's name for r>": the one line every failed call is reported as.
std::string call_error(const Api& a, const char* what, CUptiResult r);

struct MetricProps {
  std::string description, hw_unit, dim_unit;
  int type = -1;  // CUpti_MetricType: 0 counter, 1 ratio, 2 throughput
};
const char* metric_type_name(int type);

class MetricHost {
 public:
  explicit MetricHost(const Api& api) : a_(api) {}
  ~MetricHost();
  MetricHost(const MetricHost&) = delete;
  MetricHost& operator=(const MetricHost&) = delete;

  // `availability`: the device's counter availability image (null on a machine without the
  // GPU: names and properties still work, collection does not); it must outlive this object.
  // `type`: CUpti_ProfilerType (0 the range profiler's tables, 1 PM sampling's).
  bool init(const std::string& chip, const std::vector<uint8_t>* availability, std::string* why,
            int type = 0);
  bool ready() const { return host_ != nullptr; }
  const std::string& chip() const { return chip_; }

  bool properties(const std::string& name, MetricProps* out) const;
  // Base metric names of one type (CUpti_MetricType), and the rollups/submetrics of one.
  bool base_metrics(int type, std::vector<std::string>* out, std::string* why) const;
  bool sub_metrics(int type, const std::string& base, std::vector<std::string>* out) const;
  // Adds `names` to the host object's configuration (CUPTI judges each full name here).
  bool add_metrics(const std::vector<const char*>& names, std::string* why);
  // Adds `names` (all at once; a host object takes one configuration) and returns the config
  // image and the number of passes the range profiler replays each kernel for.
  bool config_image(const std::vector<const char*>& names, std::vector<uint8_t>* image,
                    size_t* passes, std::string* why);
  bool evaluate(const std::vector<uint8_t>& counter_data, size_t range,
                const std::vector<const char*>& names, double* values, std::string* why) const;

 private:
  const Api& a_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::string chip_;
};

// Whether CUPTI can collect `name` on `chip`: "" or why not. Each name gets a host object of
// its own, so one bad name does not hide whether the others are good.
std::string check_metric(const Api& a, const std::string& chip, const std::string& name);
bool supported_chips(const Api& a, std::vector<std::string>* out, std::string* why);

}  // namespace rocprof::cupti
