#include "os_facts.hpp"

#include <sys/stat.h>
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

void prepare_output(const std::string& path) {
  for (std::size_t p = path.find('/', 1); p != std::string::npos; p = path.find('/', p + 1))
    ::mkdir(path.substr(0, p).c_str(), 0777);  // EEXIST is the usual answer
  for (const char* ext : {"", "-wal", "-shm", "-journal"}) ::unlink((path + ext).c_str());
}

}  // namespace rocprof::session
