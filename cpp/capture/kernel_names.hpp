// Kernel names, the same for every backend: the demangled name rocpd shows and the kernel
// filters match, its truncated form (-T/--truncate-kernels) and the mangled symbol
// (-M/--mangled-kernels). Off the hot path: a backend names each kernel symbol once.
#pragma once
#include <regex.h>

#include <string>
#include <string_view>

#include "capture/settings.hpp"

namespace rocprof::kernel_names {

// A kernel's symbol as the HSA runtime and rocprofiler-sdk name it, without the ".kd" suffix
// of code object v3+ kernel descriptors (the name rocpd stores as kernel_name).
std::string without_kd(std::string_view symbol);

// The symbol demangled by the C++ ABI; the symbol itself when it is no mangled C++ name
// (extern "C" kernels, Triton's, names a runtime already demangled).
std::string demangle(const char* symbol);

// rocprofv3's --truncate-kernels: the function's own name, without return type, scope,
// template arguments, argument list or ABI tags, so that
//   "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,
//    std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
// becomes "vectorized_elementwise_kernel". A call operator keeps its brackets ("operator()"),
// a lambda its braces ("{lambda(int)#1}"); a name with nothing left is returned whole.
std::string truncate(std::string_view demangled);

// An include/exclude pair of POSIX extended regular expressions (glibc's; the dialect the
// command line and rocpd.regex check) matched against demangled names. POSIX regex, not
// std::regex: std::regex instantiates libstdc++ locale facets as STB_GNU_UNIQUE symbols that
// bind process-wide and crashed PyTorch's import (H200).
class Filter {
 public:
  Filter() = default;
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;
  ~Filter() { clear(); }
  // Compiles the patterns ("" for none). A rejected pattern leaves the filter keeping every
  // name and returns false with `why` naming the option (include_option / exclude_option).
  bool compile(const std::string& include, const std::string& exclude, const char* include_option,
               const char* exclude_option, std::string* why);
  void clear();
  bool any() const { return has_include_ || has_exclude_; }
  bool has_include() const { return has_include_; }
  // Whether a kernel of this demangled name is kept: it matches the include pattern (when
  // there is one) and not the exclude pattern.
  bool keeps(const char* demangled) const;

 private:
  bool has_include_ = false, has_exclude_ = false;
  regex_t include_{}, exclude_{};
};

struct Name {
  bool keep = true;     // passes the --trace-kernel-include/exclude-regex filter
  std::string display;  // rocpd_info_kernel_symbol.display_name
};

// A session's naming of kernel symbols: KernelNameSettings compiled once.
class Naming {
 public:
  bool configure(const KernelNameSettings& s, std::string* why);
  // `symbol` as the runtime names it (mangled for C++ kernels; HSA's ".kd" suffix cut).
  Name name(const char* symbol) const;

 private:
  bool truncate_ = false, mangled_ = false;
  Filter filter_;
};

}  // namespace rocprof::kernel_names
