// The device and host metrics backend (rocprof-sys's "process sampling", nsys's
// --gpu-metrics): a thread of its own reads one GPU management library (source.hpp) and
// /proc (host.hpp) `hz` times a second and emits every value as a counter sample.
//
// Storage follows rocprofiler-systems' rocpd writer for its AMD SMI and CPU-frequency samples
// (source/lib/core/rocpd/data_processor.cpp and the amd_smi / cpu_freq samplers that call it):
// one rocpd_info_pmc row per (agent, counter) (target_arch, units, value_type 'ABS', symbol a
// short label), one rocpd_track per counter and device named "<counter> [<device>]" with no
// thread, and per value a rocpd_event (category: the source, "amd_smi"/"rocm_smi"/"nvml", or
// "cpu_frequency" for host figures as rocprof-sys files them), a rocpd_sample on the track at
// the time of the reading and a rocpd_pmc_event holding the value. The mapping to rows is
// storage/rocpd_mapping.cpp (kFlagCounter); this file only emits records and PmcInfo rows.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>

#include "capture/context.hpp"
#include "capture/metrics/host.hpp"
#include "capture/metrics/source.hpp"
#include "capture/settings.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::metrics {

std::unique_ptr<GpuSource> make_nvml_source();
#ifdef ROCPROF_HAVE_AMD_SMI
std::unique_ptr<GpuSource> make_amd_smi_source();
#endif
#ifdef ROCPROF_HAVE_ROCM_SMI
std::unique_ptr<GpuSource> make_rocm_smi_source();
#endif

namespace {

const MetricDef kGpu[kGpuMetricCount] = {
    {"device_busy_gfx", "GFX Busy", "%",
     "GPU utilisation: percent of the last sample period a kernel was executing"},
    {"device_busy_umc", "UMC Busy", "%",
     "Memory controller utilisation: percent of the last sample period device memory was read "
     "or written"},
    {"device_memory_usage", "Memory Usage", "MB", "Device memory in use (MB = 10^6 bytes)"},
    {"device_power", "Power", "W", "Power draw of the GPU (board or socket)"},
    {"device_temp", "Temperature", "\u00B0C", "GPU temperature (edge, else junction/hotspot)"},
    {"device_gfx_clock", "GFX Clock", "MHz", "Current graphics/SM clock"},
    {"device_mem_clock", "Memory Clock", "MHz", "Current memory clock"},
    {"device_throttle_reasons", "Throttle Reasons", "bitmask",
     "Why clocks are held down, as the library's reason bits (NVML clocks event reasons, "
     "ROCm SMI throttle_status)"},
    {"device_pcie_tx", "PCIe TX", "MB/s", "PCIe data sent by the device"},
    {"device_pcie_rx", "PCIe RX", "MB/s", "PCIe data received by the device"},
    {"device_link_tx", "Link TX", "MB/s", "NVLink/XGMI data sent, all links together"},
    {"device_link_rx", "Link RX", "MB/s", "NVLink/XGMI data received, all links together"},
    {"device_pcie_bandwidth_inst", "PCIe Bandwidth", "MB/s",
     "PCIe bandwidth in use, both directions (AMD SMI gpu_metrics, in GB/s steps)"},
    {"device_energy", "energy", "J",
     "The device's cumulative energy counter in joules since the driver's reference point "
     "(NVML: since the driver loaded); unwrapped, never decreasing"},
};

constexpr const char* kHostCategory = "cpu_frequency";

// One series: a counter of one agent on its own track.
struct Series {
  uint32_t track = 0;  // interned "<name> [<n>]" (or the name for process figures)
  uint32_t key = 0;    // interned PmcInfo key
  bool described = false;
  PmcInfo info;  // sent once, with the first value
};

class Sampler {
 public:
  bool start(CaptureContext& ctx, const MetricsSettings& s, std::string* why) {
    // Not in a fork child (a data loader worker, or a fork about to exec): the GPUs and cores
    // are its parent's to sample, and a reading would give a child that only execs a
    // database of its own. rocprof-sys samples nothing in children either.
    if (running_ || fork_child_) return true;
    ctx_ = &ctx;
    // One tick at the faster rate; the full reading every 1/hz of them, energy alone between.
    period_ns_ = 1000000000ull / std::max(s.hz, s.energy_hz);
    full_period_ns_ = s.hz != 0 ? 1000000000ull / s.hz : 0;
    energy_only_ = s.hz == 0;
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
    if (stop_fd_ < 0) {
      *why = "eventfd failed";
      return false;
    }
    open_gpus(ctx, s.gpus);
    ctx.info(MetadataInfo{"rocprof.metrics.gpu_source", gpu_note_});
    if (!energy_only_) {
      open_host(ctx, s.cpus);
      ctx.info(MetadataInfo{"rocprof.metrics.hz", std::to_string(s.hz)});
      ctx.info(MetadataInfo{"rocprof.metrics.cpu_frequency_source",
                            host_.cores().empty()              ? "none (--cpus none)"
                            : host_.frequency_source().empty() ? "none found"
                                                               : host_.frequency_source()});
    }
    // The rate energy was read at, which bounds the update period measured below.
    if (!devices_.empty())
      ctx.info(MetadataInfo{"rocprof.energy.hz", std::to_string(std::max(s.hz, s.energy_hz))});
    ticks_ = late_ = energy_ticks_ = 0;
    stopping_.store(false);
    // The thread takes no signals (the call-stack sampler's SIGPROF is for Python threads).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const int rc = pthread_create(&thread_, nullptr, &Sampler::main, this);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
      *why = "cannot start the metrics thread";
      close_all();
      return false;
    }
    running_ = true;
    return true;
  }

  void stop(CaptureContext& ctx) {
    if (!running_) return;
    stopping_.store(true);
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
    pthread_join(thread_, nullptr);
    running_ = false;
    if (!energy_only_) ctx.info(MetadataInfo{"rocprof.metrics.readings", std::to_string(ticks_)});
    if (!devices_.empty())
      ctx.info(MetadataInfo{"rocprof.energy.readings", std::to_string(ticks_ + energy_ticks_)});
    // Readings that started later than their tick by a whole period or more (a slow library
    // call, a stalled machine): their ticks were skipped, not made up.
    ctx.info(MetadataInfo{"rocprof.metrics.late_readings", std::to_string(late_)});
    energy_metadata(ctx);
    close_all();
  }

  void fork_child() {
    // The thread does not exist here and the libraries' state is the parent's: forget both
    // without calling into them; the session starts a new sampler in this process.
    fork_child_ = true;
    if (!running_) return;
    running_ = false;
    (void)source_.release();
    devices_.clear();
    host_.close();
    if (stop_fd_ >= 0) ::close(stop_fd_), stop_fd_ = -1;
  }

 private:
  struct Device {
    uint32_t index = 0;     // the library's
    uint32_t ordinal = 0;   // the runtime's, as the track names have it
    uint32_t agent_id = 0;  // gpu_agent_id(runtime ordinal)
    Series series[kGpuMetricCount];
    // What an energy-only tick reads: the counter, or the power of a device without one
    // (decided by its first reading).
    MetricMask energy_mask = metric_bit(kEnergy);
    bool energy_decided = false;
    ChangePeriod energy_period, power_period;
    // A reading of the counter costs NVML ~4 ms of CPU on an H200 (benchmarks/
    // nvml_read_cost.py), against ~10 us for power: once the counter's update period is known
    // and spans 3 ticks or more, the counter is read only from 1.5 ticks before its next
    // update is due until the update is seen, so each update is still seen within one tick
    // (2 readings per update instead of every tick).
    uint64_t counter_due = 0;
    uint64_t counter_reads = 0;
  };

  // Per device: where its energy comes from (`counter`: device_energy samples; `power`: none,
  // the analysis integrates device_power) and how often that value really changed.
  void energy_metadata(CaptureContext& ctx) {
    for (const Device& d : devices_) {
      const bool counter = d.energy_period.seen();
      if (!counter && !d.power_period.seen()) continue;  // gave neither: nothing to say
      const std::string gpu = "gpu" + std::to_string(d.ordinal);
      ctx.info(MetadataInfo{"rocprof.energy.source." + gpu, counter ? "counter" : "power"});
      const ChangePeriod& p = counter ? d.energy_period : d.power_period;
      ctx.info(MetadataInfo{"rocprof.energy.period_ns." + gpu, std::to_string(p.period_ns())});
      if (counter)
        ctx.info(
            MetadataInfo{"rocprof.energy.counter_reads." + gpu, std::to_string(d.counter_reads)});
    }
  }

  void open_gpus(CaptureContext& ctx, const std::string& gpus) {
    gpu_note_.clear();
    devices_.clear();
    std::vector<uint32_t> wanted;
    bool all = false;
    capture::parse_index_list(gpus, &wanted, &all);
    if (!all && wanted.empty()) {
      gpu_note_ = "none (--gpus none)";
      return;
    }
    std::string reasons;
    for (auto& src : gpu_sources()) {
      std::string why, path;
      if (!src->open(&why, &path)) {
        reasons += std::string(reasons.empty() ? "" : "; ") + src->name() + ": " + why;
        continue;
      }
      const std::vector<GpuDevice> devs = src->devices();
      if (devs.empty()) {
        reasons += std::string(reasons.empty() ? "" : "; ") + src->name() + ": no devices";
        src->close();
        continue;
      }
      const std::vector<uint32_t> order = src->runtime_order(devs);
      const uint32_t cat = ctx.intern(src->category());
      category_ = cat;
      for (uint32_t k = 0; k < order.size(); ++k) {
        bool pick = all;
        for (uint32_t w : wanted) pick = pick || w == k;
        if (!pick) continue;
        const GpuDevice& d = devs[order[k]];
        Device dev;
        dev.index = d.index;
        dev.ordinal = k;
        dev.agent_id = gpu_agent_id(k);
        AgentInfo a;
        a.id = dev.agent_id;
        a.type = "GPU";
        a.absolute_index = a.logical_index = a.type_index = k;
        a.uuid = d.uuid;
        a.name = a.product_name = d.name.empty() ? std::string(src->vendor()) + " GPU" : d.name;
        a.vendor_name = src->vendor();
        a.extdata = std::string("{\"metrics_source\":\"") + src->name() +
                    "\",\"library_index\":" + std::to_string(d.index) +
                    (d.pci_bus_id.empty() ? "" : ",\"pci_bus_id\":\"" + d.pci_bus_id + "\"") + "}";
        ctx.info(std::move(a));
        for (uint32_t m = 0; m < kGpuMetricCount; ++m) {
          const MetricDef& def = kGpu[m];
          Series& s = dev.series[m];
          s.track = ctx.intern(std::string(def.name) + " [" + std::to_string(k) + "]");
          s.key = ctx.intern("pmc:" + std::to_string(dev.agent_id) + ":" + def.name);
          s.info = describe(s.key, dev.agent_id, "GPU", 0, def.name, def.symbol, def.units,
                            def.description, src->name());
        }
        devices_.push_back(std::move(dev));
      }
      gpu_note_ = std::string(src->name()) + " (" + path + "): " + std::to_string(devices_.size()) +
                  " of " + std::to_string(devs.size()) + " devices";
      if (devices_.empty()) {
        src->close();
        return;  // the user's --gpus or *_VISIBLE_DEVICES left none
      }
      source_ = std::move(src);
      return;
    }
    gpu_note_ = "none (" + reasons + ")";
    // Once per process tree: fork children (data loader workers) start samplers of their own.
    static bool said = false;
    if (!said && energy_only_)
      std::fprintf(stderr, "rocprof: --energy: no GPU energy or power here (%s); recording none\n",
                   reasons.c_str());
    else if (!said)
      std::fprintf(stderr,
                   "rocprof: --process-freq: no GPU metrics here (%s); recording host and "
                   "process metrics\n",
                   reasons.c_str());
    said = true;
  }

  void open_host(CaptureContext& ctx, const std::string& cpus) {
    std::vector<uint32_t> wanted;
    bool all = false;
    capture::parse_index_list(cpus, &wanted, &all);
    host_.open(all ? HostReader::all_cores() : wanted);
    host_category_ = ctx.intern(kHostCategory);
    for (uint32_t m = 0; m < kHostMetricCount; ++m) {
      const HostMetricDef& def = host_metric(static_cast<HostMetric>(m));
      Series& s = process_[m];
      s = Series{};
      s.track = ctx.intern(def.name);
      s.key = ctx.intern("pmc:" + std::to_string(kCpuAgentId) + ":" + def.name);
      s.info = describe(s.key, kCpuAgentId, "CPU", 0, def.name, def.symbol, def.units,
                        def.description, "/proc");
    }
    cores_.assign(host_.cores().size() * kCoreMetricCount, Series{});
    for (size_t c = 0; c < host_.cores().size(); ++c)
      for (uint32_t m = 0; m < kCoreMetricCount; ++m) {
        const HostMetricDef& def = core_metric(static_cast<CoreMetric>(m));
        const uint32_t core = host_.cores()[c];
        // rocprof-sys names each core's counter "<name> [N]", the track the same.
        const std::string name = std::string(def.name) + " [" + std::to_string(core) + "]";
        Series& s = cores_[c * kCoreMetricCount + m];
        s.track = ctx.intern(name);
        s.key = ctx.intern("pmc:" + std::to_string(kCpuAgentId) + ":" + name);
        s.info = describe(s.key, kCpuAgentId, "CPU", core, name.c_str(), def.symbol, def.units,
                          def.description, m == kCoreFrequency ? "/proc" : "/proc/stat");
      }
    host_values_.assign(kHostMetricCount, 0);
    core_values_.assign(cores_.size(), 0);
  }

  static PmcInfo describe(uint32_t key, uint32_t agent, const char* arch, uint32_t instance,
                          const char* name, const char* symbol, const char* units,
                          const char* description, const char* component) {
    PmcInfo p;
    p.key = key;
    p.agent_id = agent;
    p.target_arch = arch;
    p.instance_id = instance;
    p.name = name;
    p.symbol = symbol;
    p.units = units;
    p.description = description;
    p.component = component;
    p.value_type = "ABS";
    return p;
  }

  static void* main(void* self) {
    prctl(PR_SET_NAME, "rocprof-metrics", 0, 0, 0);
    static_cast<Sampler*>(self)->run();
    return nullptr;
  }

  void run() {
    tid_ = static_cast<uint32_t>(syscall(SYS_gettid));
    uint64_t next = mono_ns();
    uint64_t next_full = next;
    while (!stopping_.load(std::memory_order_relaxed)) {
      // The full reading is due at its own rate's ticks; a late one is not made up either.
      const bool full = full_period_ns_ != 0 && next >= next_full;
      if (full) {
        next_full += full_period_ns_;
        if (next_full <= next) next_full = next + full_period_ns_;
      }
      sample_once(full);
      ++(full ? ticks_ : energy_ticks_);
      next += period_ns_;
      uint64_t now = mono_ns();
      if (now >= next + period_ns_) {  // behind by a whole period: skip, keep the phase
        late_ += (now - next) / period_ns_;
        next += (now - next) / period_ns_ * period_ns_;
      }
      now = mono_ns();
      if (next > now) {
        const uint64_t wait = next - now;
        timespec ts{static_cast<time_t>(wait / 1000000000ull),
                    static_cast<long>(wait % 1000000000ull)};
        pollfd p{stop_fd_, POLLIN, 0};
        while (::ppoll(&p, 1, &ts, nullptr) < 0 && errno == EINTR) {
        }
      }
    }
  }

  void emit(Series& s, uint32_t category, uint64_t t, double value) {
    if (std::isnan(value)) return;
    if (!s.described) {
      ctx_->info(s.info);  // before the first value: the writer gives it its id first
      s.described = true;
    }
    ctx_->emit(counter_sample(t, tid_, category, s.track, s.key, value));
  }

  void sample_once(bool full) {
    // Readings go on while paused, so the first value after a resume is a true rate.
    const bool keep = !ctx_->paused();
    for (Device& d : devices_) {
      uint64_t t = now_ns();
      const bool counter = d.energy_decided && d.energy_mask == metric_bit(kEnergy);
      const MetricMask skip = counter && t < d.counter_due ? metric_bit(kEnergy) : 0;
      const MetricMask wanted = (full ? kAllMetrics : d.energy_mask) & ~skip;
      if (wanted == 0) continue;  // an energy tick between the counter's updates
      source_->read(d.index, t, wanted, &reading_);
      if (!d.energy_decided) {
        d.energy_decided = true;
        if (std::isnan(reading_.value[kEnergy])) {
          d.energy_mask = metric_bit(kPower);
          if (!full) source_->read(d.index, t = now_ns(), d.energy_mask, &reading_);
        }
      }
      if (!std::isnan(reading_.value[kEnergy])) ++d.counter_reads;
      if (d.energy_period.add(t, reading_.value[kEnergy])) {
        const uint64_t p = d.energy_period.recent_period_ns();
        d.counter_due = p >= 3 * period_ns_ ? t + p - 3 * period_ns_ / 2 : 0;
      }
      d.power_period.add(t, reading_.value[kPower]);
      if (keep)
        for (uint32_t m = 0; m < kGpuMetricCount; ++m)
          emit(d.series[m], category_, t, reading_.value[m]);
    }
    if (!full) return;
    const uint64_t t = now_ns();
    host_.read(t, host_values_.data(), core_values_.data());
    if (!keep) return;
    for (uint32_t m = 0; m < kHostMetricCount; ++m)
      emit(process_[m], host_category_, t, host_values_[m]);
    for (size_t i = 0; i < cores_.size(); ++i) emit(cores_[i], host_category_, t, core_values_[i]);
  }

  void close_all() {
    if (source_) source_->close();
    source_.reset();
    devices_.clear();
    host_.close();
    if (stop_fd_ >= 0) ::close(stop_fd_), stop_fd_ = -1;
  }

  CaptureContext* ctx_ = nullptr;
  bool running_ = false;
  bool fork_child_ = false;  // this process is a fork of a profiled one
  pthread_t thread_{};
  std::atomic<bool> stopping_{false};
  int stop_fd_ = -1;
  uint64_t period_ns_ = 50000000;
  uint64_t full_period_ns_ = 50000000;  // 0: energy only
  bool energy_only_ = false;
  uint32_t tid_ = 0;
  // The thread's while it runs; read after the join. ticks_: full readings.
  uint64_t ticks_ = 0, late_ = 0, energy_ticks_ = 0;
  std::unique_ptr<GpuSource> source_;
  std::vector<Device> devices_;
  std::string gpu_note_;
  uint32_t category_ = 0, host_category_ = 0;
  GpuReading reading_{};
  HostReader host_;
  Series process_[kHostMetricCount];
  std::vector<Series> cores_;
  std::vector<double> host_values_, core_values_;
};

Sampler* g_sampler = new Sampler();  // never destroyed: exit handlers may stop it late

std::string gpu_summary() {
  std::string out;
  for (const SourceStatus& s : source_statuses()) {
    if (s.name == "/proc") continue;
    if (s.live) return "GPU metrics through " + s.name + " (" + s.detail + ")";
    out += (out.empty() ? "" : "; ") + s.name + ": " + s.detail;
  }
  return "host metrics only; no GPU metrics (" + out + ")";
}

class MetricsBackend final : public Backend {
 public:
  const char* name() const override { return "metrics"; }
  bool start(CaptureContext& ctx, const CaptureSettings& s, std::string* why) override {
    if (s.metrics.hz == 0 && s.metrics.energy_hz == 0) return true;  // not requested
    return g_sampler->start(ctx, s.metrics, why);
  }
  void stop(CaptureContext& ctx) override { g_sampler->stop(ctx); }
  void fork_child() override { g_sampler->fork_child(); }
  void probe(bool* live, std::string* reason) override {
    *live = true;  // /proc is always there
    *reason = gpu_summary();
  }
};

const capture::Registered<MetricsBackend> g_registered;  // lives as long as the process

}  // namespace

const MetricDef& gpu_metric(GpuMetric m) { return kGpu[m]; }

std::vector<std::unique_ptr<GpuSource>> gpu_sources() {
  std::vector<std::unique_ptr<GpuSource>> out;
  out.push_back(make_nvml_source());
#ifdef ROCPROF_HAVE_AMD_SMI
  out.push_back(make_amd_smi_source());
#endif
#ifdef ROCPROF_HAVE_ROCM_SMI
  out.push_back(make_rocm_smi_source());
#endif
  return out;
}

std::vector<SourceStatus> source_statuses() {
  std::vector<SourceStatus> out;
  std::vector<std::unique_ptr<GpuSource>> sources = gpu_sources();
  for (const char* name : {"NVML", "AMD SMI", "ROCm SMI"}) {
    SourceStatus st;
    st.name = name;
    for (auto& src : sources) {
      if (st.name != src->name()) continue;
      st.compiled = true;
      std::string why, path;
      if (!src->open(&why, &path)) {
        st.detail = why;
        break;
      }
      const size_t n = src->devices().size();
      src->close();
      st.live = n > 0;
      st.detail = path + ": " + std::to_string(n) + (n == 1 ? " device" : " devices");
    }
    if (!st.compiled)
      st.detail = std::string("not compiled in (") +
                  (st.name == "AMD SMI" ? "amd_smi/amdsmi.h" : "rocm_smi/rocm_smi.h") +
                  " not found at build time)";
    out.push_back(st);
  }
  SourceStatus proc;
  proc.name = "/proc";
  proc.compiled = proc.live = ::access("/proc/self/stat", R_OK) == 0;
  proc.detail = proc.live ? "host and process metrics" : "/proc/self/stat unreadable";
  out.push_back(proc);
  return out;
}

}  // namespace rocprof::metrics
