// The backends registered in this process (capture/context.hpp). Leaked on purpose: backends
// register from static initialisers of several libraries, and exit handlers may still walk
// the list after static destructors ran.
#include <atomic>
#include <cstdio>
#include <mutex>

#include "capture/context.hpp"
#include "capture/settings.hpp"

namespace rocprof::capture {

namespace {
std::mutex& mu() {
  static auto* m = new std::mutex();
  return *m;
}
std::vector<Backend*>& list() {
  static auto* v = new std::vector<Backend*>();
  return *v;
}
CaptureContext* g_ctx = nullptr;
const CaptureSettings* g_settings = nullptr;
std::atomic<InternFn> g_intern{nullptr};
}  // namespace

void set_interner(InternFn fn) { g_intern.store(fn, std::memory_order_release); }

namespace {
std::atomic<SiteResolveFn> g_resolve_site{nullptr};
}  // namespace

void set_site_resolver(SiteResolveFn fn) { g_resolve_site.store(fn, std::memory_order_release); }

uint32_t resolve_site(uint64_t key, bool wait, bool* pending) {
  *pending = false;
  const SiteResolveFn fn = g_resolve_site.load(std::memory_order_acquire);
  return fn != nullptr && key != 0 ? fn(key, wait, pending) : 0;
}

namespace {
std::atomic<StreamIdFn> g_stream_id{nullptr};
}  // namespace

void set_stream_id_fn(StreamIdFn fn) { g_stream_id.store(fn, std::memory_order_release); }

uint32_t stream_id(uint64_t handle) noexcept {
  const StreamIdFn fn = g_stream_id.load(std::memory_order_acquire);
  return fn != nullptr ? fn(handle) : 0;
}

uint32_t intern(std::string_view s) noexcept {
  const InternFn fn = g_intern.load(std::memory_order_acquire);
  return fn != nullptr ? fn(s) : 0;
}

void register_backend(Backend* backend) {
  CaptureContext* ctx;
  const CaptureSettings* settings;
  {
    std::lock_guard<std::mutex> g(mu());
    list().push_back(backend);
    ctx = g_ctx;
    settings = g_settings;
  }
  // A library loaded while a session runs (rocprof._core after a native autostart) joins it.
  if (ctx != nullptr && settings != nullptr) {
    std::string why;
    if (!backend->start(*ctx, *settings, &why) && !why.empty())
      std::fprintf(stderr, "rocprof: %s: %s\n", backend->name(), why.c_str());
  }
}

std::vector<Backend*> backends() {
  std::lock_guard<std::mutex> g(mu());
  return list();
}

void set_running(CaptureContext* ctx, const CaptureSettings* settings) {
  std::lock_guard<std::mutex> g(mu());
  g_ctx = ctx;
  g_settings = settings;
}

}  // namespace rocprof::capture
