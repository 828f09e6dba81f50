// Native programs (C/C++/HIP/Julia using libroctx64.so, or CUDA programs that load our
// injection library) have no Python launcher to start a session. `rocprof run -- CMD` puts
// what the session needs into the child's environment and the library that loads first
// calls autostart():
//   ROCPROF_AUTOSTART_OUTPUT   database path template (%pid%, %ppid%, %rank% resolved here)
//   ROCPROF_AUTOSTART_OPTIONS  one "key=value" per line: backend options as the Python side
//                              builds them ("cupti.kernel=1", ...), plus "options_json=..."
// Python processes never start a session this way: their own (sitecustomize or launcher)
// runs first, and autostart() leaves a running session alone.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "session.hpp"

namespace rocprof::session {

bool autostart() {
  const char* out = std::getenv("ROCPROF_AUTOSTART_OUTPUT");
  if (out == nullptr || *out == '\0' || current() != nullptr) return false;
  Config cfg;
  cfg.output_template = out;
  cfg.options_json = "{\"autostart\":true}";
  if (const char* opts = std::getenv("ROCPROF_AUTOSTART_OPTIONS")) {
    std::string text(opts);
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(at, end - at);
      at = end + 1;
      const size_t eq = line.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
      if (key == "options_json") cfg.options_json = value;
      else cfg.backend_options[key] = value;
    }
  }
  cfg.metadata.emplace_back("rocprof.autostart", "1");
  std::string error;
  if (!start(cfg, &error)) {
    // Another thread may have won the race to start; that is not an error.
    if (current() != nullptr) return false;
    std::fprintf(stderr, "rocprof: autostart failed: %s\n", error.c_str());
    return false;
  }
  return true;
}

}  // namespace rocprof::session
