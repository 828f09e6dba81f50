// Validation and the text form of the capture settings (settings.hpp). One table per section
// names every field once, so parsing and printing cannot drift apart.
#include "capture/settings.hpp"

#include <regex.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <vector>

namespace rocprof::capture {

namespace {

template <class S>
struct Fields {
  // "section.<activity>=0/1" for every activity the backend supports (S::kSupported).
  ActivitySet S::* activities = nullptr;
  std::vector<std::pair<const char*, bool S::*>> bools;
  std::vector<std::pair<const char*, uint32_t S::*>> numbers;
  std::vector<std::pair<const char*, std::string S::*>> strings;
};

const Fields<KernelNameSettings>& kernel_name_fields() {
  static const Fields<KernelNameSettings> f{
      nullptr,
      {{"truncate", &KernelNameSettings::truncate}, {"mangled", &KernelNameSettings::mangled}},
      {},
      {{"include", &KernelNameSettings::include}, {"exclude", &KernelNameSettings::exclude}}};
  return f;
}

const Fields<CuptiSettings>& cupti_fields() {
  static const Fields<CuptiSettings> f{
      &CuptiSettings::activities,
      {{"enabled", &CuptiSettings::enabled},
       {"launch_sites", &CuptiSettings::launch_sites},
       {"region", &CuptiSettings::region},
       {"timestamp", &CuptiSettings::timestamp},
       {"process", &CuptiSettings::process},
       {"runtime_queries", &CuptiSettings::runtime_queries}},
      {{"flush_ms", &CuptiSettings::flush_ms}, {"buffer_mb", &CuptiSettings::buffer_mb}},
      {{"callbacks", &CuptiSettings::callbacks},
       {"graph_trace", &CuptiSettings::graph_trace},
       {"library_candidates", &CuptiSettings::library_candidates}}};
  return f;
}

const Fields<SamplingSettings>& sampling_fields() {
  static const Fields<SamplingSettings> f{
      nullptr,
      {{"wall", &SamplingSettings::wall}, {"native", &SamplingSettings::native}},
      {{"hz", &SamplingSettings::hz}},
      {{"launcher_file", &SamplingSettings::launcher_file},
       {"runpy_file", &SamplingSettings::runpy_file},
       {"method", &SamplingSettings::method}}};
  return f;
}

const Fields<MarkersSettings>& markers_fields() {
  static const Fields<MarkersSettings> f{nullptr,
                                         {{"start_paused", &MarkersSettings::start_paused},
                                          {"kernel_rename", &MarkersSettings::kernel_rename},
                                          {"redact_text", &MarkersSettings::redact_text}},
                                         {},
                                         {}};
  return f;
}

// AMD (capture/hsa/).
const Fields<HsaSettings>& hsa_fields() {
  static const Fields<HsaSettings> f{&HsaSettings::activities,
                                     {{"enabled", &HsaSettings::enabled},
                                      {"launch_sites", &HsaSettings::launch_sites},
                                      {"region", &HsaSettings::region}},
                                     {},
                                     {}};
  return f;
}

const Fields<MetricsSettings>& metrics_fields() {
  static const Fields<MetricsSettings> f{
      nullptr,
      {},
      {{"hz", &MetricsSettings::hz}, {"energy_hz", &MetricsSettings::energy_hz}},
      {{"gpus", &MetricsSettings::gpus}, {"cpus", &MetricsSettings::cpus}}};
  return f;
}

const Fields<CounterSettings>& counter_fields() {
  static const Fields<CounterSettings> f{nullptr,
                                         {},
                                         {},
                                         {{"metrics", &CounterSettings::metrics},
                                          {"origin", &CounterSettings::origin},
                                          {"kernel_include", &CounterSettings::kernel_include},
                                          {"kernel_exclude", &CounterSettings::kernel_exclude}}};
  return f;
}

const Fields<PcSamplingSettings>& pc_sampling_fields() {
  static const Fields<PcSamplingSettings> f{
      nullptr,
      {{"enabled", &PcSamplingSettings::enabled}},
      {{"interval", &PcSamplingSettings::interval}, {"poll_ms", &PcSamplingSettings::poll_ms}},
      {{"method", &PcSamplingSettings::method}, {"unit", &PcSamplingSettings::unit}}};
  return f;
}

const Fields<GpuMetricsSettings>& gpu_metrics_fields() {
  static const Fields<GpuMetricsSettings> f{nullptr,
                                            {},
                                            {{"hz", &GpuMetricsSettings::hz},
                                             {"decode_ms", &GpuMetricsSettings::decode_ms},
                                             {"buffer_mb", &GpuMetricsSettings::buffer_mb}},
                                            {{"set", &GpuMetricsSettings::set}}};
  return f;
}

const Fields<TorchMemorySettings>& torch_memory_fields() {
  static const Fields<TorchMemorySettings> f{
      nullptr, {{"enabled", &TorchMemorySettings::enabled}}, {}, {}};
  return f;
}

const Fields<BoundedSettings>& bounded_fields() {
  static const Fields<BoundedSettings> f{
      nullptr,
      {},
      {},
      {{"max_size", &BoundedSettings::max_size}, {"keep", &BoundedSettings::keep}}};
  return f;
}

bool parse_bool(const std::string& v, bool* out) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return *out = true, true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return *out = false, true;
  return false;
}

template <class S>
constexpr ActivitySet supported() {
  if constexpr (std::is_same_v<S, CuptiSettings> || std::is_same_v<S, HsaSettings>)
    return S::kSupported;
  return {};
}

template <class S>
bool set(const Fields<S>& f, S* s, const std::string& key, const std::string& value,
         std::string* error) {
  Activity a;
  if (f.activities != nullptr && parse_activity(key, &a) && supported<S>().has(a)) {
    bool on = false;
    if (!parse_bool(value, &on)) return *error = "expected 0 or 1, not '" + value + "'", false;
    (s->*f.activities).set(a, on);
    return true;
  }
  for (const auto& [name, member] : f.bools)
    if (key == name) {
      if (parse_bool(value, &(s->*member))) return true;
      return *error = "expected 0 or 1, not '" + value + "'", false;
    }
  for (const auto& [name, member] : f.numbers)
    if (key == name) {
      char* end = nullptr;
      const unsigned long n = std::strtoul(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n > 0xffffffffUL)
        return *error = "expected a whole number, not '" + value + "'", false;
      s->*member = static_cast<uint32_t>(n);
      return true;
    }
  for (const auto& [name, member] : f.strings)
    if (key == name) return s->*member = value, true;
  return *error = "unknown setting", false;
}

template <class S>
void print(const Fields<S>& f, const S& s, const char* section, std::string* out) {
  if (f.activities != nullptr)
    for (const ActivityInfo& info : kActivities)
      if (supported<S>().has(info.id))
        *out += std::string(section) + "." + info.name + "=" +
                ((s.*f.activities).has(info.id) ? "1" : "0") + "\n";
  for (const auto& [name, member] : f.bools)
    *out += std::string(section) + "." + name + "=" + (s.*member ? "1" : "0") + "\n";
  for (const auto& [name, member] : f.numbers)
    *out += std::string(section) + "." + name + "=" + std::to_string(s.*member) + "\n";
  for (const auto& [name, member] : f.strings)
    if (!(s.*member).empty() && (s.*member).find('\n') == std::string::npos)
      *out += std::string(section) + "." + name + "=" + s.*member + "\n";
}

// Index just past the bracket expression opening at p[i] ('['); p.size() if unterminated.
size_t bracket_end(const std::string& p, size_t i) {
  size_t j = i + 1;
  if (j < p.size() && p[j] == '^') ++j;
  if (j < p.size() && p[j] == ']') ++j;  // a leading ] is a member, not the end
  while (j < p.size()) {
    if (p[j] == '[' && j + 1 < p.size() &&
        (p[j + 1] == ':' || p[j + 1] == '.' || p[j + 1] == '=')) {
      const size_t close = p.find(std::string(1, p[j + 1]) + "]", j + 2);
      j = close != std::string::npos ? close + 2 : j + 1;
    } else if (p[j] == ']') {
      return j + 1;
    } else {
      ++j;
    }
  }
  return p.size();
}

// What glibc accepts but reads otherwise than a Python or PCRE user means: the same rule as
// rocpd.regex.unsupported(), so the CLI, rocpd and capture accept exactly the same patterns.
std::string unsupported(const std::string& p) {
  bool after_quantifier = false;
  for (size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c == '\\') {
      const char n = i + 1 < p.size() ? p[i + 1] : '\0';
      if ((n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z'))
        return std::string("\\") + n + " is not POSIX (glibc reads it otherwise)";
      i += 2, after_quantifier = false;
    } else if (c == '[') {
      i = bracket_end(p, i), after_quantifier = false;
    } else if ((c == '?' || c == '+') && after_quantifier) {
      return std::string("lazy or possessive quantifier '") + p[i - 1] + c +
             "' is not POSIX (glibc would read it as greedy)";
    } else if (c == '*' || c == '+' || c == '?') {
      ++i, after_quantifier = true;
    } else if (c == '{') {
      const size_t close = p.find('}', i);
      const bool interval = close != std::string::npos && close > i + 1 &&
                            p.find_first_not_of("0123456789,", i + 1) == close;
      i = interval ? close + 1 : i + 1;
      after_quantifier = interval;
    } else {
      ++i, after_quantifier = false;
    }
  }
  return "";
}

bool check_regex(const std::string& pattern, const char* option, std::string* error) {
  if (pattern.empty()) return true;
  const char* hint = " (POSIX extended syntax: use [0-9] not \\d, no (?i) flags)";
  std::string why = unsupported(pattern);
  if (why.empty()) {
    regex_t re;
    const int rc = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
    if (rc == 0) {
      regfree(&re);
      return true;
    }
    char msg[128];
    regerror(rc, &re, msg, sizeof msg);
    why = msg;
  }
  *error = std::string(option) + " '" + pattern + "': " + why + hint;
  return false;
}

// Metric names as CUPTI spells them: letters, digits, '_' and '.', nothing else (a typo such
// as a comma-joined list is named here rather than by CUPTI inside the profiled program).
bool check_metrics(const std::string& metrics, std::string* error) {
  size_t count = 0;
  for (size_t at = 0; at < metrics.size();) {
    const size_t end = std::min(metrics.find(' ', at), metrics.size());
    std::string name = metrics.substr(at, end - at);
    at = end + 1;
    if (!name.empty() && name[0] == '?') name.erase(0, 1);  // optional: "?name"
    if (name.empty()) continue;
    ++count;
    for (char c : name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'))
        return *error = "--pmc: '" + name +
                        "' is not a counter name (letters, digits, '_' and '.' only; separate "
                        "names with spaces)",
               false;
  }
  if (count > CounterSettings::kMaxMetrics)
    return *error = "--pmc: " + std::to_string(count) + " counters asked for, at most " +
                    std::to_string(CounterSettings::kMaxMetrics) + " per run",
           false;
  return true;
}

bool check_pc_sampling(const PcSamplingSettings& p, std::string* error) {
  if (p.method != "stochastic" && p.method != "host_trap")
    return *error = "--pc-sampling-method must be stochastic or host_trap, not '" + p.method + "'",
           false;
  if (p.unit != "instructions" && p.unit != "cycles" && p.unit != "time")
    return *error = "--pc-sampling-unit must be instructions, cycles or time, not '" + p.unit + "'",
           false;
  if (p.poll_ms < 1 || p.poll_ms > 10000)
    return *error =
               "pc_sampling.poll_ms must be between 1 and 10000, not " + std::to_string(p.poll_ms),
           false;
  return true;
}

}  // namespace

bool parse_index_list(const std::string& text, std::vector<uint32_t>* out, bool* all) {
  out->clear();
  *all = text == "all" || text.empty();
  if (*all || text == "none") return true;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    at = end + 1;
    const size_t dash = item.find('-');
    const std::string lo_s = item.substr(0, dash);
    const std::string hi_s = dash == std::string::npos ? lo_s : item.substr(dash + 1);
    if (lo_s.empty() || hi_s.empty() || lo_s.find_first_not_of("0123456789") != std::string::npos ||
        hi_s.find_first_not_of("0123456789") != std::string::npos || lo_s.size() > 6 ||
        hi_s.size() > 6)
      return false;
    const uint32_t lo = static_cast<uint32_t>(std::stoul(lo_s));
    const uint32_t hi = static_cast<uint32_t>(std::stoul(hi_s));
    if (hi < lo || hi - lo > 65536) return false;
    for (uint32_t i = lo; i <= hi; ++i) out->push_back(i);
  }
  return true;
}

bool validate(const CaptureSettings& s, std::string* error) {
  const CuptiSettings& c = s.cupti;
  if (!check_regex(s.kernel_names.include, "--trace-kernel-include-regex", error) ||
      !check_regex(s.kernel_names.exclude, "--trace-kernel-exclude-regex", error))
    return false;
  if (!c.callbacks.empty() && c.callbacks != "none" && c.callbacks != "launch" &&
      c.callbacks != "all")
    return *error = "cupti.callbacks must be none, launch or all, not '" + c.callbacks + "'", false;
  if (c.graph_trace != "node" && c.graph_trace != "graph")
    return *error = "cupti.graph_trace must be node or graph, not '" + c.graph_trace + "'", false;
  if (c.flush_ms > 60000)
    return *error = "cupti.flush_ms must be at most 60000, not " + std::to_string(c.flush_ms),
           false;
  if (c.buffer_mb < 1 || c.buffer_mb > 256)
    return *error = "cupti.buffer_mb must be between 1 and 256, not " + std::to_string(c.buffer_mb),
           false;
  if (s.metrics.hz > MetricsSettings::kMaxHz)
    return *error = "--process-freq must be between 1 and " +
                    std::to_string(MetricsSettings::kMaxHz) + " Hz, not " +
                    std::to_string(s.metrics.hz),
           false;
  if (s.metrics.energy_hz > MetricsSettings::kMaxHz)
    return *error = "metrics.energy_hz must be at most " + std::to_string(MetricsSettings::kMaxHz) +
                    " Hz, not " + std::to_string(s.metrics.energy_hz),
           false;
  std::vector<uint32_t> list;
  bool all = false;
  if (!parse_index_list(s.metrics.gpus, &list, &all))
    return *error = "--gpus '" + s.metrics.gpus + "': expected all, none or a list like 0,2-3",
           false;
  if (!parse_index_list(s.metrics.cpus, &list, &all))
    return *error = "--cpus '" + s.metrics.cpus + "': expected all, none or a list like 0,2-3",
           false;
  if (!check_metrics(s.counters.metrics, error)) return false;
  if (!check_regex(s.counters.kernel_include, "--kernel-include-regex", error) ||
      !check_regex(s.counters.kernel_exclude, "--kernel-exclude-regex", error))
    return false;
  if (!check_pc_sampling(s.pc_sampling, error)) return false;
  if (s.bounded.max_size.find_first_not_of("0123456789") != std::string::npos)
    return *error = "bounded.max_size must be a number of bytes, not '" + s.bounded.max_size + "'",
           false;
  if (s.bounded.keep != "auto" && s.bounded.keep.rfind("slowest:", 0) != 0 &&
      s.bounded.keep.rfind("every:", 0) != 0)
    return *error = "--keep must be auto, slowest:N or every:K, not '" + s.bounded.keep + "'",
           false;
  const GpuMetricsSettings& g = s.gpu_metrics;
  if (g.hz > GpuMetricsSettings::kMaxHz)
    return *error = "--gpu-metrics-frequency must be between 1 and " +
                    std::to_string(GpuMetricsSettings::kMaxHz) + " Hz, not " + std::to_string(g.hz),
           false;
  if (g.hz != 0 && g.set.find_first_not_of(" ,") == std::string::npos)
    return *error = "--gpu-metrics-set: empty", false;
  if (g.decode_ms < 1 || g.decode_ms > 1000)
    return *error = "gpu_metrics.decode_ms must be between 1 and 1000, not " +
                    std::to_string(g.decode_ms),
           false;
  if (g.buffer_mb < 1 || g.buffer_mb > 4096)
    return *error = "gpu_metrics.buffer_mb must be between 1 and 4096, not " +
                    std::to_string(g.buffer_mb),
           false;
  if (s.sampling.method != "signal" && s.sampling.method != "thread")
    return *error = "--sampling-method must be signal or thread, not '" + s.sampling.method + "'",
           false;
  if (s.sampling.hz > 100000)
    return *error =
               "--sample must be between 1 and 100000 Hz, not " + std::to_string(s.sampling.hz),
           false;
  return true;
}

bool parse_text(const std::string& text, char separator, const std::string& section,
                CaptureSettings* s, std::string* error) {
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(separator, at);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(at, end - at);
    at = end + 1;
    while (!item.empty() && (item.front() == ' ')) item.erase(0, 1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\r')) item.pop_back();
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    std::string key = section + item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    std::string why;
    bool ok = false;
    if (eq == std::string::npos)
      why = "expected key=value";
    else if (key.rfind("kernel_names.", 0) == 0)
      ok = set(kernel_name_fields(), &s->kernel_names, key.substr(13), value, &why);
    else if (key.rfind("cupti.", 0) == 0)
      ok = set(cupti_fields(), &s->cupti, key.substr(6), value, &why);
    else if (key.rfind("markers.", 0) == 0)
      ok = set(markers_fields(), &s->markers, key.substr(8), value, &why);
    else if (key.rfind("hsa.", 0) == 0)
      ok = set(hsa_fields(), &s->hsa, key.substr(4), value, &why);
    else if (key.rfind("sampling.", 0) == 0)
      ok = set(sampling_fields(), &s->sampling, key.substr(9), value, &why);
    else if (key.rfind("metrics.", 0) == 0)
      ok = set(metrics_fields(), &s->metrics, key.substr(8), value, &why);
    else if (key.rfind("counters.", 0) == 0)
      ok = set(counter_fields(), &s->counters, key.substr(9), value, &why);
    else if (key.rfind("pc_sampling.", 0) == 0)
      ok = set(pc_sampling_fields(), &s->pc_sampling, key.substr(12), value, &why);
    else if (key.rfind("bounded.", 0) == 0)
      ok = set(bounded_fields(), &s->bounded, key.substr(8), value, &why);
    else if (key.rfind("torch_memory.", 0) == 0)
      ok = set(torch_memory_fields(), &s->torch_memory, key.substr(13), value, &why);
    else if (key.rfind("gpu_metrics.", 0) == 0)
      ok = set(gpu_metrics_fields(), &s->gpu_metrics, key.substr(12), value, &why);
    else
      why = "unknown setting";
    if (!ok) {
      *error = "capture setting '" + item + "': " + why;
      return false;
    }
  }
  return true;
}

std::string to_text(const CaptureSettings& s) {
  std::string out;
  print(kernel_name_fields(), s.kernel_names, "kernel_names", &out);
  print(cupti_fields(), s.cupti, "cupti", &out);
  print(sampling_fields(), s.sampling, "sampling", &out);
  print(markers_fields(), s.markers, "markers", &out);
  print(hsa_fields(), s.hsa, "hsa", &out);
  print(metrics_fields(), s.metrics, "metrics", &out);
  print(counter_fields(), s.counters, "counters", &out);
  print(pc_sampling_fields(), s.pc_sampling, "pc_sampling", &out);
  print(bounded_fields(), s.bounded, "bounded", &out);
  print(torch_memory_fields(), s.torch_memory, "torch_memory", &out);
  print(gpu_metrics_fields(), s.gpu_metrics, "gpu_metrics", &out);
  return out;
}

}  // namespace rocprof::capture
