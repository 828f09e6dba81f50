// libunwind-backed native stacks; see native.hpp. Without ROCPROF_HAVE_LIBUNWIND only the
// symbolizer is built (it needs nothing but dladdr).
#include "capture/sampling/native.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef ROCPROF_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

namespace rocprof::sampling {

#ifdef ROCPROF_HAVE_LIBUNWIND
bool native_available() { return true; }

int native_walk(void* ucontext, uint64_t* out, int max) {
  // r_state is RT_ADD/RT_DELETE for the whole time the loader edits its object list (the
  // window in which dl_iterate_phdr's lock is or may be taken); skip native frames then.
  if (_r_debug.r_state != r_debug::RT_CONSISTENT) return 0;
  unw_cursor_t cursor;
  if (unw_init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) < 0)
    return 0;
  int n = 0;
  do {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    out[n++] = ip;
  } while (n < max && unw_step(&cursor) > 0);
  return n;
}
#else
bool native_available() { return false; }
int native_walk(void*, uint64_t*, int) { return 0; }
#endif

void native_symbol(uint64_t ip, std::string* func, std::string* file) {
  Dl_info info{};
  // ip - 1: a return address may already belong to the next function.
  if (dladdr(reinterpret_cast<void*>(ip - 1), &info) == 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(ip));
    *func = buf;
    *file = "<unknown>";
    return;
  }
  *file = info.dli_fname ? info.dli_fname : "<unknown>";
  if (info.dli_sname != nullptr) {
    int status = 0;
    char* dem = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    *func = (status == 0 && dem) ? dem : info.dli_sname;
    std::free(dem);
  } else {
    char buf[48];
    std::snprintf(buf, sizeof buf, "+0x%llx",
                  static_cast<unsigned long long>(ip - reinterpret_cast<uint64_t>(info.dli_fbase)));
    const char* base = std::strrchr(file->c_str(), '/');
    *func = std::string(base ? base + 1 : file->c_str()) + buf;
  }
}

}  // namespace rocprof::sampling
