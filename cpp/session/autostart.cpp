// Native programs (C/C++/HIP/Julia using libroctx64.so, or CUDA programs that load our
// injection library) have no Python launcher to start a session. `rocprof run -- CMD` puts
// what the session needs into the child's environment and the library that loads first
// calls autostart():
//   ROCPROF_AUTOSTART_OUTPUT   database path template (placeholders: session/output_path.hpp)
//   ROCPROF_AUTOSTART_STRICT   set: --no-clobber (an existing file is an error)
//   ROCPROF_AUTOSTART_OPTIONS  the capture settings' text form (capture/settings.hpp: one
//                              "cupti.kernels=1" per line)
//   ROCPROF_AUTOSTART_OPTIONS_JSON  the launcher's options, stored in the database as given
//   ROCPROF_AUTOSTART_ON_DEMAND  set: --on-demand: nothing records; the session is armed for
//                              windows started by `rocprof ctl` (control.hpp)
// Python processes never start a session this way: their own (sitecustomize or launcher)
// runs first, and autostart() leaves a running session alone.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "capture/context.hpp"
#include "control.hpp"
#include "session.hpp"

namespace rocprof::session {

bool autostart() {
  const char* out = std::getenv("ROCPROF_AUTOSTART_OUTPUT");
  if (out == nullptr || *out == '\0' || current() != nullptr) return false;
  Config cfg;
  cfg.output_template = out;
  cfg.strict = std::getenv("ROCPROF_AUTOSTART_STRICT") != nullptr;
  cfg.options_json = "{\"autostart\":true}";
  // Programs started by hand with ROCPROF_CUPTI=1 (before `rocprof run -- CMD` existed).
  if (const char* cupti = std::getenv("ROCPROF_CUPTI")) cfg.settings.cupti.enabled = *cupti == '1';
  if (const char* json = std::getenv("ROCPROF_AUTOSTART_OPTIONS_JSON")) cfg.options_json = json;
  if (const char* opts = std::getenv("ROCPROF_AUTOSTART_OPTIONS")) {
    std::string error;
    if (!capture::parse_text(opts, '\n', "", &cfg.settings, &error)) {
      std::fprintf(stderr, "rocprof: ROCPROF_AUTOSTART_OPTIONS: %s; not profiling\n",
                   error.c_str());
      return false;
    }
  }
  cfg.metadata.emplace_back("rocprof.autostart", "1");
  std::string error;
  if (std::getenv("ROCPROF_AUTOSTART_ON_DEMAND") != nullptr) {
    if (!control::armed() && !control::arm(cfg, &error))
      std::fprintf(stderr, "rocprof: --on-demand: %s; not profiling\n", error.c_str());
    return false;
  }
  if (!start(cfg, &error)) {
    // Another thread may have won the race to start; that is not an error.
    if (current() != nullptr) return false;
    std::fprintf(stderr, "rocprof: autostart failed: %s\n", error.c_str());
    return false;
  }
  return true;
}

}  // namespace rocprof::session

namespace rocprof::capture {

namespace {
void stop_at_exit() { session::stop(); }
}  // namespace

void start_session_on_load() {
  if (session::current() == nullptr && session::autostart()) std::atexit(stop_at_exit);
}

}  // namespace rocprof::capture
