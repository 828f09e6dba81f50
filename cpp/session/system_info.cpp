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

#include "rocprof/json.hpp"

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

}  // namespace

// The rule (README "Secrets"): a variable is redacted whole when its name holds a secret
// word, ends in _PAT (personal access tokens: GITHUB_PAT, ADO_PAT), or belongs to a cloud
// provider's SDK (AWS_*, AZURE_*, GOOGLE_*, ... except *_REGION); any other value, and the
// command line, keep their text with credentials cut out (see redact_value).
bool looks_secret(const std::string& name) {
  std::string up(name);
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const char* word : {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
                           "CREDENTIAL", "AUTH", "COOKIE", "PRIVATE", "SIGNATURE", "SESSION_ID",
                           "CONNECTION_STRING", "_PAT_", "DSN", "_SAS"}) {
    if (up.find(word) != std::string::npos) return true;
  }
  if (up == "PAT" || (up.size() > 4 && up.compare(up.size() - 4, 4, "_PAT") == 0)) return true;
  const bool region = up.size() > 7 && up.compare(up.size() - 7, 7, "_REGION") == 0;
  for (const char* cloud : {"AWS_", "AZURE_", "ARM_", "GOOGLE_", "GCP_", "GCLOUD_", "CLOUDSDK_",
                            "OCI_", "ALIBABA_CLOUD_", "ALICLOUD_", "DIGITALOCEAN_", "HCLOUD_",
                            "LINODE_", "IBMCLOUD_", "OS_PASSWORD", "OS_APPLICATION_CREDENTIAL"}) {
    if (up.rfind(cloud, 0) == 0 && !region) return true;
  }
  return false;
}

namespace {

const std::string kRedacted = "<redacted>";

bool token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == '+' || c == '/' || c == '=' || c == '~';
}

// scheme://user:password@host → scheme://user:<redacted>@host, every URL in the text.
void redact_url_passwords(std::string& s) {
  for (std::size_t at = s.find("://"); at != std::string::npos; at = s.find("://", at + 3)) {
    const std::size_t begin = at + 3;
    std::size_t end = begin;
    while (end < s.size() && s[end] != '/' && s[end] != '@' &&
           !std::isspace(static_cast<unsigned char>(s[end])) && s[end] != '"' && s[end] != '\'')
      ++end;
    // The password may hold '/' or '@' only percent-encoded, so the first '@' ends it.
    if (end >= s.size() || s[end] != '@') continue;
    const std::size_t colon = s.find(':', begin);
    if (colon == std::string::npos || colon >= end) continue;
    s.replace(colon + 1, end - colon - 1, kRedacted);
    at = colon;
  }
}

// "Bearer xyz", "Basic xyz", "token xyz" (HTTP Authorization values, curl -H lines).
void redact_auth_schemes(std::string& s) {
  for (const char* scheme : {"Bearer ", "bearer ", "BEARER ", "Basic ", "basic "}) {
    const std::size_t len = std::strlen(scheme);
    for (std::size_t at = s.find(scheme); at != std::string::npos; at = s.find(scheme, at + len)) {
      std::size_t end = at + len;
      while (end < s.size() && token_char(s[end])) ++end;
      if (end - (at + len) >= 8) s.replace(at + len, end - at - len, kRedacted);
    }
  }
}

// Tokens whose format announces them: GitHub (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), GitLab
// (glpat-), Slack (xox?-), OpenAI and Anthropic (sk-), Hugging Face (hf_), npm (npm_), PyPI
// (pypi-), AWS access key ids (AKIA/ASIA), Google API keys (AIza), JWTs (eyJ...).
void redact_known_tokens(std::string& s) {
  static const char* kPrefixes[] = {
      "ghp_",  "gho_",  "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-",
      "xoxr-", "xoxs-", "sk-",  "hf_",  "npm_", "pypi-",       "AKIA",   "ASIA",  "AIza",  "eyJ"};
  for (const char* prefix : kPrefixes) {
    const std::size_t len = std::strlen(prefix);
    for (std::size_t at = s.find(prefix); at != std::string::npos; at = s.find(prefix, at + 1)) {
      if (at > 0 && std::isalnum(static_cast<unsigned char>(s[at - 1]))) continue;  // inside a word
      std::size_t end = at;
      while (end < s.size() && token_char(s[end]) && s[end] != '/') ++end;
      if (end - at >= len + 16) s.replace(at, end - at, kRedacted);
    }
  }
}

// A whole value that is a long key: 48+ hex digits, or 40+ base64 characters mixing upper
// case, lower case and digits (a path or a word list does not look like that).
bool looks_like_key(const std::string& v) {
  if (v.size() >= 48 &&
      std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isxdigit(c); }))
    return true;
  if (v.size() < 40) return false;
  bool upper = false, lower = false, digit = false;
  std::size_t i = 0;
  for (; i < v.size() && v[i] != '='; ++i) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (std::isupper(c))
      upper = true;
    else if (std::islower(c))
      lower = true;
    else if (std::isdigit(c))
      digit = true;
    else if (c != '+' && c != '/' && c != '_' && c != '-')
      return false;
  }
  for (; i < v.size(); ++i)
    if (v[i] != '=') return false;
  return upper && lower && digit;
}

}  // namespace

std::string redact_value(std::string value) {
  // A value too long to scan cheaply is not kept at all.
  if (value.size() > 65536) return "<redacted: longer than 64 KiB>";
  if (looks_like_key(value)) return kRedacted;
  redact_url_passwords(value);
  redact_auth_schemes(value);
  redact_known_tokens(value);
  return value;
}

std::string redacted_environment_json() {
  std::string out = "{";
  bool first = true;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = kv.substr(0, eq);
    if (!first) out.push_back(',');
    first = false;
    json_escape_into(out, name);
    out.push_back(':');
    json_escape_into(
        out, looks_secret(name) ? std::string("<redacted>") : redact_value(kv.substr(eq + 1)));
  }
  out.push_back('}');
  return out;
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
  info.pid = static_cast<uint32_t>(getpid());
  info.ppid = static_cast<uint32_t>(getppid());
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
  std::string cmd = read_file("/proc/self/cmdline");
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  std::replace(cmd.begin(), cmd.end(), '\0', ' ');
  info.command = redact_value(cmd);
  info.environment_json = redacted_environment_json();
  // Field 22 of /proc/self/stat: start time in clock ticks since boot — BOOTTIME already.
  const std::string stat = read_file("/proc/self/stat");
  const auto rparen = stat.rfind(')');
  if (rparen != std::string::npos) {
    std::istringstream fields(stat.substr(rparen + 2));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i) {
      if (i == 22) {
        const long hz = sysconf(_SC_CLK_TCK);
        info.process_start_ns = std::stoull(field) * (1000000000ull / static_cast<uint64_t>(hz));
      }
    }
  }
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      info.cpu_model = trim(line.substr(line.find(':') + 2));
      break;
    }
  }
  if (info.cpu_model.empty()) info.cpu_model = info.machine;
}

}  // namespace rocprof
