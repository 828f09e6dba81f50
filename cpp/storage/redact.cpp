#include "redact.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace rocprof::redact {
namespace {

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Character classes of a candidate: upper case, lower case, digit, other.
struct Classes {
  bool upper = false, lower = false, digit = false, other = false;
  int count() const { return upper + lower + digit + other; }
};
Classes classes_of(std::string_view s, std::string_view plain_others) {
  Classes c;
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (std::isupper(u))
      c.upper = true;
    else if (std::islower(u))
      c.lower = true;
    else if (std::isdigit(u))
      c.digit = true;
    else if (plain_others.find(ch) == std::string_view::npos)
      c.other = true;
  }
  return c;
}

// ---- names ----------------------------------------------------------------------------

std::vector<std::string> words_of(std::string_view name) {
  std::string n;
  for (char c : name) {
    if (n.empty() && (c == '-' || c == '+' || c == '~')) continue;  // --flag, +hydra.key
    n.push_back(c == '-' || c == '.' || c == ' '
                    ? '_'
                    : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  std::vector<std::string> words;
  std::size_t at = 0;
  while (at <= n.size()) {
    const std::size_t end = std::min(n.find('_', at), n.size());
    if (end > at) words.push_back(n.substr(at, end - at));
    at = end + 1;
  }
  return words;
}

bool in(const std::string& w, std::initializer_list<const char*> list) {
  for (const char* x : list)
    if (w == x) return true;
  return false;
}

// ---- shapes ---------------------------------------------------------------------------

enum Charset : unsigned { kAlnum = 1, kUnderscore = 2, kDash = 4, kUpperDigit = 8 };

struct TokenShape {
  const char* prefix;
  std::size_t min_body;  // characters after the prefix
  unsigned charset;
  bool exact = false;   // exactly min_body characters (AWS key ids)
  int min_classes = 1;  // of upper/lower/digit in the body: random, not a word
};

// Tokens whose format announces them. Bodies are what each issuer hands out, so that an
// identifier that merely starts the same way (hf_model_forward, sk-learn-runs) stays.
const TokenShape kTokens[] = {
    {"ghp_", 30, kAlnum},  // GitHub: personal, OAuth, user-to-server, server, refresh
    {"gho_", 30, kAlnum},
    {"ghu_", 30, kAlnum},
    {"ghs_", 30, kAlnum},
    {"ghr_", 30, kAlnum},
    {"github_pat_", 40, kAlnum | kUnderscore},     // GitHub fine-grained
    {"glpat-", 20, kAlnum | kUnderscore | kDash},  // GitLab personal
    {"gldt-", 20, kAlnum | kUnderscore | kDash},   // GitLab deploy
    {"glrt-", 20, kAlnum | kUnderscore | kDash},   // GitLab runner
    {"xoxb-", 10, kAlnum | kDash, false, 2},       // Slack bot, user, app, refresh, ...
    {"xoxp-", 10, kAlnum | kDash, false, 2},
    {"xoxa-", 10, kAlnum | kDash, false, 2},
    {"xoxr-", 10, kAlnum | kDash, false, 2},
    {"xoxs-", 10, kAlnum | kDash, false, 2},
    {"xoxe-", 10, kAlnum | kDash, false, 2},
    {"AKIA", 16, kUpperDigit, true},  // AWS access key ids
    {"ASIA", 16, kUpperDigit, true},
    {"AIza", 30, kAlnum | kUnderscore | kDash},           // Google API keys
    {"hf_", 30, kAlnum, false, 2},                        // Hugging Face
    {"npm_", 30, kAlnum, false, 2},                       // npm
    {"pypi-", 50, kAlnum | kUnderscore | kDash},          // PyPI
    {"sk-", 32, kAlnum | kUnderscore | kDash, false, 2},  // OpenAI, Anthropic and alike
};
// The first letters of the prefixes above and of a JWT's "eyJ": a position starting with no
// other letter is passed over without comparing prefixes (every process's environment and
// command line are scanned before its program starts).
constexpr const char* kTokenFirstLetters = "gxAhnpse";

bool body_char(char c, unsigned charset) {
  const auto u = static_cast<unsigned char>(c);
  if (charset & kUpperDigit) return std::isupper(u) || std::isdigit(u);
  return ((charset & kAlnum) && alnum(c)) || ((charset & kUnderscore) && c == '_') ||
         ((charset & kDash) && c == '-');
}

// End of a token of `shape` starting at `at` (its prefix already matched), or 0.
std::size_t token_end(const std::string& s, std::size_t at, const TokenShape& shape) {
  const std::size_t body = at + std::strlen(shape.prefix);
  std::size_t end = body;
  while (end < s.size() && body_char(s[end], shape.charset)) ++end;
  const std::size_t n = end - body;
  if (n < shape.min_body || (shape.exact && n != shape.min_body)) return 0;
  if (end < s.size() && alnum(s[end])) return 0;  // part of a longer word
  if (classes_of(std::string_view(s).substr(body, n), "_-").count() < shape.min_classes) return 0;
  return end;
}

bool b64url(char c) { return alnum(c) || c == '_' || c == '-'; }

// A JWT: base64url header "eyJ..." '.' payload '.' signature (the signature may be empty).
std::size_t jwt_end(const std::string& s, std::size_t at) {
  std::size_t end = at, dots = 0, segment = 0;
  for (; end < s.size(); ++end) {
    if (b64url(s[end])) {
      ++segment;
    } else if (s[end] == '.' && segment >= 8 && dots < 2) {
      ++dots;
      segment = 0;
    } else {
      break;
    }
  }
  return dots >= 1 && (dots == 2 || segment >= 8) ? end : 0;
}

bool word_start(const std::string& s, std::size_t i) { return i == 0 || !alnum(s[i - 1]); }

std::size_t cut_tokens(std::string& s) {
  std::size_t cuts = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\0' || std::strchr(kTokenFirstLetters, s[i]) == nullptr || !word_start(s, i))
      continue;
    std::size_t end = 0;
    if (s.compare(i, 3, "eyJ") == 0) end = jwt_end(s, i);
    for (const TokenShape& t : kTokens) {
      if (end != 0) break;
      // The first letter first: words starting with e, n, p or s are everywhere (a followed
      // child's environment holds its session's options), and comparing every prefix at each
      // cost a child a million instructions.
      if (t.prefix[0] == s[i] && s.compare(i, std::strlen(t.prefix), t.prefix) == 0)
        end = token_end(s, i, t);
    }
    if (end == 0) continue;
    s.replace(i, end - i, kMark);
    ++cuts;
    i += kMark.size() - 1;
  }
  return cuts;
}

// scheme://user:password@host → scheme://user:<redacted>@host, every URL in the text.
std::size_t cut_url_passwords(std::string& s) {
  std::size_t cuts = 0;
  for (std::size_t at = s.find("://"); at != std::string::npos; at = s.find("://", at + 3)) {
    const std::size_t begin = at + 3;
    std::size_t end = begin;
    while (end < s.size() && s[end] != '/' && s[end] != '@' && !space(s[end]) && s[end] != '"' &&
           s[end] != '\'')
      ++end;
    // The password may hold '/' or '@' only percent-encoded, so the first '@' ends it.
    if (end >= s.size() || s[end] != '@') continue;
    const std::size_t colon = s.find(':', begin);
    if (colon == std::string::npos || colon >= end || colon + 1 == end) continue;
    if (std::string_view(s).substr(colon + 1, end - colon - 1) == kMark) continue;
    s.replace(colon + 1, end - colon - 1, kMark);
    ++cuts;
    at = colon;
  }
  return cuts;
}

bool credential_char(char c) {
  return alnum(c) || c == '_' || c == '-' || c == '.' || c == '+' || c == '/' || c == '=' ||
         c == '~';
}

// "Bearer xyz", "Basic xyz" (HTTP Authorization values, curl -H lines): a credential, not a
// word ("Basic training" stays).
std::size_t cut_auth_schemes(std::string& s) {
  std::size_t cuts = 0;
  for (const char* scheme : {"Bearer ", "bearer ", "BEARER ", "Basic ", "basic "}) {
    const std::size_t len = std::strlen(scheme);
    for (std::size_t at = s.find(scheme); at != std::string::npos; at = s.find(scheme, at + len)) {
      std::size_t end = at + len;
      while (end < s.size() && credential_char(s[end])) ++end;
      const std::string_view cred = std::string_view(s).substr(at + len, end - at - len);
      if (cred.size() < 12 || cred == kMark) continue;
      const Classes c = classes_of(cred, "");
      if (c.upper + c.lower + c.digit < 2) continue;
      s.replace(at + len, cred.size(), kMark);
      ++cuts;
    }
  }
  return cuts;
}

// What a -p value looks like when it is a password: a policy-shaped one (8+ characters, three
// of upper/lower/digit/symbol), or a key.
bool looks_like_password(std::string_view v) {
  if (v.empty() || v[0] == '-' || v == kMark) return false;
  if (looks_like_key(v)) return true;
  if (v.size() < 8 || std::any_of(v.begin(), v.end(), space)) return false;
  return classes_of(v, "_-./:").count() >= 3;
}

bool identifier(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return alnum(c) || c == '_' || c == '.' || c == '-' || c == '+' || c == '~';
  });
}

}  // namespace

bool secret_name(std::string_view name) {
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

bool secret_flag(std::string_view name) {
  const std::vector<std::string> w = words_of(name);
  bool token = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (in(w[i], {"password", "passwd", "passphrase", "secret", "credential", "credentials",
                  "apikey", "accesskey", "secretkey", "privatekey", "authkey"}))
      return true;
    if (i + 1 < w.size() && w[i + 1] == "key" && in(w[i], {"api", "access", "private", "auth"}))
      return true;
    if (w[i] == "token") token = true;
  }
  if (!token) return false;
  // A count or a vocabulary entry, not a credential: --max-token, --pad-token, --token-type-ids.
  for (const std::string& x : w)
    if (in(x, {"max",     "min",   "num",    "n",     "count",     "per",       "limit",
               "budget",  "len",   "length", "size",  "batch",     "total",     "new",
               "prompt",  "top",   "id",     "ids",   "type",      "types",     "vocab",
               "special", "pad",   "bos",    "eos",   "sep",       "unk",       "mask",
               "cls",     "start", "end",    "level", "embedding", "embeddings"}))
      return false;
  return true;
}

bool looks_like_key(std::string_view v) {
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

std::size_t text(std::string_view in, std::string* out) {
  // Nothing to cut unless a URL or a token's first letters are there: most text is looked at
  // without a copy.
  bool candidate = in.find("://") != std::string_view::npos;
  for (std::size_t i = 0; !candidate && i < in.size(); ++i)
    candidate = (i == 0 || !alnum(in[i - 1])) &&
                std::strchr(kTokenFirstLetters, in[i]) != nullptr && in[i] != '\0';
  if (!candidate) return 0;
  std::string s(in);
  const std::size_t cuts = cut_url_passwords(s) + cut_tokens(s);
  if (cuts != 0) *out = std::move(s);
  return cuts;
}

std::size_t value(std::string& v) {
  // A value too long to scan cheaply is not kept at all.
  if (v.size() > 65536) {
    v = "<redacted: longer than 64 KiB>";
    return 1;
  }
  if (v == kMark) return 0;
  if (looks_like_key(v)) {
    v = std::string(kMark);
    return 1;
  }
  return cut_url_passwords(v) + cut_auth_schemes(v) + cut_tokens(v);
}

std::size_t argv(std::vector<std::string>& words) {
  std::size_t cuts = 0;
  auto cut = [&](std::string& w, std::size_t from) {
    if (w.size() > from && std::string_view(w).substr(from) != kMark) {
      w.replace(from, std::string::npos, kMark);
      ++cuts;
    }
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string& w = words[i];
    const std::size_t eq = w.find('=');
    const std::string_view name = std::string_view(w).substr(0, eq);
    const bool has_next = i + 1 < words.size();
    if (w.size() > 1 && w[0] == '-') {
      if (name == "-p") {  // -p VALUE, -p=VALUE: only a value that looks like a password
        if (eq != std::string::npos) {
          if (looks_like_password(std::string_view(w).substr(eq + 1))) cut(w, eq + 1);
        } else if (has_next && looks_like_password(words[i + 1])) {
          cut(words[i + 1], 0);
        }
      } else if (w.size() > 2 && w[1] == 'p' && eq == std::string::npos &&
                 looks_like_password(std::string_view(w).substr(2))) {
        cut(w, 2);  // -pVALUE, as mysql takes it
      } else if (secret_flag(name)) {
        if (eq != std::string::npos)
          cut(w, eq + 1);
        else if (has_next && words[i + 1].rfind("--", 0) != 0)
          cut(words[i + 1], 0);
      }
    } else if (eq != std::string::npos && eq > 0 && identifier(name) &&
               (secret_flag(name) || secret_name(name))) {
      cut(w, eq + 1);  // NAME=VALUE: an environment assignment, a Hydra-style override
    }
  }
  for (std::string& w : words) {
    // A word with a '/' is a path far more often than a key: only its shapes count.
    const std::size_t eq = w[0] == '-' ? w.find('=') : std::string::npos;
    if (eq != std::string::npos && looks_like_key(std::string_view(w).substr(eq + 1)))
      cut(w, eq + 1);
    else if (w.find('/') != std::string::npos)
      cuts += cut_url_passwords(w) + cut_auth_schemes(w) + cut_tokens(w);
    else
      cuts += value(w);
  }
  return cuts;
}

std::size_t command_text(std::string& v) {
  if (v.find(' ') == std::string::npos) return value(v);
  std::vector<std::string> words;
  for (std::size_t at = 0;;) {
    const std::size_t end = v.find(' ', at);
    words.push_back(v.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  std::size_t cuts = argv(words);
  if (cuts == 0) return value(v);  // shapes spanning words ("Bearer xyz")
  v.clear();
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i) v.push_back(' ');
    v += words[i];
  }
  return cuts + cut_auth_schemes(v);
}

}  // namespace rocprof::redact
