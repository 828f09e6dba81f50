#include "os_facts.hpp"

#include <unistd.h>

#include <cstdio>

namespace rocprof::session {

std::string thread_name(uint32_t tid) {
  std::string name;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
  if (std::FILE* f = std::fopen(path, "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f)) name = buf;
    std::fclose(f);
    while (!name.empty() && name.back() == '\n') name.pop_back();
  }
  return name;
}

}  // namespace rocprof::session
