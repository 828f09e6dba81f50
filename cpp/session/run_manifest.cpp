#include "run_manifest.hpp"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "output_path.hpp"
#include "storage/rocpd_status.hpp"

namespace rocprof::session::manifest {
namespace {

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  lseek(fd, 0, SEEK_SET);
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  return text;
}

// What identifies a file as its writer left it: a copy, a replacement or any write since
// changes one of these. "" where it cannot be read.
std::string identity(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%llu:%llu:%lld:%lld.%09ld:%lld.%09ld",
                static_cast<unsigned long long>(st.st_dev),
                static_cast<unsigned long long>(st.st_ino), static_cast<long long>(st.st_size),
                static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec,
                static_cast<long long>(st.st_ctim.tv_sec), st.st_ctim.tv_nsec);
  return buf;
}

// (path, identity) of each database closed complete, in the manifest's order.
using Closings = std::vector<std::pair<std::string, std::string>>;

// The listed databases in order, each once; a line "-PATH" takes PATH back out, and a line
// "=IDENTITY PATH" says PATH was closed complete as IDENTITY (into *closed).
std::vector<std::string> lines_of(const std::string& text, Closings* closed) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    if (line[0] == '=') {
      const std::size_t space = line.find(' ');
      if (closed != nullptr && space != std::string::npos)
        closed->emplace_back(line.substr(space + 1), line.substr(1, space - 1));
      continue;
    }
    const bool removal = line[0] == '-';
    if (removal) line.erase(0, 1);
    auto it = std::find(out.begin(), out.end(), line);
    if (removal && it != out.end()) out.erase(it);
    if (!removal && it == out.end()) out.push_back(line);
  }
  return out;
}

std::vector<std::string> read_manifest(const std::string& manifest, Closings* closed) {
  const int fd = ::open(manifest.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  ::flock(fd, LOCK_SH);
  auto out = lines_of(read_all(fd), closed);
  ::close(fd);
  return out;
}

// Whether a process holds the database's claim (output_path.cpp): probed with a shared lock
// that is dropped at once; nothing is written.
bool writer_alive(const std::string& db) {
  const int fd = ::open(db.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

// Databases this process created (also without a manifest): a later session of the process
// (after a failed exec, a second rocprof.profile()) never replaces one. Used under Lock only.
std::vector<std::string>& written_here() {
  static auto* v = new std::vector<std::string>();
  return *v;
}

}  // namespace

std::string path() {
  const char* m = std::getenv("ROCPROF_MANIFEST");
  return m ? m : "";
}

Lock::Lock() {
  const std::string m = path();
  if (m.empty()) return;
  // Never created here: the launcher makes it and removes it when it has reported, and a
  // process that outlives it (multiprocessing's resource tracker) would leave a new one behind
  // in the temporary folder that nothing reads.
  fd_ = ::open(m.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd_ >= 0) ::flock(fd_, LOCK_EX);  // processes of one run start together (ranks)
}

Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);  // the lock goes with it
}

bool Lock::listed(const std::string& db) const {
  const std::string want = output::absolute(db);
  for (const std::string& l : written_here())
    if (l == want) return true;
  if (fd_ < 0) return false;
  for (const std::string& l : lines_of(read_all(fd_), nullptr))
    if (l == want) return true;
  return false;
}

void Lock::add(const std::string& db) {
  written_here().push_back(output::absolute(db));
  if (fd_ < 0) return;
  const std::string line = output::absolute(db) + "\n";
  ssize_t ignored = ::write(fd_, line.data(), line.size());
  (void)ignored;
}

void Lock::remove(const std::string& db) {
  const std::string abs = output::absolute(db);
  auto& here = written_here();
  here.erase(std::remove(here.begin(), here.end(), abs), here.end());
  if (fd_ < 0) return;
  const std::string line = "-" + abs + "\n";
  ssize_t ignored = ::write(fd_, line.data(), line.size());
  (void)ignored;
}

void Lock::closed_complete(const std::string& db) {
  if (fd_ < 0) return;
  const std::string id = identity(db);
  if (id.empty()) return;
  const std::string line = "=" + id + " " + output::absolute(db) + "\n";
  ssize_t ignored = ::write(fd_, line.data(), line.size());
  (void)ignored;
}

std::vector<std::string> databases(const std::string& manifest) {
  return read_manifest(manifest, nullptr);
}

bool is_launcher() {
  const char* pid = std::getenv("ROCPROF_LAUNCHER_PID");
  return pid != nullptr && !path().empty() && std::atol(pid) == static_cast<long>(getpid());
}

std::vector<Outcome> outcomes(const std::string& manifest) {
  Closings closed;
  std::vector<Outcome> out;
  for (const std::string& db : read_manifest(manifest, &closed)) {
    auto said =
        std::find_if(closed.rbegin(), closed.rend(), [&](const auto& c) { return c.first == db; });
    rocpd::FileStatus s;
    if (said != closed.rend() && said->second == identity(db) && ::access(db.c_str(), R_OK) == 0) {
      s.readable = true;  // the writer's word, the file untouched since
      s.status = rocpd::kStatusComplete;
    } else {
      s = rocpd::read_status(db);
    }
    std::string line = "rocprof: ";
    if (!s.readable) {
      line += db + " is not a usable database: " + s.error;
    } else if (s.status.empty() || s.status == rocpd::kStatusComplete) {
      line += "results written to " + db;
    } else if (s.status == rocpd::kStatusInProgress && writer_alive(db)) {
      line += db + " is still being written by a process of the run that has not ended";
    } else if (s.status == rocpd::kStatusInProgress) {
      line += db + " is incomplete: its process was killed before closing it; keep " + db +
              "-wal beside it (records after the last commit are lost)";
    } else {
      line += db + " is incomplete (" + s.status + "): records after the failure were " +
              "dropped and counted (rocpd summary says how many)";
    }
    out.push_back(Outcome{db, s.readable, line});
  }
  return out;
}

void finish_if_launcher() {
  if (!is_launcher()) return;
  const std::string m = path();
  for (const Outcome& o : outcomes(m)) std::fprintf(stderr, "%s\n", o.line.c_str());
  ::unlink(m.c_str());
}

}  // namespace rocprof::session::manifest
