#include "read_only.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "capture/context.hpp"
#include "capture/python/remote_frames.hpp"
#include "capture/sampling/stack.hpp"
#include "rocprof/clock.hpp"
#include "rocprof/info.hpp"
#include "rocprof/record.hpp"

namespace rocprof::sampling {
namespace {

constexpr size_t kMaxPy = 256;  // Python frames kept per sample, as the in-process sampler

std::string version_text(uint32_t hex) {
  return std::to_string(hex >> 24) + "." + std::to_string((hex >> 16) & 0xff);
}

}  // namespace

struct ReadOnlySampler::Impl {
  explicit Impl(const ReadOnlyOptions& o) : opts(o), interp(o.pid) {}
  ~Impl() {
    for (auto& kv : stat_fds) ::close(kv.second);
  }

  ReadOnlyOptions opts;
  python::RemoteInterpreter interp;
  std::unique_ptr<OtherProcessContext> rec;  // the target's database, once started
  std::thread thread;
  std::atomic<bool> stop{false}, running{false}, ended{false};
  // Sampling thread only, then stop() after the join.
  uint64_t taken = 0, missed = 0, torn = 0;
  uint32_t cat_sample = 0, cat_stack = 0;
  StackTree nodes;
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> names;  // code serial -> ids
  std::unordered_map<uint32_t, std::string> texts;                    // id -> text
  std::unordered_set<uint32_t> seen;                                  // threads recorded
  std::unordered_map<uint32_t, int> stat_fds;                         // cpu mode: tid -> fd
  std::vector<python::RemoteInterpreter::Thread> threads;
  std::vector<python::RemoteFrame> frames;

  uint32_t intern(const std::string& s) {
    const uint32_t id = rec->intern(s);
    texts.emplace(id, s);
    return id;
  }

  // Whether the kernel shows thread `tid` running or runnable now (field 3 of its stat file,
  // kept open and re-read from the start: one pread per tick).
  bool on_cpu(uint32_t tid) {
    auto it = stat_fds.find(tid);
    if (it == stat_fds.end()) {
      const std::string path =
          "/proc/" + std::to_string(opts.pid) + "/task/" + std::to_string(tid) + "/stat";
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return false;
      it = stat_fds.emplace(tid, fd).first;
    }
    char buf[512];
    const ssize_t n = ::pread(it->second, buf, sizeof buf - 1, 0);
    if (n <= 0) {  // the thread has ended
      ::close(it->second);
      stat_fds.erase(it);
      return false;
    }
    buf[n] = '\0';
    const char* paren = std::strrchr(buf, ')');
    return paren != nullptr && paren[1] == ' ' && paren[2] == 'R';
  }

  bool target_gone() const {
    if (::kill(static_cast<pid_t>(opts.pid), 0) != 0 && errno == ESRCH) return true;
    char path[64], buf[512] = {};
    std::snprintf(path, sizeof path, "/proc/%u/stat", opts.pid);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return true;
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    const char* paren = n > 0 ? std::strrchr(buf, ')') : nullptr;
    return paren == nullptr || paren[2] == 'Z' || paren[2] == 'X';  // exited, not yet reaped
  }

  void tick() {
    const uint64_t ts = now_ns();
    if (!interp.threads(&threads)) {
      if (target_gone()) {
        ended.store(true);
        return;
      }
      missed += std::max<size_t>(1, seen.size());  // a list changing under the read
      return;
    }
    for (const auto& t : threads) {
      if (t.tid == 0) continue;
      if (seen.insert(t.tid).second) rec->info(ThreadInfo{t.tid, ts, 0, {}});
      if (t.frame == 0) continue;  // no Python frame now
      if (!opts.wall && !on_cpu(t.tid)) continue;
      const int rc = interp.walk(t.frame, &frames, kMaxPy);
      if (rc != python::RemoteInterpreter::kOk) {
        ++missed;
        if (rc == python::RemoteInterpreter::kTorn) ++torn;
        continue;
      }
      if (frames.empty()) continue;
      uint64_t node = 0;
      for (auto f = frames.rbegin(); f != frames.rend(); ++f) node = node_for(node, *f);
      Record r{};
      r.kind = RecordKind::kSample;
      r.tid = t.tid;
      r.start = r.end = ts;
      r.category_id = cat_sample;
      r.sample.stack_id = node;
      r.sample.value = std::nan("");
      if (rec->emit(r))
        ++taken;
      else
        ++missed;  // the collector counted it as a drop too
    }
  }

  uint64_t node_for(uint64_t parent, const python::RemoteFrame& f) {
    auto it = names.find(f.code->serial);
    if (it == names.end())
      it = names
               .emplace(f.code->serial,
                        std::make_pair(intern(f.code->qualname), intern(f.code->filename)))
               .first;
    const FrameRef ref{it->second.first, it->second.second, f.line, false};
    bool is_new = false;
    const uint64_t id = nodes.node(parent, ref, &is_new);
    if (is_new)
      rec->info(
          stack_node(id, parent, cat_stack, f.code->qualname, f.code->filename, f.line, false));
    return id;
  }

  void run() {
    const uint64_t period = 1000000000ull / std::max<uint32_t>(1, opts.hz);
    uint64_t next = mono_ns();
    while (!stop.load() && !ended.load()) {
      tick();
      next += period;
      const uint64_t now = mono_ns();
      if (now > next + period) {
        // Ticks that passed while this one ran are samples not taken: counted, not caught up.
        const uint64_t behind = (now - next) / period;
        missed += behind * std::max<size_t>(1, seen.size());
        next += behind * period;
      }
      timespec until{static_cast<time_t>(next / 1000000000ull),
                     static_cast<long>(next % 1000000000ull)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) == EINTR) {
      }
    }
    running.store(false);
  }
};

ReadOnlySampler::ReadOnlySampler() = default;
ReadOnlySampler::~ReadOnlySampler() { stop(); }

bool ReadOnlySampler::start(const ReadOnlyOptions& options, std::string* error, int* err_no) {
  if (impl_ != nullptr) {
    *error = "read-only sampling has started already";
    *err_no = 0;
    return false;
  }
  auto impl = std::make_unique<Impl>(options);
  if (!impl->interp.open(error, err_no)) return false;
  *err_no = 0;
  const std::string version = version_text(impl->interp.version_hex());
  impl->rec =
      capture::record_other_process(options.pid, options.output_template, options.options_json,
                                    {{"rocprof.attached", "1"},
                                     {"rocprof.attach.method", "read-only"},
                                     {"rocprof.attach.python", version},
                                     {"rocprof.attach.layout", impl->interp.layout_source()}},
                                    error);
  if (impl->rec == nullptr) return false;
  impl->cat_sample = impl->intern("PYTHON_SAMPLE");
  impl->cat_stack = impl->intern("PYTHON_SAMPLE_STACK");
  impl->running.store(true);
  // No signal of this process lands on the sampling thread (Ctrl-C is the caller's).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->run(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  impl_ = std::move(impl);
  return true;
}

bool ReadOnlySampler::running() const { return impl_ != nullptr && impl_->running.load(); }

std::string ReadOnlySampler::layout() const {
  if (impl_ == nullptr) return "";
  return version_text(impl_->interp.version_hex()) + " (" + impl_->interp.layout_source() + ")";
}

ReadOnlyResult ReadOnlySampler::stop() {
  ReadOnlyResult out;
  if (impl_ == nullptr) return out;
  Impl& s = *impl_;
  s.stop.store(true);
  if (s.thread.joinable()) s.thread.join();
  OtherProcessContext& c = *s.rec;
  const uint64_t unresolved = s.interp.unreadable_codes();
  // The in-process sampler's metadata names (capture/sampling/sampler.cpp).
  c.info(MetadataInfo{"rocprof.sampling.hz", std::to_string(s.opts.hz)});
  c.info(MetadataInfo{"rocprof.sampling.mode", s.opts.wall ? "wall" : "cpu"});
  c.info(MetadataInfo{"rocprof.sampling.native", "0"});
  c.info(MetadataInfo{"rocprof.sampling.samples_taken", std::to_string(s.taken)});
  c.info(MetadataInfo{"rocprof.sampling.samples_missed", std::to_string(s.missed)});
  c.info(MetadataInfo{"rocprof.sampling.unresolved_frames", std::to_string(unresolved)});
  c.info(MetadataInfo{"rocprof.sampling.walk_faults", std::to_string(s.torn)});
  if (s.missed) c.drops("sampling", s.missed);
  out.taken = s.taken;
  out.missed = s.missed;
  out.threads = s.seen.size();
  out.target_ended = s.ended.load();
  out.path = c.finish();
  impl_.reset();
  return out;
}

}  // namespace rocprof::sampling
