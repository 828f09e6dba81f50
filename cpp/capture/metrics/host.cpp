#include "capture/metrics/host.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace rocprof::metrics {
namespace {

// rocprofiler-systems' names where it has the quantity (cpu_frequency [N]); the same style
// for the rest.
const HostMetricDef kHost[kHostMetricCount] = {
    {"process_rss", "RSS", "MB", "Resident memory of this process (MB = 10^6 bytes)"},
    {"process_page_faults", "Page Faults", "1/s",
     "Page faults (minor + major) of this process per second over the last interval"},
    {"process_major_page_faults", "Major Faults", "1/s",
     "Major page faults (read from disk) of this process per second over the last interval"},
    {"process_cpu_usage", "CPU Usage", "%",
     "CPU time of this process (user + system, all threads, the sampler's own included) over "
     "wall time; 100 = one core"},
};
const HostMetricDef kCore[kCoreMetricCount] = {
    {"cpu_load", "Load", "%", "Busy time of the core (not idle or iowait) over the last interval"},
    {"cpu_frequency", "Frequency", "MHz", "Current frequency of the core"},
};

int open_ro(const char* path) { return ::open(path, O_RDONLY | O_CLOEXEC); }

// Parses a decimal at p, advancing it; skips leading spaces. A '-' is skipped (the fields
// read here are never negative, but fields before them, e.g. tpgid, can be -1).
uint64_t number(const char*& p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  if (p < end && *p == '-') ++p;
  uint64_t v = 0;
  while (p < end && *p >= '0' && *p <= '9') v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  return v;
}

const char* next_line(const char* p, const char* end) {
  while (p < end && *p != '\n') ++p;
  return p < end ? p + 1 : end;
}

}  // namespace

const HostMetricDef& host_metric(HostMetric m) { return kHost[m]; }
const HostMetricDef& core_metric(CoreMetric m) { return kCore[m]; }

HostReader::~HostReader() { close(); }

std::vector<uint32_t> HostReader::all_cores() {
  std::vector<uint32_t> out;
  const int fd = open_ro("/proc/stat");
  if (fd < 0) return out;
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, 3, "cpu") == 0 && at + 3 < end && text[at + 3] >= '0' &&
        text[at + 3] <= '9')
      out.push_back(static_cast<uint32_t>(std::strtoul(text.c_str() + at + 3, nullptr, 10)));
    at = end + 1;
  }
  return out;
}

bool HostReader::reread(int fd, std::vector<char>& buf, size_t* len) {
  *len = 0;
  if (fd < 0 || ::lseek(fd, 0, SEEK_SET) != 0) return false;
  while (*len < buf.size()) {
    const ssize_t n = ::read(fd, buf.data() + *len, buf.size() - *len);
    if (n <= 0) break;
    *len += static_cast<size_t>(n);
  }
  return *len > 0;
}

void HostReader::open(const std::vector<uint32_t>& cores) {
  close();
  page_size_ = ::sysconf(_SC_PAGESIZE);
  if (page_size_ <= 0) page_size_ = 4096;
  const std::vector<uint32_t> present = all_cores();
  uint32_t max_core = 0;
  for (uint32_t c : present) max_core = c > max_core ? c : max_core;
  core_slot_.assign(present.empty() ? 0 : max_core + 1, -1);
  for (uint32_t c : cores)
    if (c < core_slot_.size() && core_slot_[c] < 0) {
      bool exists = false;
      for (uint32_t p : present) exists = exists || p == c;
      if (!exists) continue;
      core_slot_[c] = static_cast<int32_t>(cores_.size());
      cores_.push_back(c);
    }
  stat_fd_ = open_ro("/proc/stat");
  statm_fd_ = open_ro("/proc/self/statm");
  // Sized from what the files hold now, with room: a line per core at most ~100 bytes.
  stat_buf_.assign(65536 + 160 * present.size(), 0);
  statm_buf_.assign(512, 0);
  small_buf_.assign(64, 0);
  freq_fds_.assign(cores_.size(), -1);
  bool all_sysfs = !cores_.empty();
  for (size_t i = 0; i < cores_.size(); ++i) {
    const std::string p =
        "/sys/devices/system/cpu/cpu" + std::to_string(cores_[i]) + "/cpufreq/scaling_cur_freq";
    freq_fds_[i] = open_ro(p.c_str());
    all_sysfs = all_sysfs && freq_fds_[i] >= 0;
  }
  if (all_sysfs) freq_source_ = "cpufreq scaling_cur_freq";
  if (!cores_.empty() && !all_sysfs) {
    for (int& fd : freq_fds_)
      if (fd >= 0) ::close(fd), fd = -1;
    cpuinfo_fd_ = open_ro("/proc/cpuinfo");
    size_t len = 0;
    cpuinfo_buf_.assign(1 << 20, 0);
    if (reread(cpuinfo_fd_, cpuinfo_buf_, &len) &&
        std::strstr(std::string(cpuinfo_buf_.data(), len).c_str(), "cpu MHz") != nullptr) {
      cpuinfo_buf_.assign(len * 2 + 4096, 0);
      freq_source_ = "/proc/cpuinfo";
    } else {
      ::close(cpuinfo_fd_);
      cpuinfo_fd_ = -1;
      cpuinfo_buf_.clear();
    }
  }
  prev_busy_.assign(cores_.size(), 0);
  prev_total_.assign(cores_.size(), 0);
  prev_t_ = 0;
}

void HostReader::close() {
  for (int* fd : {&stat_fd_, &statm_fd_, &cpuinfo_fd_})
    if (*fd >= 0) ::close(*fd), *fd = -1;
  for (int& fd : freq_fds_)
    if (fd >= 0) ::close(fd), fd = -1;
  freq_fds_.clear();
  cores_.clear();
}

void HostReader::read(uint64_t now_ns, double* process, double* core) {
  const double nan = std::nan("");
  for (uint32_t m = 0; m < kHostMetricCount; ++m) process[m] = nan;
  for (size_t i = 0; i < cores_.size() * kCoreMetricCount; ++i) core[i] = nan;
  const bool have_prev = prev_t_ != 0 && now_ns > prev_t_;
  const double seconds = have_prev ? static_cast<double>(now_ns - prev_t_) / 1e9 : 0;
  size_t len = 0;

  if (reread(statm_fd_, statm_buf_, &len)) {
    const char* p = statm_buf_.data();
    const char* end = p + len;
    number(p, end);  // size
    const uint64_t resident = number(p, end);
    process[kProcessRss] = static_cast<double>(resident) * static_cast<double>(page_size_) / 1e6;
  }
  // Page faults from getrusage and CPU time from the process CPU clock (nanoseconds, every
  // thread): /proc/self/stat counts CPU in clock ticks, which made a 20 ms reading 0 or 50 %.
  rusage ru{};
  timespec cpu_ts{};
  if (::getrusage(RUSAGE_SELF, &ru) == 0 &&
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_ts) == 0) {
    const uint64_t minflt = static_cast<uint64_t>(ru.ru_minflt);
    const uint64_t majflt = static_cast<uint64_t>(ru.ru_majflt);
    const uint64_t cpu = static_cast<uint64_t>(cpu_ts.tv_sec) * 1000000000ull +
                         static_cast<uint64_t>(cpu_ts.tv_nsec);
    if (have_prev) {
      process[kProcessPageFaults] =
          static_cast<double>((minflt + majflt) - (prev_minflt_ + prev_majflt_)) / seconds;
      process[kProcessMajorFaults] = static_cast<double>(majflt - prev_majflt_) / seconds;
      process[kProcessCpu] = 100.0 * static_cast<double>(cpu - prev_cpu_ns_) / 1e9 / seconds;
    }
    prev_minflt_ = minflt;
    prev_majflt_ = majflt;
    prev_cpu_ns_ = cpu;
  }
  if (!cores_.empty() && reread(stat_fd_, stat_buf_, &len)) {
    const char* p = stat_buf_.data();
    const char* end = p + len;
    for (; p < end; p = next_line(p, end)) {
      if (end - p < 4 || std::strncmp(p, "cpu", 3) != 0 || p[3] < '0' || p[3] > '9') continue;
      const char* q = p + 3;
      const uint64_t n = number(q, end);
      if (n >= core_slot_.size() || core_slot_[n] < 0) continue;
      const size_t slot = static_cast<size_t>(core_slot_[n]);
      uint64_t v[8] = {};
      for (uint64_t& x : v) x = number(q, end);
      uint64_t total = 0;
      for (uint64_t x : v) total += x;
      const uint64_t busy = total - v[3] - v[4];  // less idle and iowait
      if (have_prev && total > prev_total_[slot])
        core[slot * kCoreMetricCount + kCoreLoad] = 100.0 *
                                                    static_cast<double>(busy - prev_busy_[slot]) /
                                                    static_cast<double>(total - prev_total_[slot]);
      prev_busy_[slot] = busy;
      prev_total_[slot] = total;
    }
  }
  for (size_t i = 0; i < freq_fds_.size(); ++i)
    if (freq_fds_[i] >= 0 && reread(freq_fds_[i], small_buf_, &len)) {
      const char* p = small_buf_.data();
      core[i * kCoreMetricCount + kCoreFrequency] =
          static_cast<double>(number(p, p + len)) / 1000.0;  // kHz
    }
  if (cpuinfo_fd_ >= 0 && reread(cpuinfo_fd_, cpuinfo_buf_, &len)) {
    // "processor : N" starts each core's block; its "cpu MHz : X.Y" follows.
    const char* p = cpuinfo_buf_.data();
    const char* end = p + len;
    int64_t current = -1;
    for (; p < end; p = next_line(p, end)) {
      if (std::strncmp(p, "processor", 9) == 0) {
        const char* q = p + 9;
        while (q < end && (*q == ' ' || *q == '\t' || *q == ':')) ++q;
        current = static_cast<int64_t>(number(q, end));
      } else if (std::strncmp(p, "cpu MHz", 7) == 0 && current >= 0 &&
                 static_cast<uint64_t>(current) < core_slot_.size() && core_slot_[current] >= 0) {
        const char* q = p + 7;
        while (q < end && (*q == ' ' || *q == '\t' || *q == ':')) ++q;
        const double whole = static_cast<double>(number(q, end));
        double frac = 0, scale = 0.1;
        if (q < end && *q == '.')
          for (++q; q < end && *q >= '0' && *q <= '9'; ++q, scale /= 10) frac += (*q - '0') * scale;
        core[static_cast<size_t>(core_slot_[current]) * kCoreMetricCount + kCoreFrequency] =
            whole + frac;
      }
    }
  }
  prev_t_ = now_ns;
}

}  // namespace rocprof::metrics
