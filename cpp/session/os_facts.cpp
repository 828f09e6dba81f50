#include "os_facts.hpp"

#include <unistd.h>

#include <cstdio>

namespace rocprof::session {

std::string thread_name(uint32_t tid) { return thread_name(0, tid); }

std::string thread_name(uint32_t pid, uint32_t tid) {
  std::string name;
  char path[64];
  if (pid == 0)
    std::snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
  else
    std::snprintf(path, sizeof path, "/proc/%u/task/%u/comm", pid, tid);
  if (std::FILE* f = std::fopen(path, "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f)) name = buf;
    std::fclose(f);
    while (!name.empty() && name.back() == '\n') name.pop_back();
  }
  return name;
}

}  // namespace rocprof::session
