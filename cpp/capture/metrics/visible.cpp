#include "capture/metrics/visible.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

namespace rocprof::metrics {
namespace {

bool uuid_prefix(const std::string& uuid, const std::string& entry) {
  if (entry.size() > uuid.size() || entry.size() < 5) return false;
  for (size_t i = 0; i < entry.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(entry[i])) !=
        std::tolower(static_cast<unsigned char>(uuid[i])))
      return false;
  return true;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

std::vector<uint32_t> apply_visible(const std::vector<GpuDevice>& devices,
                                    const std::vector<uint32_t>& order, const char* value) {
  if (value == nullptr) return order;
  std::vector<uint32_t> out;
  const std::string text = value;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string entry = trim(text.substr(at, end - at));
    at = end + 1;
    int64_t pick = -1;
    if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string::npos) {
      const unsigned long k = std::strtoul(entry.c_str(), nullptr, 10);
      if (k < order.size()) pick = order[k];
    } else {
      for (uint32_t idx : order)
        if (idx < devices.size() && uuid_prefix(devices[idx].uuid, entry)) {
          pick = idx;
          break;
        }
    }
    bool dup = false;
    for (uint32_t o : out) dup = dup || static_cast<int64_t>(o) == pick;
    if (pick < 0 || dup) break;
    out.push_back(static_cast<uint32_t>(pick));
  }
  return out;
}

std::vector<uint32_t> cuda_order(const std::vector<GpuDevice>& devices) {
  std::vector<uint32_t> all;
  for (uint32_t i = 0; i < devices.size(); ++i) all.push_back(i);
  return apply_visible(devices, all, std::getenv("CUDA_VISIBLE_DEVICES"));
}

std::vector<uint32_t> rocm_order(const std::vector<GpuDevice>& devices) {
  std::vector<uint32_t> all;
  for (uint32_t i = 0; i < devices.size(); ++i) all.push_back(i);
  all = apply_visible(devices, all, std::getenv("ROCR_VISIBLE_DEVICES"));
  const char* hip = std::getenv("HIP_VISIBLE_DEVICES");
  return apply_visible(devices, all, hip != nullptr ? hip : std::getenv("CUDA_VISIBLE_DEVICES"));
}

}  // namespace rocprof::metrics
