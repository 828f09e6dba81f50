// Host and process metrics, read by the metrics thread: per-core load and frequency (/proc,
// /sys), this process's resident memory (/proc/self/statm), page faults (getrusage) and CPU
// use (its CPU clock). Files are opened once at start and re-read into buffers sized then
// (no allocation while sampling).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rocprof::metrics {

enum HostMetric : uint32_t {
  kProcessRss,          // MB (10^6 bytes) resident
  kProcessPageFaults,   // minor + major faults per second over the last interval
  kProcessMajorFaults,  // major faults per second
  kProcessCpu,          // % of one core: user + system time over wall time
  kHostMetricCount
};
enum CoreMetric : uint32_t {
  kCoreLoad,       // % busy (not idle or iowait) over the last interval, from /proc/stat
  kCoreFrequency,  // MHz (cpufreq's scaling_cur_freq, else /proc/cpuinfo "cpu MHz")
  kCoreMetricCount
};

struct HostMetricDef {
  const char* name;  // rocpd_info_pmc.name (per-core ones get " [N]": rocprof-sys's form)
  const char* symbol;
  const char* units;
  const char* description;
};
const HostMetricDef& host_metric(HostMetric m);
const HostMetricDef& core_metric(CoreMetric m);

class HostReader {
 public:
  HostReader() = default;
  ~HostReader();
  HostReader(const HostReader&) = delete;
  HostReader& operator=(const HostReader&) = delete;

  // `cores`: which cores' load and frequency to read (empty: none). Opens the files.
  void open(const std::vector<uint32_t>& cores);
  void close();
  const std::vector<uint32_t>& cores() const { return cores_; }
  // Cores of this host (cpuN lines of /proc/stat).
  static std::vector<uint32_t> all_cores();
  // Where frequencies come from ("" when from nowhere), for the database's metadata.
  const std::string& frequency_source() const { return freq_source_; }

  // One reading at `now_ns`: process[m] and core[c * kCoreMetricCount + m] (NaN where there
  // is nothing yet: rates need a previous reading).
  void read(uint64_t now_ns, double* process, double* core);

 private:
  bool reread(int fd, std::vector<char>& buf, size_t* len);

  std::vector<uint32_t> cores_;
  int stat_fd_ = -1, statm_fd_ = -1, cpuinfo_fd_ = -1;
  std::vector<int> freq_fds_;  // per core; -1: none
  std::vector<char> stat_buf_, statm_buf_, cpuinfo_buf_, small_buf_;
  std::string freq_source_;
  long page_size_ = 4096;
  // Previous reading, for rates.
  uint64_t prev_t_ = 0;
  uint64_t prev_minflt_ = 0, prev_majflt_ = 0, prev_cpu_ns_ = 0;
  std::vector<uint64_t> prev_busy_, prev_total_;
  std::vector<int32_t> core_slot_;  // core number → position in cores_ (-1: not read)
};

}  // namespace rocprof::metrics
