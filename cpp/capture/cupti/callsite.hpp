// The seam between the CUPTI backend and the Python side, free of vendor and Python headers.
// rocprof._core (cpp/capture/python/launch_sites.*, adapted by callsite_python.cpp, installed
// by cpp/bindings/cupti.cpp)
// registers these; librocprof_core never links libpython, so it only calls through them.
//  capture: in the API ENTER callback, on the launching thread, GIL held or not. Copies the
//           thread's Python frames without Python API, locks or allocation; returns a key of
//           the chain (0: none) and, when the chain is already resolved, its call site id.
//  resolve: when the activity record with that launch's correlation id is processed: the
//           call site id of the key's user frames (0: none). May wait briefly.
//  start/stop: with the backend's session; stop resolves what is pending before the flush.
//  stats: counters for the session's metadata (capture/launch_site_stats.hpp).
#pragma once
#include <cstdint>

#include "capture/launch_site_stats.hpp"

namespace rocprof {
class CaptureContext;
}

namespace rocprof::cupti {

struct CallsiteHooks {
  uint64_t (*capture)(uint32_t* id) noexcept;
  uint32_t (*resolve)(uint64_t key);
  void (*start)(CaptureContext* ctx);  // sends call sites (CallsiteInfo) through ctx
  void (*stop)();
  void (*stats)(uint64_t out[kLaunchSiteStats]);
};
void set_callsite_hooks(const CallsiteHooks* hooks) noexcept;

}  // namespace rocprof::cupti
