#include "capture/kernel_names.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <initializer_list>

namespace rocprof::kernel_names {

std::string without_kd(std::string_view symbol) {
  if (symbol.size() > 3 && symbol.substr(symbol.size() - 3) == ".kd") symbol.remove_suffix(3);
  return std::string(symbol);
}

std::string demangle(const char* symbol) {
  if (symbol == nullptr) return "";
  int status = 0;
  char* d = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? d : symbol;
  std::free(d);
  return out;
}

namespace {

// Where the bracket group closing at s[end - 1] opens; npos when it is not closed by a bracket
// or does not balance (an operator such as "operator>" ends in a bracket of its own).
size_t group_start(std::string_view s, size_t end) {
  const char close = s[end - 1];
  const char open = close == ')' ? '(' : close == '>' ? '<' : close == ']' ? '[' : '\0';
  if (open == '\0') return std::string_view::npos;
  int depth = 0;
  for (size_t i = end; i-- > 0;) {
    if (s[i] == close)
      ++depth;
    else if (s[i] == open && --depth == 0)
      return i;
  }
  return std::string_view::npos;
}

}  // namespace

std::string truncate(std::string_view s) {
  size_t end = s.size(), group_end = s.size();
  // A member function's qualifiers follow its argument list ("operator()(int) const").
  for (bool cut = true; cut;) {
    cut = false;
    for (std::string_view q : {" const", " volatile", " &&", " &"})
      if (end > q.size() && s.substr(end - q.size(), q.size()) == q) end -= q.size(), cut = true;
  }
  // Right to left: the argument list, template arguments and ABI tags ("[abi:cxx11]") that
  // follow the function's name, and the spaces between them.
  while (end > 0) {
    if (s[end - 1] == ' ') {
      --end;
      continue;
    }
    const size_t open = group_start(s, end);
    if (open == std::string_view::npos) break;
    group_end = end;
    end = open;
  }
  // The name itself: back to the scope operator or the space before it (a return type), over
  // whole lambda names ("{lambda(int, float)#1}").
  size_t begin = end;
  for (int depth = 0; begin > 0; --begin) {
    const char c = s[begin - 1];
    if (c == '}' || c == ')')
      ++depth;
    else if (c == '{' || c == '(')
      --depth;
    else if (depth == 0 && (c == ' ' || c == ':'))
      break;
  }
  // "operator()" and "operator[]": the brackets are the operator's name, not its arguments.
  if (s.substr(begin, end - begin) == "operator") end = group_end;
  if (begin == end) return std::string(s);
  return std::string(s.substr(begin, end - begin));
}

void Filter::clear() {
  if (has_include_) regfree(&include_);
  if (has_exclude_) regfree(&exclude_);
  has_include_ = has_exclude_ = false;
}

bool Filter::compile(const std::string& include, const std::string& exclude,
                     const char* include_option, const char* exclude_option, std::string* why) {
  clear();
  if (!include.empty()) {
    if (regcomp(&include_, include.c_str(), REG_EXTENDED | REG_NOSUB) != 0)
      return *why = std::string(include_option) + " rejected: " + include, false;
    has_include_ = true;
  }
  if (!exclude.empty()) {
    if (regcomp(&exclude_, exclude.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
      clear();
      return *why = std::string(exclude_option) + " rejected: " + exclude, false;
    }
    has_exclude_ = true;
  }
  return true;
}

bool Filter::keeps(const char* demangled) const {
  return !(has_include_ && regexec(&include_, demangled, 0, nullptr, 0) != 0) &&
         !(has_exclude_ && regexec(&exclude_, demangled, 0, nullptr, 0) == 0);
}

bool Naming::configure(const KernelNameSettings& s, std::string* why) {
  truncate_ = s.truncate;
  mangled_ = s.mangled;
  return filter_.compile(s.include, s.exclude, "--trace-kernel-include-regex",
                         "--trace-kernel-exclude-regex", why);
}

Name Naming::name(const char* symbol) const {
  Name out;
  if (symbol == nullptr) symbol = "unknown";
  const std::string demangled = demangle(symbol);
  out.keep = filter_.keeps(demangled.c_str());
  out.display = mangled_ ? std::string(symbol) : truncate_ ? truncate(demangled) : demangled;
  return out;
}

}  // namespace rocprof::kernel_names
