// Secrets never reach a database: the one set of rules for every text the writer stores
// (README "Secrets"). The session applies it to the command line and the environment when it
// collects them (session/system_info.cpp); the sink applies it to every recorded string (ROCTx
// messages, thread and stream names) as it writes it, off the producers' hot path; the Python
// side reaches it through rocprof._core (redact_argv, redact_text).
//
//   by name  an environment variable whose name holds a secret word (secret_name); a command
//            line flag or NAME=VALUE word naming a secret (--password, --token=..., --api-key,
//            db.password=...: secret_flag) has its value cut; -p only before (or joined to) a
//            value that looks like a password.
//   by shape URL credentials (scheme://user:<redacted>@host), tokens whose format announces
//            them (GitHub, GitLab, Slack, AWS, Google, Hugging Face, npm, PyPI, OpenAI-style
//            sk-, JWTs), Bearer/Basic credentials, and a command-line word or environment
//            value that is itself a long key.
//
// Recorded text gets the shapes that cannot be ordinary words (URL credentials and tokens);
// `--no-redact` keeps it as written. The command line and environment are always redacted.
// Every function returns how many values it cut; metadata stores those counts, never values.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rocprof::redact {

inline constexpr std::string_view kMark = "<redacted>";

// An environment variable name that holds a secret (its whole value is cut).
bool secret_name(std::string_view name);
// A flag or setting name whose value is a secret: "--password", "api-key", "db.password",
// "HF_TOKEN" (dashes, dots and case do not matter; --max-tokens and --tokenizer do not count).
bool secret_flag(std::string_view name);
// A whole value that is a long key: 48+ hex digits, or 40+ base64 characters mixing upper
// case, lower case and digits.
bool looks_like_key(std::string_view value);

// Recorded text (ROCTx messages, names): URL credentials and announced tokens cut. Returns
// the number of cuts; *out is the redacted text when it is not 0 (untouched otherwise, so the
// common case allocates nothing).
std::size_t text(std::string_view in, std::string* out);
// One environment value or command-line word: a long key whole, else every shape (the text
// shapes and Bearer/Basic credentials), in place.
std::size_t value(std::string& v);
// A command line, word by word, in place: flags and NAME=VALUE words by name, -p by its
// value's look, then each word by value.
std::size_t argv(std::vector<std::string>& words);
// A value that may itself be a command line (SUDO_COMMAND, a shell's history variable):
// argv() on its space-separated words, then value().
std::size_t command_text(std::string& v);

}  // namespace rocprof::redact
