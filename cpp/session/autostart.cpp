// Native programs (C/C++/HIP/Julia using libroctx64.so) have no Python launcher to start a
// session: when ROCPROF_AUTOSTART_OUTPUT names a database path template, the core starts one
// as it loads and the exit handler closes it. Python never sets this variable for itself.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "session.hpp"

namespace {

__attribute__((constructor)) void rocprof_autostart() {
  const char* out = std::getenv("ROCPROF_AUTOSTART_OUTPUT");
  if (out == nullptr || *out == '\0') return;
  rocprof::session::Config cfg;
  cfg.output_template = out;
  cfg.options_json = "{\"autostart\":true}";
  std::string error;
  if (!rocprof::session::start(cfg, &error))
    std::fprintf(stderr, "rocprof: autostart failed: %s\n", error.c_str());
}

}  // namespace
