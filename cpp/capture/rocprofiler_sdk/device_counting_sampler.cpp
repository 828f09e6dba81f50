// The device counting sampler (device_counting.hpp): a context per GPU configured inside the
// SDK's initialize, the counter config chosen when the SDK starts a context, our thread reading
// every GPU each period, the values stored as counter samples, the run's metadata, and the
// backend `rocprof info` lists. Every SDK call's status is checked; a failure turns that GPU
// off with one line on stderr and in the metadata, and the program runs on.
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "capture/context.hpp"
#include "capture/metric_series.hpp"
#include "capture/settings.hpp"
#include "device_counting.hpp"
#include "rocprof/clock.hpp"
#include "rocprof/info.hpp"

namespace rocprof::sdk::dc {
namespace {

constexpr const char* kComponent = "rocprofiler_sdk_device_counting";
constexpr size_t kFirstRecords = 4096;  // a read's records before the SDK asks for more

std::string text(const Api& a, rocprofiler_status_t s) {
  const char* t = a.rocprofiler_get_status_string ? a.rocprofiler_get_status_string(s) : nullptr;
  return t != nullptr ? t : "rocprofiler-sdk status " + std::to_string(static_cast<int>(s));
}

using Series = MetricSeries;

struct Counter {
  uint64_t id = 0;
  double sum = 0, prev = 0;  // this read's and the previous read's sums over the instances
  uint32_t instances = 0;
};

// One GPU agent. Lives as long as its sampler (its address is the SDK callback's data).
struct Gpu {
  Sampler::State* owner = nullptr;
  uint64_t handle = 0;
  uint32_t ordinal = 0, agent_id = 0;
  AgentFacts facts;
  rocprofiler_context_id_t ctx{};
  rocprofiler_counter_config_id_t config{};  // made at its first start, kept
  bool configured = false, started = false;
  // Written by the SDK's start callback (any thread), read by ours once `ready` is set.
  std::atomic<bool> ready{false};
  std::vector<Chosen> metrics;
  std::vector<std::string> counter_names, left_out;
  std::vector<Counter> counters;
  std::vector<Series> series;
  std::string status = "pending";
  // Our thread's.
  std::vector<rocprofiler_counter_record_t> records;
  std::vector<Delta> deltas;
  bool have_base = false;
  uint64_t last_t = 0, first_t = 0, reads = 0, samples = 0, errors = 0, not_ready = 0;
  uint64_t resets = 0, read_ns = 0;
  bool finalized = false;  // the SDK refused a read at its finalize: no more reads
  std::string last_error;
};

}  // namespace

struct Sampler::State {
  ClockFn clock = nullptr;
  Api api;
  mutable std::mutex mu;  // everything but what the thread and the SDK callback own
  std::condition_variable cv;
  bool session = false, initialized = false, finalized = false, forked = false, stop = false;
  bool running = false;
  GpuMetricsSettings settings;
  CaptureContext* ctx = nullptr;
  std::string status = "rocprofiler-sdk has not started in this process";
  std::deque<Gpu> gpus;
  std::thread thread;
  MetricSeriesWriter out;  // the thread's counter samples (tid: the thread's)
  uint64_t period_ns = 200000, missing = 0;

  // ---- the SDK's callbacks ----
  static rocprofiler_status_t collect_agents(rocprofiler_agent_version_t, const void** agents,
                                             size_t n, void* data) {
    auto* st = static_cast<State*>(data);
    for (size_t i = 0; i < n; ++i) {
      const auto* a = static_cast<const rocprofiler_agent_v0_t*>(agents[i]);
      if (a == nullptr || a->type != ROCPROFILER_AGENT_TYPE_GPU) continue;
      Gpu& g = st->gpus.emplace_back();
      g.owner = st;
      g.handle = a->id.handle;
      g.ordinal = a->logical_node_type_id >= 0 ? static_cast<uint32_t>(a->logical_node_type_id)
                                               : static_cast<uint32_t>(st->gpus.size() - 1);
      g.agent_id = gpu_agent_id(g.ordinal);
      g.facts.chip = a->name != nullptr ? a->name : "unknown GPU";
      g.facts.cu_count = a->cu_count;
      g.facts.simd_count = a->simd_count;
      g.facts.max_waves_per_cu =
          a->max_waves_per_cu != 0 ? a->max_waves_per_cu : a->max_waves_per_simd * a->simd_per_cu;
    }
    return ROCPROFILER_STATUS_SUCCESS;
  }

  static rocprofiler_status_t collect_counters(rocprofiler_agent_id_t,
                                               rocprofiler_counter_id_t* ids, size_t n,
                                               void* data) {
    static_cast<std::vector<rocprofiler_counter_id_t>*>(data)->assign(ids, ids + n);
    return ROCPROFILER_STATUS_SUCCESS;
  }

  // Whether counters fit one pass: rocprofiler_create_counter_config checks the blocks' limits.
  struct SdkFit final : FitCheck {
    const Api& api;
    rocprofiler_agent_id_t agent;
    const std::vector<std::pair<std::string, uint64_t>>& ids;
    SdkFit(const Api& a, rocprofiler_agent_id_t ag,
           const std::vector<std::pair<std::string, uint64_t>>& i)
        : api(a), agent(ag), ids(i) {}
    bool fits(const std::vector<std::string>& names, std::string* why) override {
      std::vector<rocprofiler_counter_id_t> list;
      for (const std::string& n : names)
        for (const auto& [name, id] : ids)
          if (name == n) list.push_back(rocprofiler_counter_id_t{id});
      rocprofiler_counter_config_id_t cfg{};
      const rocprofiler_status_t s =
          api.rocprofiler_create_counter_config(agent, list.data(), list.size(), &cfg);
      if (s != ROCPROFILER_STATUS_SUCCESS) return *why = text(api, s), false;
      api.rocprofiler_destroy_counter_config(cfg);
      return true;
    }
  };

  // The SDK starts a GPU's context (rocprofiler_start_context, or HSA's start when the context
  // was started before it): the counters are chosen once and the config handed over.
  static void on_start(rocprofiler_context_id_t ctx, rocprofiler_agent_id_t agent,
                       rocprofiler_device_counting_agent_cb_t set_config, void* data) {
    auto* g = static_cast<Gpu*>(data);
    State& st = *g->owner;
    rocprofiler_status_t s = ROCPROFILER_STATUS_SUCCESS;
    if (g->config.handle == 0) {
      std::string why;
      if (!st.choose_for(*g, agent, &why)) {
        g->status = "off: " + why;
        std::fprintf(stderr, "rocprof: --gpu-metrics: GPU %u (%s): %s; tracing continues\n",
                     g->ordinal, g->facts.chip.c_str(), why.c_str());
        return;  // no config: the SDK leaves this GPU alone
      }
      std::vector<rocprofiler_counter_id_t> list;
      for (const Counter& c : g->counters) list.push_back(rocprofiler_counter_id_t{c.id});
      s = st.api.rocprofiler_create_counter_config(agent, list.data(), list.size(), &g->config);
      if (s == ROCPROFILER_STATUS_SUCCESS && st.ctx != nullptr) st.describe(*g);
    }
    if (s == ROCPROFILER_STATUS_SUCCESS) s = set_config(ctx, g->config);
    if (s != ROCPROFILER_STATUS_SUCCESS) {
      g->ready.store(false, std::memory_order_release);
      g->status = "off: its counter config: " + text(st.api, s);
      std::fprintf(stderr, "rocprof: --gpu-metrics: GPU %u (%s): %s; tracing continues\n",
                   g->ordinal, g->facts.chip.c_str(), g->status.c_str() + 5);
      return;
    }
    g->status = "on";
    g->ready.store(true, std::memory_order_release);
  }

  bool choose_for(Gpu& g, rocprofiler_agent_id_t agent, std::string* why) {
    g.metrics.clear();  // a choice that failed at an earlier start is made again from scratch
    g.counter_names.clear();
    g.left_out.clear();
    g.counters.clear();
    std::vector<rocprofiler_counter_id_t> ids;
    rocprofiler_status_t s =
        api.rocprofiler_iterate_agent_supported_counters(agent, collect_counters, &ids);
    if (s != ROCPROFILER_STATUS_SUCCESS) return *why = "its counters: " + text(api, s), false;
    std::vector<std::pair<std::string, uint64_t>> named;
    std::vector<std::string> supported;
    for (rocprofiler_counter_id_t id : ids) {
      rocprofiler_counter_info_v0_t info{};
      if (api.rocprofiler_query_counter_info(id, ROCPROFILER_COUNTER_INFO_VERSION_0, &info) !=
              ROCPROFILER_STATUS_SUCCESS ||
          info.name == nullptr)
        continue;
      named.emplace_back(info.name, id.handle);
      supported.emplace_back(info.name);
    }
    SdkFit fit(api, agent, named);
    if (!choose(supported, g.facts.chip, settings.set, fit, &g.metrics, &g.counter_names,
                &g.left_out, why))
      return false;
    for (const std::string& n : g.counter_names)
      for (const auto& [name, id] : named)
        if (name == n) g.counters.push_back(Counter{id, 0, 0, 0});
    for (const std::string& l : g.left_out)
      std::fprintf(stderr, "rocprof: --gpu-metrics: GPU %u (%s) left out %s\n", g.ordinal,
                   g.facts.chip.c_str(), l.c_str());
    return true;
  }

  // ---- configuration, inside the SDK's initialize ----
  void configure() {
    rocprofiler_status_t s = api.rocprofiler_query_available_agents(
        ROCPROFILER_AGENT_INFO_VERSION_0, collect_agents, sizeof(rocprofiler_agent_v0_t), this);
    if (s != ROCPROFILER_STATUS_SUCCESS) {
      status = "off: rocprofiler_query_available_agents: " + text(api, s);
      return;
    }
    size_t on = 0;
    for (Gpu& g : gpus) {
      if ((s = api.rocprofiler_create_context(&g.ctx)) == ROCPROFILER_STATUS_SUCCESS)
        s = api.rocprofiler_configure_device_counting_service(
            g.ctx, rocprofiler_buffer_id_t{0}, rocprofiler_agent_id_t{g.handle}, on_start, &g);
      g.configured = s == ROCPROFILER_STATUS_SUCCESS;
      if (!g.configured) g.status = "off: the device counting service: " + text(api, s);
      on += g.configured ? 1 : 0;
    }
    status = gpus.empty() ? "off: rocprofiler-sdk lists no GPU"
             : on == 0    ? "off: " + gpus.front().status.substr(5)
                          : "on";
  }

  // ---- our thread ----
  void run() {
    prctl(PR_SET_NAME, "rocprof-devcount", 0, 0, 0);
    out.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    auto next = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lk(mu);
    while (!stop) {
      lk.unlock();
      for (Gpu& g : gpus) read(g);
      next += std::chrono::nanoseconds(period_ns);
      const auto now = std::chrono::steady_clock::now();
      if (now > next) {  // fell behind: the periods passed are not read
        const auto late = static_cast<uint64_t>((now - next).count());
        missing += late / period_ns + 1;
        next += std::chrono::nanoseconds((late / period_ns + 1) * period_ns);
      }
      lk.lock();
      cv.wait_until(lk, next, [this] { return stop; });
    }
    lk.unlock();
    for (Gpu& g : gpus) {
      read(g);  // the last interval
      finish(g);
    }
  }

  void read(Gpu& g) {
    if (!g.started || g.finalized || !g.ready.load(std::memory_order_acquire)) return;
    if (g.records.empty()) g.records.resize(kFirstRecords);
    size_t n = g.records.size();
    const uint64_t t0 = mono_ns();
    rocprofiler_status_t s = api.rocprofiler_sample_device_counting_service(
        g.ctx, rocprofiler_user_data_t{}, ROCPROFILER_COUNTER_FLAG_NONE, g.records.data(), &n);
    if (s == ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES && n > g.records.size()) {
      g.records.resize(n);  // the SDK said how many: rare, off the steady path
      s = api.rocprofiler_sample_device_counting_service(
          g.ctx, rocprofiler_user_data_t{}, ROCPROFILER_COUNTER_FLAG_NONE, g.records.data(), &n);
    }
    const uint64_t t = clock();
    g.read_ns += mono_ns() - t0;
    ++g.reads;
    if (s == ROCPROFILER_STATUS_ERROR_HSA_NOT_LOADED) {
      ++g.not_ready;
      return;
    }
    if (s == ROCPROFILER_STATUS_ERROR_FINALIZED) {  // its teardown began: the last interval is lost
      g.finalized = true;
      return;
    }
    if (s != ROCPROFILER_STATUS_SUCCESS) {
      ++g.errors;
      g.last_error = "rocprofiler_sample_device_counting_service: " + text(api, s);
      return;
    }
    for (Counter& c : g.counters) {
      c.sum = 0;
      c.instances = 0;
    }
    for (size_t i = 0; i < n; ++i) {
      rocprofiler_counter_id_t id{};
      if (api.rocprofiler_query_record_counter_id(g.records[i].id, &id) !=
          ROCPROFILER_STATUS_SUCCESS)
        continue;
      for (Counter& c : g.counters)
        if (c.id == id.handle) {
          c.sum += g.records[i].counter_value;
          ++c.instances;
          break;
        }
    }
    take(g, t);
  }

  // One read's sums: the interval since the previous read gets each metric's value.
  void take(Gpu& g, uint64_t t) {
    bool reset = false;
    for (Counter& c : g.counters) reset = reset || c.sum < c.prev;
    const bool first = !g.have_base;
    const uint64_t start = g.last_t;
    g.have_base = true;
    g.last_t = t;
    if (first || reset || t <= start) {
      if (reset) ++g.resets;  // counters restarted (a wrap or a restart): a new base
      for (Counter& c : g.counters) c.prev = c.sum;
      return;
    }
    if (g.samples == 0) g.first_t = start;
    ++g.samples;
    const double dt = static_cast<double>(t - start) / 1e9;
    for (size_t m = 0; m < g.metrics.size(); ++m) {
      const Chosen& ch = g.metrics[m];
      g.deltas.clear();
      for (size_t i : ch.counters) {
        const Counter& c = g.counters[i];
        g.deltas.push_back(Delta{c.sum - c.prev, c.instances});
      }
      const double v = evaluate(ch.formula, g.deltas.data(), g.deltas.size(), dt, g.facts);
      if (!ctx->paused()) out.emit(g.series[m], start, v);
    }
    for (Counter& c : g.counters) c.prev = c.sum;
  }

  // Each series ends at the last read, so its last value has a length.
  void finish(Gpu& g) {
    for (Series& s : g.series) out.finish(s, g.last_t);
  }

  void describe(Gpu& g) {
    g.series.clear();
    for (const Chosen& m : g.metrics) {
      Series s = metric_series(*ctx, kComponent, g.ordinal, g.agent_id, m.key);
      std::string counters;
      for (const std::string& c : m.counter_names) counters += (counters.empty() ? "" : ", ") + c;
      s.info.symbol = m.symbol;
      s.info.units = m.units;
      s.info.description =
          m.description + " (rocprofiler-sdk " + counters + ", " + g.facts.chip + ")";
      g.series.push_back(std::move(s));
    }
  }

  // Under mu: sampling runs while a session asked for metrics and the contexts exist. The
  // contexts are started here, on the caller's thread (inside the SDK's initialize, or the
  // session's start), as the PC sampler starts its own.
  void start_sampling() {
    if (running || !session || !initialized || finalized || forked || status != "on") return;
    period_ns = 1000000000ull / std::max<uint32_t>(settings.hz, 1);
    out = MetricSeriesWriter{ctx, 0, ctx->intern(kComponent)};
    missing = 0;
    stop = false;
    for (Gpu& g : gpus) {
      g.have_base = false;
      g.reads = g.samples = g.errors = g.not_ready = g.resets = g.read_ns = 0;
      g.finalized = false;
      g.last_t = g.first_t = 0;
      for (Counter& c : g.counters) c.prev = c.sum = 0;
      if (g.ready.load()) describe(g);  // chosen in an earlier session: this one's tracks
      if (!g.configured) continue;
      const rocprofiler_status_t s = api.rocprofiler_start_context(g.ctx);
      // Before HSA is up the SDK keeps the context and starts its counters with HSA.
      g.started = s == ROCPROFILER_STATUS_SUCCESS || s == ROCPROFILER_STATUS_ERROR_HSA_NOT_LOADED;
      if (!g.started) {
        g.status = "off: rocprofiler_start_context: " + text(api, s);
        std::fprintf(stderr, "rocprof: --gpu-metrics: GPU %u: %s; tracing continues\n", g.ordinal,
                     g.status.c_str() + 5);
      }
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    thread = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    running = true;
  }

  // Under mu (`lk` holds it; released while joining): the last read, then the contexts stop.
  void stop_sampling(std::unique_lock<std::mutex>& lk) {
    if (!running) return;
    stop = true;
    cv.notify_one();
    std::thread t = std::move(thread);
    lk.unlock();
    t.join();
    lk.lock();
    running = false;
    for (Gpu& g : gpus) {
      if (g.started) api.rocprofiler_stop_context(g.ctx);
      g.started = false;
    }
  }

  void report(CaptureContext& c) {
    const auto meta = [&c](const std::string& k, const std::string& v) {
      c.info(MetadataInfo{"rocprof.gpu_metrics." + k, v});
    };
    meta("backend", "rocprofiler-sdk device counting service (" + api.library +
                        "; compiled against its headers, never run on AMD hardware)");
    meta("clock", "CLOCK_BOOTTIME (the host's, when each read returned)");
    meta("interval_ns", std::to_string(period_ns));
    meta("values_stored", std::to_string(out.stored));
    meta("values_unchanged", std::to_string(out.unchanged));
    if (gpus.empty()) meta("status", status);
    for (const Gpu& g : gpus) {
      const std::string k = ".gpu" + std::to_string(g.ordinal);
      meta("status" + k, g.status == "pending" && status != "on" ? status : g.status);
      meta("chip" + k, g.facts.chip);
      std::string names, left;
      for (const Chosen& m : g.metrics) {
        names += (names.empty() ? "" : ",") + m.key + "=";
        for (size_t i = 0; i < m.counter_names.size(); ++i)
          names += (i ? "/" : "") + m.counter_names[i];
      }
      for (const std::string& l : g.left_out) left += (left.empty() ? "" : "; ") + l;
      meta("metrics" + k, names);
      meta("left_out" + k, left);
      if (g.status != "on") continue;
      const double span =
          g.last_t > g.first_t ? static_cast<double>(g.last_t - g.first_t) / 1e9 : 0;
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.1f",
                    span > 0 ? static_cast<double>(g.samples) / span : 0.0);
      meta("samples" + k, std::to_string(g.samples));
      meta("achieved_hz" + k, rate);
      meta("missing_samples" + k, std::to_string(missing));
      meta("reads" + k, std::to_string(g.reads));
      meta("reads_before_hsa" + k, std::to_string(g.not_ready));
      meta("counter_restarts" + k, std::to_string(g.resets));
      meta("errors" + k, std::to_string(g.errors));
      if (g.finalized) meta("last_read" + k, "refused: rocprofiler-sdk was finalizing");
      meta("read_ns_mean" + k, std::to_string(g.reads ? g.read_ns / g.reads : 0));
      if (!g.last_error.empty()) meta("last_error" + k, g.last_error);
      std::fprintf(stderr,
                   "rocprof: GPU metrics (rocprofiler-sdk): GPU %u (%s): %zu metrics, %llu samples "
                   "at %s Hz (asked %u), %llu periods missed, %llu read errors\n",
                   g.ordinal, g.facts.chip.c_str(), g.metrics.size(),
                   static_cast<unsigned long long>(g.samples), rate, settings.hz,
                   static_cast<unsigned long long>(missing),
                   static_cast<unsigned long long>(g.errors));
    }
    if (missing > 0) c.drops("GPU metric periods not read (the sampler fell behind)", missing);
  }
};

Sampler::Sampler(ClockFn clock) : st_(new State) { st_->clock = clock ? clock : &now_ns; }

Sampler::~Sampler() {
  {
    std::unique_lock<std::mutex> lk(st_->mu);
    if (!st_->forked) st_->stop_sampling(lk);
  }
  delete st_;
}

void Sampler::session_start(CaptureContext& c, const GpuMetricsSettings& s) {
  std::lock_guard<std::mutex> g(st_->mu);
  if (s.hz == 0 || st_->forked || st_->session) return;
  st_->session = true;
  st_->settings = s;
  st_->ctx = &c;
  if (st_->initialized && st_->status.rfind("off: rocprofiler-sdk started before", 0) == 0)
    std::fprintf(stderr, "rocprof: --gpu-metrics (rocprofiler-sdk) off: %s\n",
                 st_->status.c_str() + 5);
  st_->start_sampling();
}

void Sampler::session_stop(CaptureContext& c) {
  std::unique_lock<std::mutex> lk(st_->mu);
  if (!st_->session) return;
  st_->session = false;
  st_->stop_sampling(lk);
  // Nothing to say where rocprofiler-sdk never loaded us: the NVIDIA sampler may be the one.
  if (st_->initialized) {
    c.info(MetadataInfo{"rocprof.gpu_metrics.hz", std::to_string(st_->settings.hz)});
    c.info(MetadataInfo{"rocprof.gpu_metrics.set", st_->settings.set});
    st_->report(c);
  }
  st_->ctx = nullptr;
}

void Sampler::sdk_initialize(const Api& api) {
  std::lock_guard<std::mutex> g(st_->mu);
  st_->initialized = true;
  st_->api = api;
  if (st_->forked) return;
  if (!st_->session) {
    st_->status =
        "off: rocprofiler-sdk started before --gpu-metrics was asked (the session must start "
        "before the program's first GPU call)";
    return;
  }
  st_->configure();
  if (st_->status != "on") {
    std::fprintf(stderr, "rocprof: --gpu-metrics (rocprofiler-sdk) off: %s\n",
                 st_->status.c_str() + 5);
    return;
  }
  st_->start_sampling();
}

void Sampler::sdk_unusable(const std::string& why) {
  std::lock_guard<std::mutex> g(st_->mu);
  st_->initialized = true;
  st_->status = "off: " + why;
  if (st_->session)
    std::fprintf(stderr, "rocprof: --gpu-metrics (rocprofiler-sdk) off: %s\n", why.c_str());
}

void Sampler::sdk_finalize() {
  std::unique_lock<std::mutex> lk(st_->mu);
  if (!st_->forked) st_->stop_sampling(lk);
  st_->finalized = true;
}

void Sampler::fork_child() {
  // The child has neither our thread nor the SDK's: never call the SDK from there.
  st_->forked = true;
  if (st_->running) st_->thread.detach();
  st_->running = false;
  st_->session = false;
}

std::string Sampler::status() const {
  std::lock_guard<std::mutex> g(st_->mu);
  return st_->status;
}

namespace {

Sampler* g_sampler = new Sampler();  // never destroyed: exit handlers may stop it late

// The backend the session starts: `rocprof info` lists it; the session's start and stop drive
// the process's sampler.
class SdkDeviceCounting final : public Backend {
 public:
  const char* name() const override { return "rocprofiler-sdk-device-counting"; }
  bool start(CaptureContext& c, const CaptureSettings& s, std::string*) override {
    g_sampler->session_start(c, s.gpu_metrics);
    return true;
  }
  void stop(CaptureContext& c) override { g_sampler->session_stop(c); }
  void fork_child() override { g_sampler->fork_child(); }
  void probe(bool* live, std::string* reason) override {
    if (const char* standin = std::getenv("ROCPROF_SDK_STANDIN")) {
      // Test-only (tests/amd_standin): a software stand-in plays rocprofiler-sdk.
      *live = ::access(standin, R_OK) == 0;
      *reason = *live ? std::string("test-only stand-in for rocprofiler-sdk ") + standin +
                            " (not AMD hardware); never run on AMD hardware"
                      : std::string("ROCPROF_SDK_STANDIN names a missing file: ") + standin;
      return;
    }
    *live = false;
    if (::access("/dev/kfd", R_OK | W_OK) != 0) {
      *reason =
          "rocprofiler-sdk's device counting service needs an AMD GPU: no AMD GPU driver "
          "(/dev/kfd missing or not accessible); compiled against its headers, never run on AMD "
          "hardware";
      return;
    }
    const char* rocm = std::getenv("ROCM_PATH");
    for (const std::string& root :
         {std::string(rocm ? rocm : "/opt/rocm"), std::string("/opt/rocm")})
      for (const char* lib : {"librocprofiler-sdk.so.1", "librocprofiler-sdk.so"}) {
        const std::string path = root + "/lib/" + lib;
        if (::access(path.c_str(), R_OK) != 0) continue;
        *live = true;
        *reason = "rocprofiler-sdk " + path +
                  " (device counting service, ROCm 6.4 or newer; MI200/MI300 counter names); "
                  "compiled against its headers, never run on AMD hardware";
        return;
      }
    *reason =
        "librocprofiler-sdk.so not found (ROCm 6.4+ ships its device counting service; set "
        "ROCM_PATH); compiled against its headers, never run on AMD hardware";
  }
};

const capture::Registered<SdkDeviceCounting> g_registered;

}  // namespace

void initialize(const std::string& library) {
  Api api;
  std::string why;
  if (!resolve(library, &api, &why)) {
    g_sampler->sdk_unusable(why);
    return;
  }
  g_sampler->sdk_initialize(api);
}

void finalize() { g_sampler->sdk_finalize(); }

}  // namespace rocprof::sdk::dc
