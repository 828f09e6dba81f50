// Python launch sites of GPU work; see launch_sites.hpp for the design and contracts.
#include <Python.h>
#include <fnmatch.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capture/context.hpp"
#include "capture/python/frames.h"
#include "capture/python/guard.hpp"
#include "capture/python/launch_site_api.h"
#include "capture/python/launch_sites.hpp"
#include "capture/python/resolver.hpp"
#include "rocprof/info.hpp"
#include "rocprof/json.hpp"

namespace rocprof::launch_sites {
namespace {

// Copied per launch, innermost first: eager torch adds ~4-12 frames, a compiled model's
// replay (dynamo, AOT autograd wrappers, cudagraph trees, inductor's runner) ~30-40.
constexpr int kMaxFrames = 64;
constexpr uint32_t kTableSlots = 1u << 16;  // distinct frame chains per session
constexpr uint32_t kProbe = 64;
constexpr uint32_t kQueueSlots = 1024;   // new chains waiting for the resolver
constexpr uint32_t kNone = 0xffffffffu;  // resolved: no user frame (or code gone)
CaptureContext* g_ctx = nullptr;         // the session's, between start and stop (resolver thread)
constexpr int kWaitMs = 20;              // longest wait of resolve() for the resolver
// A forward op's name, kept with its chain until resolved ("backward_of" of the site). Longer
// names are cut (aten's longest are ~60 bytes).
constexpr size_t kTagBytes = 96;

// key → call site id. key is written once (CAS from 0, by the first launching thread to see
// the chain); id 0 means "queued, not resolved yet", written by the resolver (release).
struct Site {
  std::atomic<uint64_t> key{0};
  std::atomic<uint32_t> id{0};
};
Site g_sites[kTableSlots];

// Bounded MPMC queue (Vyukov): producers are launching threads, consumers hold the GIL and
// g_resolve_mu. Fixed cells, no allocation.
struct Cell {
  std::atomic<uint64_t> seq{0};
  uint64_t key = 0;
  int n = 0;
  char tag[kTagBytes];  // "" for a launch's own chain, else the forward op (capture_forward)
  uint64_t w[kMaxFrames * RP_PY_WORDS];
};
Cell g_queue[kQueueSlots];
std::atomic<uint64_t> g_enq{0}, g_deq{0};

std::atomic<bool> g_on{false};
// The resolver thread (capture/python/resolver.hpp) is woken as soon as a new chain is queued
// (resolver_wake: lock-free, async-signal-safe). Resolving early matters: a code object may
// be freed soon after its last launch (a script's module code when the script returns), and
// then it can no longer be named.
std::atomic<uint64_t> g_captured{0}, g_fast{0}, g_queued{0}, g_queue_full{0}, g_table_full{0},
    g_faults{0}, g_waits{0}, g_wait_timeouts{0}, g_frames_gone{0};

void copy_tag(char* out, const char* tag) noexcept {
  size_t i = 0;
  if (tag != nullptr)
    for (; i + 1 < kTagBytes && tag[i] != '\0'; ++i) out[i] = tag[i];
  out[i] = '\0';
}

bool enqueue(uint64_t key, const uint64_t* w, int n, const char* tag) noexcept {
  uint64_t pos = g_enq.load(std::memory_order_relaxed);
  for (;;) {
    Cell& c = g_queue[pos & (kQueueSlots - 1)];
    const uint64_t seq = c.seq.load(std::memory_order_acquire);
    const int64_t dif = static_cast<int64_t>(seq) - static_cast<int64_t>(pos);
    if (dif == 0) {
      if (g_enq.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        c.key = key;
        c.n = n;
        copy_tag(c.tag, tag);
        std::memcpy(c.w, w, sizeof(uint64_t) * RP_PY_WORDS * n);
        c.seq.store(pos + 1, std::memory_order_release);
        return true;
      }
    } else if (dif < 0) {
      return false;  // full
    } else {
      pos = g_enq.load(std::memory_order_relaxed);
    }
  }
}

bool dequeue(Cell* out) {
  uint64_t pos = g_deq.load(std::memory_order_relaxed);
  for (;;) {
    Cell& c = g_queue[pos & (kQueueSlots - 1)];
    const uint64_t seq = c.seq.load(std::memory_order_acquire);
    const int64_t dif = static_cast<int64_t>(seq) - static_cast<int64_t>(pos + 1);
    if (dif == 0) {
      if (g_deq.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        out->key = c.key;
        out->n = c.n;
        std::memcpy(out->tag, c.tag, sizeof c.tag);
        std::memcpy(out->w, c.w, sizeof(uint64_t) * RP_PY_WORDS * c.n);
        c.seq.store(pos + kQueueSlots, std::memory_order_release);
        return true;
      }
    } else if (dif < 0) {
      return false;  // empty
    } else {
      pos = g_deq.load(std::memory_order_relaxed);
    }
  }
}

Site* find(uint64_t key) noexcept {
  const uint32_t h = static_cast<uint32_t>(key ^ (key >> 29));
  for (uint32_t i = 0; i < kProbe; ++i) {
    Site& s = g_sites[(h + i) & (kTableSlots - 1)];
    const uint64_t k = s.key.load(std::memory_order_acquire);
    if (k == key) return &s;
    if (k == 0) return nullptr;
  }
  return nullptr;
}

// ---- resolution (GIL held, g_resolve_mu held) ----------------------------------------------

std::mutex g_resolve_mu;
std::string g_prefixes;  // '\n'-separated; under g_resolve_mu
struct Code {
  uint64_t name_ptr = 0;
  bool ok = false, user = false;
  std::string func, file;  // JSON-escaped, quoted
  std::string raw_file;
};
std::unordered_map<uint64_t, Code> g_codes;
std::unordered_map<uint64_t, int> g_lines;  // (code, lasti) → line
// The session's call sites: their ids (1, 2, ... as CallsiteInfo numbers them) by their JSON,
// so chains that differ only where no line does (two calls on one line) share one site, and
// each id's JSON for the tests' hooks (site_json).
std::unordered_map<std::string, uint32_t> g_site_ids;
std::vector<const std::string*> g_site_json;  // id - 1 → its key in g_site_ids
uint32_t g_site_category = 0;                 // kLaunchSiteCategory, interned at first use

// One entry of the filter: a path prefix, or a glob (fnmatch, '*' crossing '/') when it has
// a wildcard. Entries starting with '!' keep matching frames as user code over any other entry.
bool matches(const char* file, const char* pat, size_t len) {
  if (len == 0) return false;
  if (std::memchr(pat, '*', len) || std::memchr(pat, '?', len) || std::memchr(pat, '[', len)) {
    const std::string glob(pat, len);
    return fnmatch(glob.c_str(), file, 0) == 0;
  }
  return std::strncmp(file, pat, len) == 0;
}

bool library_file(const char* file) {
  if (file[0] == '<') return true;  // <frozen runpy>, <string>, fx's <eval_with_key>: no file
  bool skip = false;
  for (size_t p = 0; p < g_prefixes.size();) {
    size_t e = g_prefixes.find('\n', p);
    if (e == std::string::npos) e = g_prefixes.size();
    const bool keep = g_prefixes[p] == '!';
    const size_t b = keep ? p + 1 : p;
    if (e > b && matches(file, g_prefixes.data() + b, e - b)) {
      if (keep) return false;
      skip = true;
    }
    p = e + 1;
  }
  return skip;
}

const Code& code_of(uint64_t code, uint64_t name_ptr, uint32_t first) {
  auto it = g_codes.find(code);
  if (it != g_codes.end() && it->second.name_ptr == name_ptr) return it->second;
  Code c;
  c.name_ptr = name_ptr;
  const char *func = nullptr, *file = nullptr;
  // Validates the object and keeps a strong reference (its address is never reused while
  // cached, so a key built from it always means the same code).
  if (rp_code_info(code, name_ptr, first, &func, &file)) {
    c.ok = true;
    c.user = !library_file(file);
    c.func = json_string(func);
    c.file = json_string(file);
    c.raw_file = file;
  }
  return g_codes.insert_or_assign(code, std::move(c)).first->second;
}

// The chain's JSON: `[site, its caller, ..., outermost]`, the whole stack from the site out
// (library frames there marked "library":true), so `$[0]` is the site for every reader. The
// site is the innermost user frame; the library frames inside it (where the launch really
// happened: torch, triton, an inductor-generated file) are kept on it, innermost first, as
// "library_frames". A forward op's chain (non-empty `tag`) is what its backward work carries:
// the site names the op as "backward_of". The writer gets the site and its callers apart
// (CallsiteInfo): most sites of a program share their callers.
uint32_t resolve_chain(const uint64_t* w, int n, const char* tag) {
  struct Frame {
    const Code* code;
    int line;
  };
  Frame frames[kMaxFrames];
  int site = -1, kept = 0;
  for (int i = 0; i < n; ++i, w += RP_PY_WORDS) {
    const uint32_t lasti = static_cast<uint32_t>(w[2] >> 32);
    const Code& c = code_of(w[0], w[1], static_cast<uint32_t>(w[2] & 0x7fffffffu));
    if (!c.ok) {  // freed before we came (or never a code object): left out, counted
      g_frames_gone.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const uint64_t lk = w[0] * 1000003ull ^ lasti;
    auto li = g_lines.find(lk);
    const int line = li != g_lines.end() ? li->second : (g_lines[lk] = rp_code_line(w[0], lasti));
    if (site < 0 && c.user) site = kept;
    frames[kept++] = Frame{&c, line};
  }
  if (site < 0 || g_ctx == nullptr) return kNone;
  auto text = [](const Frame& f) {
    std::string t = "{\"file\":" + f.code->file + ",\"line\":" + std::to_string(f.line) +
                    ",\"function\":" + f.code->func;
    if (!f.code->user) t += ",\"library\":true";
    return t;
  };
  std::string head = text(frames[site]);
  if (tag[0] != '\0') head += ",\"backward_of\":" + json_string(tag);
  if (site > 0) {
    head += ",\"library_frames\":[";
    for (int i = 0; i < site; ++i) head += (i ? "," : "") + text(frames[i]) + "}";
    head += "]";
  }
  head += "}";
  std::string callers;
  for (int i = site + 1; i < kept; ++i)
    callers += (callers.empty() ? "[" : ",") + text(frames[i]) + "}";
  if (!callers.empty()) callers.push_back(']');
  std::string json = "[" + head + (callers.empty() ? "]" : "," + callers.substr(1));
  auto [it, added] = g_site_ids.emplace(std::move(json), 0);
  if (!added) return it->second;
  if (g_site_category == 0) g_site_category = g_ctx->intern(kLaunchSiteCategory);
  g_site_json.push_back(&it->first);
  it->second = static_cast<uint32_t>(g_site_json.size());
  // Queued before resolve() hands the id to any record.
  g_ctx->info(CallsiteInfo{it->second, g_site_category, std::move(head), std::move(callers)});
  return it->second;
}

Cell g_scratch;  // under g_resolve_mu

void drain_locked() {
  while (dequeue(&g_scratch)) {
    const uint32_t id = resolve_chain(g_scratch.w, g_scratch.n, g_scratch.tag);
    if (Site* s = find(g_scratch.key)) s->id.store(id, std::memory_order_release);
  }
}

bool holds_gil() { return Py_IsInitialized() && PyGILState_Check(); }

// ---- the resolver thread's client -----------------------------------------------------------

uint64_t g_no_wait_until = 0;  // guarded by the resolver (resolver_wait)
bool g_started = false;        // a client of the resolver thread (start/stop)

bool pending() {
  return g_enq.load(std::memory_order_acquire) != g_deq.load(std::memory_order_acquire);
}

struct Client final : python::ResolverClient {
  // The GIL only when there is something to resolve: none in the steady state. 20 ms: a
  // backstop, new chains and waiters wake the thread.
  uint64_t due_in_ns(uint64_t) override { return pending() ? 0 : 20 * 1000000ull; }
  void under_gil() override {
    std::lock_guard<std::mutex> g(g_resolve_mu);
    drain_locked();
  }
};
Client g_client;

bool site_resolved(void* site) {
  return static_cast<Site*>(site)->id.load(std::memory_order_acquire) != 0;
}

}  // namespace

// The call site lent to threads without Python frames (see borrow()): a chain key, 0 none.
std::atomic<uint64_t> g_borrowed{0};
std::atomic<uint64_t> g_borrowed_used{0};

namespace {

// Set by the torch observer while this thread runs backward work: its forward op's chain, of
// the session `epoch` (a key of an earlier session's table names nothing).
struct ThreadSite {
  uint64_t key = 0;
  uint64_t epoch = 0;
};
thread_local ThreadSite t_thread_site;
std::atomic<uint64_t> g_epoch{0};
std::atomic<uint64_t> g_thread_site_used{0};

// A chain's key: the code objects and instruction offsets of its frames (`words` words a frame,
// the code object first, the offset << 32 at `at_word`), hashed in two independent lanes (a deep
// chain costs half the dependent multiplies of one lane), then mixed.
uint64_t frames_key(const uint64_t* w, int n, int words, int at_word) noexcept {
  uint64_t code = 1469598103934665603ull, at = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; ++i, w += words) {
    code = (code ^ w[0]) * 1099511628211ull;
    at = (at ^ (w[at_word] >> 32)) * 0xff51afd7ed558ccdull;
  }
  uint64_t key = code ^ ((at << 31) | (at >> 33)) ^ static_cast<uint64_t>(n);
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ull;
  key ^= key >> 29;
  return key;
}

// A forward op's chain: its frames' key and its name, eight bytes a multiply, after a constant
// that keeps it apart from the launch chain of the same frames.
uint64_t tagged_key(uint64_t key, const char* tag) noexcept {
  key = (key ^ 0x9e3779b97f4a7c15ull) * 1099511628211ull;
  uint64_t word = 0;
  unsigned shift = 0;
  size_t i = 0;
  for (; i + 1 < kTagBytes && tag[i] != '\0'; ++i) {
    word |= static_cast<uint64_t>(static_cast<unsigned char>(tag[i])) << shift;
    shift += 8;
    if (shift == 64) {
      key = (key ^ word) * 1099511628211ull;
      word = 0;
      shift = 0;
    }
  }
  key = (key ^ word ^ (static_cast<uint64_t>(i) << 56)) * 1099511628211ull;
  return key;
}

uint64_t chain_key(const uint64_t* w, int n) noexcept {
  const uint64_t key = frames_key(w, n, RP_PY_WORDS, 2);
  return key == 0 ? 1 : key;
}

// The key's table slot, claimed (and the frames queued for the resolver) on first sight.
// Returns the key, or 0 when the chain is known to name no user frame or cannot be kept.
// `frames(w)` fills w with the chain's frames (their count; <= 0: none), on first sight only.
template <typename Frames>
uint64_t intern_key(uint64_t key, const char* tag, uint32_t* id, Frames&& frames) noexcept {
  const uint32_t h = static_cast<uint32_t>(key ^ (key >> 29));
  for (uint32_t i = 0; i < kProbe; ++i) {
    Site& s = g_sites[(h + i) & (kTableSlots - 1)];
    uint64_t k = s.key.load(std::memory_order_acquire);
    if (k == 0) {
      if (!s.key.compare_exchange_strong(k, key, std::memory_order_acq_rel)) {
        if (k != key) continue;  // another chain took the slot
      } else {
        // First sight of this chain: hand its frames to the resolver.
        const uint64_t* w = nullptr;
        const int n = frames(&w);
        if (n > 0 && enqueue(key, w, n, tag)) {
          g_queued.fetch_add(1, std::memory_order_relaxed);
          python::resolver_wake();
          return key;
        }
        if (n > 0) g_queue_full.fetch_add(1, std::memory_order_relaxed);
        s.id.store(kNone, std::memory_order_release);
        return 0;
      }
    } else if (k != key) {
      continue;
    }
    const uint32_t v = s.id.load(std::memory_order_acquire);
    if (v == kNone) return 0;
    *id = v;
    return key;
  }
  g_table_full.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

uint64_t intern_chain(uint64_t key, const uint64_t* w, int n, const char* tag,
                      uint32_t* id) noexcept {
  return intern_key(key, tag, id, [&](const uint64_t** out) {
    *out = w;
    return n;
  });
}

// The calling thread's frames into w: their count, 0 when it runs no Python code, -1 when the
// walk faulted (counted).
int walk_frames(uint64_t* w) noexcept {
  // Under the one fault guard (capture/python/guard.hpp); a walk not run because every jump
  // buffer was in use counts as a fault too (no frames, and not silently).
  const int n = python::walk(w, kMaxFrames);
  if (n == python::kWalkFault || n == python::kWalkBusy) {
    g_faults.fetch_add(1, std::memory_order_relaxed);
    return -1;
  }
  return n < 0 ? 0 : n;
}

}  // namespace

namespace {

// The forward op's chain while the torch observer says this thread runs its backward work.
uint64_t thread_site() noexcept {
  const ThreadSite& ts = t_thread_site;
  const uint64_t t = ts.epoch == g_epoch.load(std::memory_order_relaxed) ? ts.key : 0;
  if (t != 0) g_thread_site_used.fetch_add(1, std::memory_order_relaxed);
  return t;
}

}  // namespace

uint64_t frameless_site() noexcept {
  // A thread with no Python frames (autograd's device threads running backward): the forward
  // op's chain, else the site Python lent while it waits in backward(), if any; its id is
  // resolved with the record.
  if (const uint64_t t = thread_site()) return t;
  const uint64_t b = g_borrowed.load(std::memory_order_relaxed);
  if (b != 0) g_borrowed_used.fetch_add(1, std::memory_order_relaxed);
  return b;
}

uint64_t capture(uint32_t* id) noexcept {
  *id = 0;
  if (!g_on.load(std::memory_order_relaxed)) return 0;
  uint64_t w[kMaxFrames * RP_PY_WORDS];
  const int n = walk_frames(w);
  if (n < 0) return 0;
  if (n == 0) return frameless_site();
  g_captured.fetch_add(1, std::memory_order_relaxed);
  const uint64_t key = intern_chain(chain_key(w, n), w, n, nullptr, id);
  if (*id != 0) g_fast.fetch_add(1, std::memory_order_relaxed);
  // A chain known to hold no user frame (a torch.compile'd backward graph's generated code on
  // autograd's thread): its forward op's chain, if the thread runs backward work.
  return key != 0 ? key : thread_site();
}

namespace {

// A thread's last two forward-op chains (their identity: RP_PY_KEY_WORDS words a frame), the
// last one's frames key kept: the ops nested in one Python call (aten::linear, then aten::t and
// aten::addmm inside it) hash their frames once. Walks alternate between the two buffers.
// Then the keys this thread found resolved to a user site in this session (`epoch`), a small
// direct-mapped cache in front of the shared table: one probe of that 1 MiB table a forward op
// would miss the cache as often as not while a model's tensors stream through it.
constexpr uint32_t kKnownSlots = 256;
struct ForwardChains {
  uint64_t k[2][kMaxFrames * RP_PY_KEY_WORDS];
  int n[2] = {0, 0};
  uint64_t key = 0;  // frames_key of k[last]
  int last = 0;
  uint64_t epoch = 0;
  uint64_t known[kKnownSlots] = {};
};
thread_local ForwardChains t_forward;

}  // namespace

uint64_t capture_forward(const char* op) noexcept {
  if (!g_on.load(std::memory_order_relaxed)) return 0;
  // Keyed by a walk that reads the frames alone; their code objects are read (the full walk)
  // only the first time a chain is seen, for the resolver.
  ForwardChains& fc = t_forward;
  const int cur = fc.last ^ 1;
  const int n = python::walk_keys(fc.k[cur], kMaxFrames);
  if (n == python::kWalkFault || n == python::kWalkBusy) {
    g_faults.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  if (n <= 0) return 0;
  const size_t bytes = sizeof(uint64_t) * RP_PY_KEY_WORDS * static_cast<size_t>(n);
  if (n != fc.n[fc.last] || std::memcmp(fc.k[cur], fc.k[fc.last], bytes) != 0) {
    fc.key = frames_key(fc.k[cur], n, RP_PY_KEY_WORDS, 1);
    fc.n[cur] = n;
    fc.last = cur;
  }
  uint64_t key = tagged_key(fc.key, op);
  if (key == 0) key = 1;
  const uint64_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (fc.epoch != epoch) {
    std::memset(fc.known, 0, sizeof fc.known);
    fc.epoch = epoch;
  }
  uint64_t& known = fc.known[(key ^ (key >> 32)) & (kKnownSlots - 1)];
  if (known == key) return key;
  uint32_t id = 0;
  uint64_t w[kMaxFrames * RP_PY_WORDS];
  const uint64_t got = intern_key(key, op, &id, [&w](const uint64_t** out) {
    *out = w;
    return walk_frames(w);
  });
  if (got != 0 && id != 0) known = key;  // resolved to a site: final for the session
  return got;
}

uint64_t set_thread_site(uint64_t key) noexcept {
  ThreadSite& ts = t_thread_site;
  const uint64_t epoch = g_epoch.load(std::memory_order_relaxed);
  const uint64_t before = ts.epoch == epoch ? ts.key : 0;
  ts.key = key;
  ts.epoch = epoch;
  return before;
}

uint64_t borrow(uint64_t key) noexcept {
  return g_borrowed.exchange(key, std::memory_order_relaxed);
}

uint64_t borrowed_uses() noexcept { return g_borrowed_used.load(std::memory_order_relaxed); }

uint64_t thread_site_uses() noexcept { return g_thread_site_used.load(std::memory_order_relaxed); }

namespace {

// The torch observer (launch_site_api.h): on while launch sites run.
std::mutex g_listener_mu;
const rp_launch_site_listener* g_listener = nullptr;  // under g_listener_mu
bool g_listener_on = false;                           // under g_listener_mu

void listener_on_locked() {
  if (g_listener == nullptr || g_listener_on || !g_on.load(std::memory_order_acquire)) return;
  g_listener->on();
  g_listener_on = true;
}

void listener_off_locked() {
  if (!g_listener_on) return;
  g_listener_on = false;
  char value[512] = {};
  g_listener->off(value, sizeof value);
  value[sizeof value - 1] = '\0';
  if (value[0] != '\0' && g_ctx != nullptr) {
    g_ctx->info(MetadataInfo{
        ROCPROF_LAUNCH_SITE_API_METADATA,
        std::string(value) + ",launches=" + std::to_string(g_thread_site_used.load())});
  }
}

}  // namespace

void set_listener(const rp_launch_site_listener* listener) {
  std::lock_guard<std::mutex> g(g_listener_mu);
  if (listener == g_listener) return;
  listener_off_locked();
  g_listener = listener;
  listener_on_locked();
}

uint32_t resolve(uint64_t key) {
  if (key == 0) return 0;
  Site* s = find(key);
  if (s == nullptr) return 0;
  uint32_t v = s->id.load(std::memory_order_acquire);
  if (v == 0) {
    if (holds_gil()) {  // e.g. the final flush from a thread holding the GIL
      std::lock_guard<std::mutex> g(g_resolve_mu);
      drain_locked();
    } else {
      // A timed-out wait is not repeated before the resolver has finished a pass (bounds the
      // stall when the GIL holder waits on CUPTI itself).
      const python::Waited w =
          python::resolver_wait(&g_client, site_resolved, s, kWaitMs, &g_no_wait_until);
      if (w != python::Waited::kNo) g_waits.fetch_add(1, std::memory_order_relaxed);
    }
    v = s->id.load(std::memory_order_acquire);
    // Late however it was late (a timed-out wait, or none while the last one's backoff runs):
    // this record is stored without its site.
    if (v == 0) g_wait_timeouts.fetch_add(1, std::memory_order_relaxed);
  }
  return (v == 0 || v == kNone) ? 0 : v;
}

uint32_t peek(uint64_t key, bool* pending) noexcept {
  *pending = false;
  Site* s = key != 0 ? find(key) : nullptr;
  if (s == nullptr) return 0;
  const uint32_t v = s->id.load(std::memory_order_acquire);
  *pending = v == 0;
  return v == kNone ? 0 : v;
}

void start(CaptureContext* ctx) {
  stop();
  g_ctx = ctx;
  g_borrowed.store(0, std::memory_order_relaxed);   // a key of the last session's table
  g_epoch.fetch_add(1, std::memory_order_relaxed);  // so are threads' forward-op sites
  // A new session numbers its sites and strings anew: forget every id of the last one.
  for (Site& s : g_sites) {
    s.key.store(0, std::memory_order_relaxed);
    s.id.store(0, std::memory_order_relaxed);
  }
  {
    std::lock_guard<std::mutex> g(g_resolve_mu);
    g_site_json.clear();
    g_site_ids.clear();
    g_site_category = 0;
  }
  for (uint32_t i = 0; i < kQueueSlots; ++i) g_queue[i].seq.store(i, std::memory_order_relaxed);
  g_enq.store(0);
  g_deq.store(0);
  for (auto* c : {&g_captured, &g_fast, &g_queued, &g_queue_full, &g_table_full, &g_faults,
                  &g_waits, &g_wait_timeouts, &g_frames_gone, &g_thread_site_used})
    c->store(0);
  python::guard_acquire(python::kGuardLaunchSites);
  g_no_wait_until = 0;
  python::resolver_add(&g_client);  // the thread has every signal blocked
  g_started = true;
  g_on.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> g(g_listener_mu);
  listener_on_locked();
}

void stop() {
  g_on.store(false, std::memory_order_release);
  {
    std::lock_guard<std::mutex> g(g_listener_mu);
    listener_off_locked();
  }
  if (!g_started) return;
  python::resolver_remove(&g_client);  // the GIL is released while a pass finishes
  g_started = false;
  // What is still queued is resolved now, before the backend's final flush reads the ids.
  if (pending()) {
    const bool held = holds_gil();
    if (held || rp_gil_ensure()) {
      {
        std::lock_guard<std::mutex> g(g_resolve_mu);
        drain_locked();
      }
      if (!held) rp_gil_release();
    }
  }
  python::guard_release(python::kGuardLaunchSites);
}

bool running() noexcept { return g_on.load(std::memory_order_acquire); }

void set_library_prefixes(const std::string& prefixes) {
  std::lock_guard<std::mutex> g(g_resolve_mu);
  g_prefixes = prefixes;
  for (auto& [code, c] : g_codes) c.user = c.ok && !library_file(c.raw_file.c_str());
}

std::string site_json(uint32_t id) {
  std::lock_guard<std::mutex> g(g_resolve_mu);
  return id >= 1 && id <= g_site_json.size() ? *g_site_json[id - 1] : std::string();
}

void stats(uint64_t out[kLaunchSiteStats]) {
  const std::atomic<uint64_t>* v[kLaunchSiteStats] = {
      &g_captured, &g_fast,  &g_queued,        &g_queue_full, &g_table_full,
      &g_faults,   &g_waits, &g_wait_timeouts, &g_frames_gone};
  for (int i = 0; i < kLaunchSiteStats; ++i) out[i] = v[i]->load();
}

}  // namespace rocprof::launch_sites
