// The run manifest: when `rocprof run -- CMD` supervises a command, every process of it that
// records lists its database in one file (ROCPROF_MANIFEST), so the launcher can print them
// all at the end. The same file settles names: a template without %pid% names one database;
// the first process to claim it keeps it, later ones (a script's own Python children, a
// shell's several programs) get NAME_<pid>_results.db instead of overwriting it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "session.hpp"

namespace rocprof::session {

namespace {
std::string with_pid_tag(const std::string& path) {
  const std::string tail = "_results.db", tag = "_" + std::to_string(getpid());
  const auto at = path.rfind(tail);
  if (at != std::string::npos && at + tail.size() == path.size())
    return path.substr(0, at) + tag + tail;
  return path + tag;
}

bool listed(int fd, const std::string& path) {
  std::string text;
  char buf[4096];
  ssize_t n;
  lseek(fd, 0, SEEK_SET);
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  return text.find(path + "\n") == 0 || text.find("\n" + path + "\n") != std::string::npos;
}
}  // namespace

std::string claim_in_manifest(const std::string& path) {
  const char* manifest = std::getenv("ROCPROF_MANIFEST");
  if (manifest == nullptr || *manifest == '\0') return path;
  const int fd = open(manifest, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return path;  // the launcher is gone or the folder is: record anyway
  flock(fd, LOCK_EX);       // processes of one run start concurrently (ranks)
  std::string chosen = listed(fd, path) ? with_pid_tag(path) : path;
  const std::string line = chosen + "\n";
  ssize_t ignored = write(fd, line.data(), line.size());
  (void)ignored;
  flock(fd, LOCK_UN);
  close(fd);
  return chosen;
}

}  // namespace rocprof::session
