#include "output_path.hpp"

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

#include "run_manifest.hpp"

namespace rocprof::session::output {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string trimmed(std::string s) {
  const auto b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string first_env(std::initializer_list<const char*> names, const char* fallback) {
  for (const char* n : names)
    if (std::string v = trimmed(env(n)); !v.empty()) return v;
  return fallback;
}

std::string basename_of(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string dirname_of(const std::string& p) {
  const auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

// One path component made of words: runs of spaces and '/' become '_'.
std::string condensed(const std::vector<std::string>& words) {
  std::string out;
  bool sep = false;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string w = (i ? " " : "") + words[i];
    for (char c : w) {
      if (c == '/' || c == ' ' || c == '\t' || c == '\n') {
        sep = true;
        continue;
      }
      if (sep && !out.empty()) out += '_';
      sep = false;
      out += c;
    }
  }
  return out.empty() ? "none" : out;
}

std::vector<std::string> own_argv() {
  std::vector<std::string> argv;
  if (std::FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
    std::string word;
    for (int c; (c = std::fgetc(f)) != EOF;) {
      if (c == '\0') {
        argv.push_back(word);
        word.clear();
      } else {
        word += static_cast<char>(c);
      }
    }
    std::fclose(f);
  }
  return argv;
}

// One value for every process of a run: the launcher exports its start (ROCPROF_LAUNCH_TIME);
// a process started otherwise uses its first expansion's time.
std::string launch_time() {
  if (std::string v = env(kLaunchTimeVar); !v.empty()) return v;
  static const std::string own = [] {
    char buf[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%d_%H.%M.%S", &tm);
    return std::string(buf);
  }();
  return own;
}

std::string user() {
  if (std::string u = env("USER"); !u.empty()) return u;
  return std::to_string(getuid());
}

std::string hostname() {
  char buf[HOST_NAME_MAX + 1] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string cwd_name() {
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof buf) == nullptr) return "root";
  const std::string b = basename_of(buf);
  return b.empty() ? "root" : b;
}

// The value of placeholder %key% for this process (for process `pid` where not 0: its pid and
// ppid); false for an unknown key.
bool value(const std::string& key, const std::vector<std::string>& argv, long pid, long ppid,
           std::string* out) {
  const std::string tag = argv.empty() || argv[0].empty() ? "python" : basename_of(argv[0]);
  const std::vector<std::string> args(argv.size() > 1 ? argv.begin() + 1 : argv.end(), argv.end());
  if (key == "hostname")
    *out = hostname();
  else if (key == "pid")
    *out = std::to_string(pid != 0 ? pid : getpid());
  else if (key == "ppid")
    *out = std::to_string(pid != 0 ? ppid : getppid());
  else if (key == "rank")
    *out = rank();
  else if (key == "user")
    *out = user();
  else if (key == "tag")
    *out = tag;
  else if (key == "argt") {
    std::vector<std::string> words{tag};
    words.insert(words.end(), args.begin(), args.end());
    *out = condensed(words);
  } else if (key == "argv")
    *out = condensed(argv);
  else if (key == "args")
    *out = condensed(args);
  else if (key == "job")
    *out = first_env({"SLURM_JOB_ID"}, "0");
  else if (key == "size")
    *out = first_env({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, "1");
  else if (key == "nid")
    *out = ranked() ? rank() : std::to_string(pid != 0 ? pid : getpid());
  else if (key == "pgid")
    *out = std::to_string(getpgid(0));
  else if (key == "psid")
    *out = std::to_string(getsid(0));
  else if (key == "launch_time" || key == "launch_date")
    *out = launch_time();
  else if (key == "cwd")
    *out = cwd_name();
  else
    return false;
  return true;
}

const char* kKnown =
    "%hostname%, %pid%, %ppid%, %rank%, %user%, %tag%, %argt%, %argv%, %args%, %job%, %size%, "
    "%nid%, %pgid%, %psid%, %launch_time%, %cwd%, %env{VAR}%, and %p %j %r %s";

bool is_name_char(char c, bool first) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
         (!first && c >= '0' && c <= '9');
}

// At `i`, one of %env{NAME}%, %ENV{NAME}%, $env{NAME}, $ENV{NAME}, %q{NAME}% (the closing %
// optional, as rocprofv3 reads them): its length and the variable's name, else 0.
std::size_t env_reference(const std::string& t, std::size_t i, std::string* name) {
  std::size_t j = i + 1;
  for (const char* opener : {"env{", "ENV{", "q{"}) {
    const std::size_t n = std::strlen(opener);
    if ((t[i] == '%' || (t[i] == '$' && opener[0] != 'q')) && t.compare(j, n, opener) == 0) {
      std::size_t k = j + n;
      const std::size_t start = k;
      while (k < t.size() && is_name_char(t[k], k == start)) ++k;
      if (k == start || k >= t.size() || t[k] != '}') return 0;
      *name = t.substr(start, k - start);
      ++k;
      if (t[i] == '%' && k < t.size() && t[k] == '%') ++k;
      return k - i;
    }
  }
  return 0;
}

// A path (or value) quoted for a message; a very long name in it is shortened to its ends, so
// that the folder stays readable.
std::string shown(const std::string& s) {
  std::string out;
  bool cut = false;
  std::size_t at = 0;
  while (at <= s.size()) {
    std::size_t end = s.find('/', at);
    if (end == std::string::npos) end = s.size();
    const std::string part = s.substr(at, end - at);
    if (part.size() > 64) {
      out += part.substr(0, 24) + "..." + part.substr(part.size() - 24);
      cut = true;
    } else {
      out += part;
    }
    if (end < s.size()) out += '/';
    at = end + 1;
  }
  return "'" + out + "'" + (cut ? " (" + std::to_string(s.size()) + " bytes)" : "");
}

}  // namespace

const std::vector<std::string>& rank_variables() {
  static const std::vector<std::string> v{"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                          "SLURM_PROCID", "PMIX_RANK"};
  return v;
}

std::string rank() {
  for (const std::string& var : rank_variables())
    if (std::string v = trimmed(env(var.c_str())); all_digits(v)) return v;
  return "0";
}

bool ranked() {
  for (const std::string& var : rank_variables())
    if (all_digits(trimmed(env(var.c_str())))) return true;
  return false;
}

std::string database_template(const std::string& dir, const std::string& name) {
  // An absolute -o is the whole path, the folder left out: rocprofv3 joins -d and -o as paths
  // are joined, where an absolute part replaces what comes before it.
  if (!name.empty() && name.front() == '/') return name + kDatabaseSuffix;
  std::string d = dir.empty() ? kDefaultDir : dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d + "/" + (name.empty() ? kDefaultName : name) + kDatabaseSuffix;
}

std::string per_process_name(const std::string& name_in) {
  const std::string name = name_in.empty() ? kDefaultName : name_in;
  for (std::size_t at = name.find('%'); at != std::string::npos; at = name.find('%', at + 1)) {
    if (name.compare(at, 5, "%pid%") == 0) return name;
    const char after = at + 2 < name.size() ? name[at + 2] : '\0';
    if (at + 1 < name.size() && name[at + 1] == 'p' &&
        !((after >= 'a' && after <= 'z') || after == '_' || after == '%'))
      return name;  // the %p shorthand
  }
  return name + "_%pid%";
}

namespace {
// How deep variables may name placeholders (V='%tag%_%env{W}%', W=...): rocprofv3 expands until
// nothing changes; a variable naming itself stops here with an error.
constexpr int kMaxEnvDepth = 4;

bool expand_at(const std::string& whole, const std::vector<std::string>& argv, std::string* out,
               std::string* error, long pid, long ppid, int depth);
}  // namespace

bool expand(const std::string& whole, const std::vector<std::string>& argv, std::string* out,
            std::string* error, long pid, long ppid) {
  return expand_at(whole, argv, out, error, pid, ppid, 0);
}

namespace {
bool expand_at(const std::string& whole, const std::vector<std::string>& argv, std::string* out,
               std::string* error, long pid, long ppid, int depth) {
  // The suffix is not the user's text: "-o x_%p" means x_<pid>, not "%p_results.db".
  const std::string tmpl = prefix_of(whole), suffix = whole.substr(tmpl.size());
  const std::vector<std::string> command = argv.empty() ? own_argv() : argv;
  std::string r;
  for (std::size_t i = 0; i < tmpl.size();) {
    const char c = tmpl[i];
    std::string var;
    if (const std::size_t n = (c == '%' || c == '$') ? env_reference(tmpl, i, &var) : 0) {
      const char* v = std::getenv(var.c_str());
      if (v == nullptr) {
        *error = "output path " + shown(tmpl) + ": %env{" + var + "}% names the unset " +
                 "environment variable " + var + " (set it, or leave it out of the path)";
        return false;
      }
      const std::string value = v;
      if (value.find('/') != std::string::npos || value.find("..") != std::string::npos) {
        *error = "output path " + shown(tmpl) + ": " + var + "=" + shown(value) +
                 " holds '/' or '..', which could put the output outside its folder (use a " +
                 "plain name)";
        return false;
      }
      if (value.find_first_of("%$") == std::string::npos) {
        r += value;
      } else {  // the value names placeholders of its own
        std::string inner;
        if (depth + 1 >= kMaxEnvDepth) {
          *error = "output path " + shown(tmpl) + ": " + var + "=" + shown(value) +
                   " names variables nested more than " + std::to_string(kMaxEnvDepth) +
                   " deep (does it name itself?)";
          return false;
        }
        if (!expand_at(value, command, &inner, error, pid, ppid, depth + 1)) return false;
        r += inner;
      }
      i += n;
      continue;
    }
    if (c != '%') {
      r += c;
      ++i;
      continue;
    }
    std::size_t k = i + 1;
    while (k < tmpl.size() && ((tmpl[k] >= 'a' && tmpl[k] <= 'z') || tmpl[k] == '_')) ++k;
    const std::string key = tmpl.substr(i + 1, k - i - 1);
    if (k < tmpl.size() && tmpl[k] == '%' && !key.empty()) {
      std::string v;
      if (!value(key, command, pid, ppid, &v)) {
        *error = "unknown placeholder %" + key + "% in output path " + shown(tmpl) +
                 " (known: " + kKnown + ")";
        return false;
      }
      r += v;
      i = k + 1;
      continue;
    }
    // rocprofv3's one-letter shorthands %p %j %r %s (not followed by a-z, '_' or '%').
    const char letter = i + 1 < tmpl.size() ? tmpl[i + 1] : '\0';
    const char after = i + 2 < tmpl.size() ? tmpl[i + 2] : '\0';
    if (letter != '\0' && std::strchr("pjrs", letter) != nullptr &&
        !((after >= 'a' && after <= 'z') || after == '_' || after == '%')) {
      std::string v;
      value(letter == 'p'   ? "pid"
            : letter == 'j' ? "job"
            : letter == 'r' ? "rank"
                            : "size",
            command, pid, ppid, &v);
      r += v;
      i += 2;
      continue;
    }
    r += c;
    ++i;
  }
  *out = r + suffix;
  return true;
}

// An absolute path without its empty, "." and "dir/.." parts, as text (os.path.normpath): what
// is printed reads as a user would write it, and no folder is made only to be left by "..".
std::string normal(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    std::string part = path.substr(pos, next - pos);
    pos = next + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();  // "/.." is "/"
      continue;
    }
    parts.push_back(std::move(part));
  }
  std::string r;
  for (const std::string& part : parts) r += "/" + part;
  return r.empty() ? "/" : r;
}
}  // namespace

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return normal(path);
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof buf) == nullptr) return path;
  return normal(std::string(buf) + "/" + path);
}

std::string prefix_of(const std::string& db_path) {
  const std::string tail = kDatabaseSuffix;
  if (db_path.size() >= tail.size() &&
      db_path.compare(db_path.size() - tail.size(), tail.size(), tail) == 0)
    return db_path.substr(0, db_path.size() - tail.size());
  return db_path;
}

std::string with_pid_tag(const std::string& db_path, long pid) {
  const std::string prefix = prefix_of(db_path);
  const std::string tag = "_" + std::to_string(pid);
  return prefix == db_path ? db_path + tag : prefix + tag + kDatabaseSuffix;
}

namespace {

// Each folder of `dir` from the top, with what is wrong with the first that is not a usable
// folder. `create`: missing ones are made.
bool walk_folders(const std::string& dir, bool create, std::string* error) {
  std::string at;
  std::size_t pos = 0;
  while (pos <= dir.size()) {
    std::size_t next = dir.find('/', pos);
    if (next == std::string::npos) next = dir.size();
    const std::string part = dir.substr(pos, next - pos);
    at = dir.substr(0, next);
    pos = next + 1;
    if (part.empty() || part == ".") continue;
    if (part.size() > NAME_MAX) {
      *error = "cannot create folder " + shown(at) + ": the name " + shown(part) + " is " +
               std::to_string(part.size()) + " bytes, more than the file system's " +
               std::to_string(NAME_MAX);
      return false;
    }
    struct stat st{};
    if (::stat(at.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      *error = "cannot use " + shown(at) + " as a folder: it is a file";
      return false;
    }
    const int why = errno;
    struct stat lst{};
    if (::lstat(at.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      char target[PATH_MAX] = {};
      const ssize_t n = readlink(at.c_str(), target, sizeof target - 1);
      *error = "cannot use " + shown(at) + " as a folder: it is a symbolic link to " +
               (n > 0 ? shown(std::string(target, n)) : std::string("nothing")) +
               ", which does not exist";
      return false;
    }
    if (why != ENOENT) {
      *error = "cannot use " + shown(at) + " as a folder: " + std::strerror(why);
      return false;
    }
    const std::string parent = dirname_of(at);
    if (!create) {
      if (::access(parent.c_str(), W_OK | X_OK) != 0) {
        *error = "cannot create folder " + shown(at) + ": " + std::strerror(errno) + " (in " +
                 shown(parent) + ")";
        return false;
      }
      return true;  // the rest would be made inside a folder this process may write
    }
    if (::mkdir(at.c_str(), 0777) != 0 && errno != EEXIST) {
      *error = "cannot create folder " + shown(at) + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

// open() that never returns 0, 1 or 2: with stdout/stderr closed (`prog >&- 2>&-`) the claim
// would land there, and every later message to stderr would be written into the database. The
// slot is plugged with /dev/null (and left so), as SQLite does for its own files.
int open_above_stdio(const char* path, int flags, mode_t mode = 0) {
  int fd = ::open(path, flags, mode);
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int saved = errno;
  ::close(fd);
  ::open("/dev/null", O_RDWR);  // takes the slot just freed (the lowest free one)
  errno = saved;
  return moved;
}

void remove_with_sidecars(const std::string& path) {
  for (const char* ext : {"", "-wal", "-shm", "-journal"}) ::unlink((path + ext).c_str());
}

enum class Take { kTaken, kBusy, kError };

// One attempt at `path`. kBusy sets *why (the line saying another name was taken).
Take take(const std::string& path, bool strict, const manifest::Lock& run, int* fd_out,
          std::string* why, std::string* error) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    const int fd = open_above_stdio(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        // Another claimer found the new empty file and took it first: it is theirs now.
        ::close(fd);
        *why = "in use by another process";
        return Take::kBusy;
      }
      // Sidecars of a database removed by hand would be read as this one's journal.
      for (const char* ext : {"-wal", "-shm", "-journal"}) ::unlink((path + ext).c_str());
      *fd_out = fd;
      return Take::kTaken;
    }
    if (errno != EEXIST) {
      *error = "cannot create " + shown(path) + ": " + std::strerror(errno);
      if (errno == ENAMETOOLONG)
        *error += " (a name in a path may have at most " + std::to_string(NAME_MAX) + " bytes)";
      return Take::kError;
    }
    if (strict) {
      *why = "already there (--no-clobber: an existing file is never replaced)";
      return Take::kBusy;
    }
    if (run.listed(path)) {
      *why = "written earlier in this run";
      return Take::kBusy;
    }
    const int old = open_above_stdio(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (old < 0) {
      *error = "cannot replace " + shown(path) + ": " + std::strerror(errno);
      return Take::kError;
    }
    if (::flock(old, LOCK_EX | LOCK_NB) != 0) {
      ::close(old);
      *why = errno == EWOULDBLOCK ? "being written by another process"
                                  : "there and cannot be locked to check it is not in use";
      return Take::kBusy;
    }
    // A finished run's file: replace it, unless it is no longer the file at `path` (another
    // claimer replaced it meanwhile; then look again).
    struct stat held{}, now{};
    const bool same = ::fstat(old, &held) == 0 && ::stat(path.c_str(), &now) == 0 &&
                      held.st_dev == now.st_dev && held.st_ino == now.st_ino;
    if (same) remove_with_sidecars(path);
    ::close(old);
  }
  *why = "contended by other processes";
  return Take::kBusy;
}

std::string alternate(const std::string& wanted, int n) {
  const std::string prefix = prefix_of(wanted);
  const std::string pid = std::to_string(getpid());
  const bool has_pid = prefix.size() >= pid.size() &&
                       prefix.compare(prefix.size() - pid.size(), pid.size(), pid) == 0;
  std::string stem = has_pid ? prefix : prefix + "_" + pid;
  if (has_pid || n > 0) stem += "_" + std::to_string(n + 2);
  return stem + (prefix == wanted ? "" : kDatabaseSuffix);
}

}  // namespace

bool check_creatable(const std::string& path, bool strict, std::string* error) {
  if (path.size() >= PATH_MAX) {
    *error = "output path " + shown(path) + " is " + std::to_string(path.size()) +
             " bytes, more than the system's " + std::to_string(PATH_MAX - 1);
    return false;
  }
  const std::string name = basename_of(path);
  if (name.size() > NAME_MAX) {
    *error = "cannot create " + shown(path) + ": the file name is " + std::to_string(name.size()) +
             " bytes, more than the file system's " + std::to_string(NAME_MAX) + " (shorten -o)";
    return false;
  }
  if (!walk_folders(dirname_of(path), false, error)) return false;
  struct stat st{};
  if (strict && ::lstat(path.c_str(), &st) == 0) {
    *error = shown(path) + " already exists (--no-clobber: not replacing it; remove it or " +
             "choose another -o)";
    return false;
  }
  return true;
}

bool make_folders(const std::string& dir, std::string* error) {
  return walk_folders(dir, true, error);
}

bool claim(const std::string& asked, bool strict, Claim* out, std::string* error) {
  const std::string wanted = absolute(asked);
  if (!check_creatable(wanted, false, error) || !make_folders(dirname_of(wanted), error))
    return false;
  manifest::Lock run;
  std::string first_why;
  for (int n = -1; n < 1000; ++n) {
    const std::string path = n < 0 ? wanted : alternate(wanted, n);
    std::string why;
    int fd = -1;
    switch (take(path, strict, run, &fd, &why, error)) {
      case Take::kError:
        return false;
      case Take::kBusy:
        if (strict) {
          *error = shown(path) + " is " + why;
          return false;
        }
        if (first_why.empty()) first_why = why;
        continue;
      case Take::kTaken:
        out->path = path;
        out->fd = fd;
        out->note = n < 0 ? ""
                          : wanted + " is " + first_why + ": this process (pid " +
                                std::to_string(getpid()) + ") records to " + path;
        run.add(path);
        return true;
    }
  }
  *error = "no free name near " + shown(wanted) + " (1000 tried)";
  return false;
}

void release(Claim* c) {
  if (c->fd >= 0) ::close(c->fd);
  c->fd = -1;
}

void forget_after_fork(Claim* c) {
  // close() of this copy keeps the parent's flock (it belongs to the open file, which the
  // parent still holds); flock(LOCK_UN) here would have released it for both.
  release(c);
  c->path.clear();
}

}  // namespace rocprof::session::output
