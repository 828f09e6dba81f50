// `rocprof attach PID` for programs not started by rocprof: the attacher loads this library
// into the running process (ptrace: a dlopen call made on its main thread) and then calls
// rocprof_attach_arm the same way, which arms on-demand capture (session/control.hpp); windows
// are then started through the process's control socket like those of `rocprof run
// --on-demand`. Returns 0 when armed, 1 when already armed (or a session records already),
// 2 for bad settings text, 3 when the control socket could not be made (said on the
// process's stderr).
#include <cstdio>
#include <string>

#include "capture/settings.hpp"
#include "session/control.hpp"
#include "session/session.hpp"

extern "C" __attribute__((visibility("default"))) int rocprof_attach_arm(
    const char* output_template, const char* options) {
  namespace s = rocprof::session;
  if (s::control::armed() || s::current() != nullptr) return 1;
  s::Config cfg;
  cfg.output_template = output_template != nullptr ? output_template : "";
  cfg.options_json = "{\"attach\":true}";
  cfg.metadata.emplace_back("rocprof.attached", "1");
  std::string error;
  if (options != nullptr &&
      !rocprof::capture::parse_text(options, '\n', "", &cfg.settings, &error)) {
    std::fprintf(stderr, "rocprof attach: %s\n", error.c_str());
    return 2;
  }
  if (!s::control::arm(cfg, &error)) {
    std::fprintf(stderr, "rocprof attach: %s\n", error.c_str());
    return 3;
  }
  return 0;
}
