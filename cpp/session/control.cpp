#include "control.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "capture/settings.hpp"
#include "output_path.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::session::control {
namespace {

// Every client is served by one thread that never waits on any of them: a client has
// kRequestNs to deliver its request, and at most kMaxPending wait at once (a new one drops the
// oldest), so a client that connects and sends nothing, or trickles, or a flood of connections,
// costs a slot for a moment, never the thread, nor the program's descriptors.
constexpr uint64_t kRequestNs = 1000000000ull;
constexpr std::size_t kMaxPending = 32;
constexpr std::size_t kMaxRequest = 64u << 10;
constexpr int kAcceptsPerTurn = 256;  // then the clients already accepted are read again

struct Client {
  int fd;
  std::string buf;
  uint64_t deadline_ns;
};

// All state belongs to the control thread while it runs; arm/disarm and the fork child touch
// it only when no control thread runs in this process. Leaked on purpose (exit handlers).
struct State {
  Config base;
  std::string folder, socket;
  int listen_fd = -1;
  int wake[2] = {-1, -1};  // disarm() writes a byte: the thread ends its window and leaves
  std::thread* thread = nullptr;
  unsigned windows = 0;    // windows started in this process (the next is windows + 1)
  bool in_window = false;  // a window of ours runs (session::current() tells if it still does)
  unsigned k = 0;
  std::string path;
  uint64_t deadline_ns = 0;       // --duration: when the window ends (0: at `stop`)
  std::vector<int> waiters;       // `start --duration` clients waiting for the database
  bool forked = false;            // a fork child's thread waits before it binds (see serve)
  std::vector<Client> pending;    // accepted, their request not complete yet; oldest first
  uint64_t accept_resume_ns = 0;  // out of descriptors: accept again from then on
};
State* g = nullptr;
std::atomic<bool> g_armed{false};
bool g_hooks = false;

void say(const char* what, const std::string& detail) {
  std::fprintf(stderr, "rocprof: on-demand control: %s%s%s\n", what, detail.empty() ? "" : ": ",
               detail.c_str());
}

bool send_line(int fd, const std::string& line) {
  std::string s = line + "\n";
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    const ssize_t n = ::send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

// The folder holding the sockets: made 0700 if missing, and refused when it is not a folder
// of ours that only we can enter (someone else made it first, or loosened it).
bool private_folder(const std::string& dir, std::string* error) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = dir + ": " + std::strerror(errno);
    return false;
  }
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) {
    *error = dir + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%o", static_cast<unsigned>(st.st_mode & 0777));
    *error = dir + " is not a folder only this user can enter (owner uid " +
             std::to_string(st.st_uid) + ", mode " + mode + "): remove it and run again";
    return false;
  }
  return true;
}

bool bind_socket(State& s, std::string* error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (s.socket.size() >= sizeof(addr.sun_path)) {
    *error = "the socket path " + s.socket + " is longer than " +
             std::to_string(sizeof(addr.sun_path) - 1) +
             " bytes (a Unix socket limit): choose a shorter -d";
    return false;
  }
  std::memcpy(addr.sun_path, s.socket.c_str(), s.socket.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  ::unlink(s.socket.c_str());  // an earlier image of this pid (exec) left its socket
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::chmod(s.socket.c_str(), 0600) != 0 || ::listen(fd, 64) != 0) {
    *error = s.socket + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  s.listen_fd = fd;
  return true;
}

void notify_waiters(State& s, const std::string& line) {
  for (int fd : s.waiters) {
    send_line(fd, line);
    ::close(fd);
  }
  s.waiters.clear();
}

// The window ended (by `stop`, its duration, or the program's exit having closed the session):
// its database is complete when session::stop() returns.
std::string end_window(State& s) {
  session::stop();
  const std::string line =
      "stopped " + std::to_string(s.k) + " " + std::to_string(now_ns()) + " " + s.path;
  s.in_window = false;
  s.deadline_ns = 0;
  notify_waiters(s, line);
  return line;
}

// A window the program's own exit path closed (Python's launcher stops the session it sees):
// its waiters hear the path all the same.
void reconcile(State& s) {
  if (s.in_window && session::current() == nullptr) end_window(s);
}

std::string start_window(State& s, unsigned long long duration_ms,
                         const std::vector<std::string>& overrides) {
  if (s.in_window || session::current() != nullptr)
    return "error already recording window " + std::to_string(s.k) + " into " +
           session::current_path() + " (rocprof ctl stop ends it)";
  Config cfg = s.base;
  std::string why;
  for (const std::string& line : overrides)
    if (!capture::parse_text(line, '\n', "", &cfg.settings, &why))
      return "error window option " + line + ": " + why;
  const unsigned k = s.windows + 1;
  cfg.output_template = window_template(s.base.output_template, k);
  cfg.metadata.emplace_back("rocprof.on_demand.window", std::to_string(k));
  // What the window added to the run's settings: its options, as `rocprof ctl` sent them.
  std::string added;
  for (const std::string& line : overrides) added += (added.empty() ? "" : " ") + line;
  cfg.metadata.emplace_back("rocprof.on_demand.window_settings", added);
  const uint64_t t0 = now_ns();
  if (!session::start(cfg, &why)) return "error window " + std::to_string(k) + ": " + why;
  s.windows = k;
  s.k = k;
  s.in_window = true;
  s.path = session::current_path();
  s.deadline_ns = duration_ms > 0 ? now_ns() + duration_ms * 1000000ull : 0;
  return "started " + std::to_string(k) + " " + std::to_string(t0) + " " + s.path;
}

std::string status(State& s) {
  const std::string pid = std::to_string(::getpid());
  if (s.in_window) return "status " + pid + " recording " + std::to_string(s.k) + " " + s.path;
  return "status " + pid + " idle " + std::to_string(s.windows);
}

enum class Got { more, complete, failed };

// Takes what the client has sent so far; complete at an empty line, the client's end of
// writing, or kMaxRequest bytes.
Got read_more(Client& c) {
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
    if (n == 0) return Got::complete;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? Got::more : Got::failed;
    }
    c.buf.append(chunk, static_cast<std::size_t>(n));
    if (c.buf.find("\n\n") != std::string::npos || c.buf.size() >= kMaxRequest)
      return Got::complete;
  }
}

std::vector<std::string> request_lines(const std::string& buf) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < buf.size()) {
    std::size_t nl = buf.find('\n', pos);
    if (nl == std::string::npos) nl = buf.size();
    if (nl == pos) break;
    lines.push_back(buf.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

bool peer_ok(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
      peer_allowed(cred.uid, ::geteuid()))
    return true;
  send_line(fd, "error refused: uid " + std::to_string(cred.uid) +
                    " may not control this process (only uid " + std::to_string(::geteuid()) +
                    " or root)");
  return false;
}

// Answers one complete request; the client's descriptor is closed, or kept as a waiter.
void handle(State& s, int fd, const std::vector<std::string>& lines) {
  if (lines.empty()) {
    ::close(fd);
    return;
  }
  reconcile(s);
  const std::string& cmd = lines[0];
  if (cmd.rfind("start", 0) == 0) {
    const unsigned long long ms = std::strtoull(cmd.c_str() + 5, nullptr, 10);
    const std::string reply =
        start_window(s, ms, std::vector<std::string>(lines.begin() + 1, lines.end()));
    if (send_line(fd, reply) && ms > 0 && reply.rfind("started", 0) == 0) {
      s.waiters.push_back(fd);  // answered again when the window's database is complete
      return;
    }
  } else if (cmd == "stop") {
    send_line(fd, s.in_window ? end_window(s) : "error not recording (" + status(s) + ")");
  } else if (cmd == "status") {
    send_line(fd, status(s));
  } else {
    send_line(fd, "error unknown request " + cmd + " (start, stop or status)");
  }
  ::close(fd);
}

void drop_oldest(State& s) {
  ::close(s.pending.front().fd);
  s.pending.erase(s.pending.begin());
}

// Takes the connections waiting in the listen queue. A request that came with its connection
// (rocprof ctl writes it at once) is answered here, before later arrivals could push it out.
void accept_clients(State& s) {
  for (int i = 0; i < kAcceptsPerTurn; ++i) {
    const int fd = ::accept4(s.listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        if (!s.pending.empty()) {
          drop_oldest(s);
          continue;
        }
        s.accept_resume_ns = now_ns() + 100000000ull;  // else poll would report it at once
      }
      return;
    }
    if (!peer_ok(fd)) {
      ::close(fd);
      continue;
    }
    Client c{fd, {}, now_ns() + kRequestNs};
    const Got got = read_more(c);
    if (got == Got::complete) {
      handle(s, fd, request_lines(c.buf));
    } else if (got == Got::failed) {
      ::close(fd);
    } else {
      if (s.pending.size() >= kMaxPending) drop_oldest(s);
      s.pending.push_back(std::move(c));
    }
  }
}

// The pending clients poll found readable, then those past their time. Reading comes first:
// a request that arrived in time is answered even when a window's end kept the thread busy
// past its deadline.
void serve_pending(State& s, const std::vector<pollfd>& fds, std::size_t first) {
  std::vector<Client> waiting;
  std::vector<Client> done;
  for (std::size_t i = 0; i < s.pending.size(); ++i) {
    Client& c = s.pending[i];
    const Got got = fds[first + i].revents != 0 ? read_more(c) : Got::more;
    if (got == Got::complete)
      done.push_back(std::move(c));
    else if (got == Got::failed)
      ::close(c.fd);
    else
      waiting.push_back(std::move(c));
  }
  s.pending = std::move(waiting);
  for (const Client& c : done) handle(s, c.fd, request_lines(c.buf));
  const uint64_t now = now_ns();
  std::vector<Client> kept;
  for (Client& c : s.pending) {
    if (now >= c.deadline_ns)
      ::close(c.fd);
    else
      kept.push_back(std::move(c));
  }
  s.pending = std::move(kept);
}

void close_pending(State& s) {
  for (const Client& c : s.pending) ::close(c.fd);
  s.pending.clear();
}

// How long poll may wait: until the window's end, the first client's deadline, or accepting
// again; -1: no limit.
int poll_timeout(const State& s) {
  uint64_t next = s.deadline_ns != 0 ? s.deadline_ns : UINT64_MAX;
  for (const Client& c : s.pending) next = std::min(next, c.deadline_ns);
  if (s.accept_resume_ns != 0) next = std::min(next, s.accept_resume_ns);
  if (next == UINT64_MAX) return -1;
  const uint64_t now = now_ns();
  return now >= next ? 0 : static_cast<int>((next - now) / 1000000 + 1);
}

void serve(State* sp) {
  State& s = *sp;
  if (s.forked) {
    // A fork child that execs at once (subprocess) never gets a socket: its new image arms
    // itself from the environment, and this thread dies with the old one.
    ::usleep(100000);
    s.in_window = session::current() != nullptr;
    if (s.in_window) s.path = session::current_path();
    std::string error;
    if (!private_folder(s.folder, &error) || !bind_socket(s, &error)) {
      say(("pid " + std::to_string(::getpid()) + " cannot be controlled").c_str(), error);
      return;
    }
  }
  std::vector<pollfd> fds;
  for (;;) {
    const int timeout = poll_timeout(s);
    if (s.accept_resume_ns != 0 && now_ns() >= s.accept_resume_ns) s.accept_resume_ns = 0;
    fds.assign({{s.wake[0], POLLIN, 0}, {s.accept_resume_ns == 0 ? s.listen_fd : -1, POLLIN, 0}});
    for (const Client& c : s.pending) fds.push_back({c.fd, POLLIN, 0});
    const int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;
    if (s.deadline_ns != 0 && now_ns() >= s.deadline_ns) {
      reconcile(s);
      if (s.in_window) end_window(s);
    }
    serve_pending(s, fds, 2);
    if (n > 0 && (fds[1].revents & POLLIN)) accept_clients(s);
  }
  close_pending(s);
  if (s.in_window) end_window(s);  // the program is leaving: its window's database completes
  notify_waiters(s, "error the process ended");
}

bool launch(State& s, std::string* error) {
  if (::pipe2(s.wake, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  // The thread takes no signal of the program's (nor the sampler's SIGPROF).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  s.thread = new std::thread(serve, &s);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return true;
}

void after_fork_child() {
  if (!g_armed.load() || g == nullptr) return;
  State& s = *g;
  s.thread = nullptr;  // the parent's, absent here: never joined
  for (int fd : s.waiters) ::close(fd);
  s.waiters.clear();
  close_pending(s);  // the parent's clients, answered by the parent
  s.accept_resume_ns = 0;
  if (s.listen_fd >= 0) ::close(s.listen_fd);  // the parent's socket stays the parent's
  s.listen_fd = -1;
  for (int& fd : s.wake) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  s.windows = s.k;
  s.socket = s.folder + "/" + std::to_string(::getpid()) + ".sock";
  s.forked = true;
  std::string error;
  if (!launch(s, &error)) {
    g_armed.store(false);
    say("fork child not controllable", error);
  }
}

void at_exit() { disarm(); }

}  // namespace

bool peer_allowed(unsigned uid, unsigned self) { return uid == self || uid == 0; }

std::string window_template(const std::string& tmpl, unsigned k) {
  const std::string tag = "_w" + std::to_string(k);
  const std::string suffix = output::kDatabaseSuffix;
  if (tmpl.size() >= suffix.size() &&
      tmpl.compare(tmpl.size() - suffix.size(), suffix.size(), suffix) == 0)
    return tmpl.substr(0, tmpl.size() - suffix.size()) + tag + suffix;
  return tmpl + tag;
}

bool arm(const Config& config, std::string* error) {
  if (g_armed.load()) {
    *error = "on-demand capture is already armed in this process";
    return false;
  }
  std::string path;
  if (!output::expand(config.output_template, config.argv, &path, error)) return false;
  path = output::absolute(path);
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (!output::make_folders(dir, error)) return false;
  auto* s = new State();
  s->base = config;
  s->folder = dir + "/" + kFolder;
  s->socket = s->folder + "/" + std::to_string(::getpid()) + ".sock";
  if (!private_folder(s->folder, error) || !bind_socket(*s, error) || !launch(*s, error)) {
    if (s->listen_fd >= 0) {
      ::close(s->listen_fd);
      ::unlink(s->socket.c_str());
    }
    delete s;
    return false;
  }
  g = s;
  g_armed.store(true);
  if (!g_hooks) {
    g_hooks = true;
    pthread_atfork(nullptr, nullptr, after_fork_child);
    std::atexit(at_exit);
  }
  return true;
}

void disarm() {
  if (!g_armed.exchange(false) || g == nullptr) return;
  State& s = *g;
  if (s.thread != nullptr) {
    const char b = 1;
    while (::write(s.wake[1], &b, 1) < 0 && errno == EINTR) {
    }
    s.thread->join();
    delete s.thread;
    s.thread = nullptr;
  }
  if (s.listen_fd >= 0) {
    ::close(s.listen_fd);
    ::unlink(s.socket.c_str());
  }
  for (int& fd : s.wake) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  s.listen_fd = -1;
}

bool armed() { return g_armed.load(); }

std::string socket_path() { return g_armed.load() && g != nullptr ? g->socket : std::string(); }

}  // namespace rocprof::session::control
