#include "system_info.hpp"

#include <sys/random.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "rocprof/json.hpp"
#include "storage/redact.hpp"

extern char** environ;

namespace rocprof {
namespace {

std::string read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// `entries` ("NAME=value" each) as a JSON object, secrets cut out (storage/redact.hpp): a
// variable whose name holds a secret loses its whole value; any other value keeps its text
// with credentials cut (a value may itself be a command line: SUDO_COMMAND). *cuts counts what
// was cut.
std::string environment_json(const std::vector<std::string>& entries, std::size_t* cuts) {
  std::string out = "{";
  bool first = true;
  for (const std::string& kv : entries) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = kv.substr(0, eq);
    std::string value = kv.substr(eq + 1);
    if (redact::secret_name(name)) {
      if (!value.empty()) ++*cuts;
      value = std::string(redact::kMark);
    } else {
      *cuts += redact::command_text(value);
    }
    if (!first) out.push_back(',');
    first = false;
    json_escape_into(out, name);
    out.push_back(':');
    json_escape_into(out, value);
  }
  out.push_back('}');
  return out;
}

// A /proc file of NUL-separated words (cmdline, environ).
std::vector<std::string> nul_words(const std::string& path) {
  const std::string text = read_file(path.c_str());
  std::vector<std::string> words;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\0', at), text.size());
    words.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return words;
}

// Fields 4 (ppid) and 22 (start time in clock ticks since boot: BOOTTIME already) of
// /proc/<proc>/stat.
void stat_fields(const std::string& proc, uint32_t* ppid, uint64_t* start_ns) {
  const std::string stat = read_file(("/proc/" + proc + "/stat").c_str());
  const auto rparen = stat.rfind(')');
  if (rparen == std::string::npos) return;
  std::istringstream fields(stat.substr(rparen + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 4 && ppid != nullptr) *ppid = static_cast<uint32_t>(std::stoul(field));
    if (i == 22) {
      const long hz = sysconf(_SC_CLK_TCK);
      *start_ns = std::stoull(field) * (1000000000ull / static_cast<uint64_t>(hz));
    }
  }
}

void node_info(SessionInfo& info) {
  utsname u{};
  if (uname(&u) == 0) {
    info.system_name = u.sysname;
    info.hostname = u.nodename;
    info.release = u.release;
    info.version = u.version;
    info.machine = u.machine;
#ifdef _GNU_SOURCE
    info.domain_name = u.domainname;
#endif
  }
  info.machine_id = trim(read_file("/etc/machine-id"));
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      info.cpu_model = trim(line.substr(line.find(':') + 2));
      break;
    }
  }
  if (info.cpu_model.empty()) info.cpu_model = info.machine;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  info.cpu_cores = cores > 0 ? static_cast<uint32_t>(cores) : 0;
}

// The command line word by word (a flag's value is the next word), then joined.
void command_info(const std::string& proc, SessionInfo& info) {
  std::vector<std::string> words = nul_words("/proc/" + proc + "/cmdline");
  info.redacted_command = redact::argv(words);
  info.command.clear();
  for (const std::string& w : words) info.command += (info.command.empty() ? "" : " ") + w;
}

}  // namespace

std::string redacted_environment_json(std::size_t* cuts) {
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e) entries.emplace_back(*e);
  return environment_json(entries, cuts);
}

std::string make_uuid_v7() {
  unsigned char b[16];
  if (getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    // getrandom cannot fail for 16 bytes once the pool is up; mix the clock in regardless.
    const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
    for (int i = 0; i < 16; ++i) b[i] ^= static_cast<unsigned char>(t >> ((i % 8) * 8)) ^ getpid();
  }
  const uint64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (int i = 0; i < 6; ++i) b[i] = static_cast<unsigned char>(ms >> (40 - 8 * i));
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x70);  // version 7
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

void fill_system_info(SessionInfo& info) {
  node_info(info);
  info.pid = static_cast<uint32_t>(getpid());
  info.ppid = static_cast<uint32_t>(getppid());
  command_info("self", info);
  info.environment_json = redacted_environment_json(&info.redacted_environment);
  stat_fields("self", nullptr, &info.process_start_ns);
}

void fill_system_info(SessionInfo& info, uint32_t pid) {
  node_info(info);
  const std::string proc = std::to_string(pid);
  info.pid = pid;
  command_info(proc, info);
  // The environment the process started with (/proc/<pid>/environ: what it set since is in
  // its own memory only).
  info.environment_json =
      environment_json(nul_words("/proc/" + proc + "/environ"), &info.redacted_environment);
  stat_fields(proc, &info.ppid, &info.process_start_ns);
}

}  // namespace rocprof
