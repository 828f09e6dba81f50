// libunwind-backed native stacks; see native.hpp. Without ROCPROF_HAVE_LIBUNWIND only the
// symbolizer is built (it needs nothing but dladdr).
#include "capture/sampling/native.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "capture/kernel_names.hpp"

#ifdef ROCPROF_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

namespace rocprof::sampling {

#ifdef ROCPROF_HAVE_LIBUNWIND
// libunwind is opened at run time, RTLD_LOCAL, and only when native stacks are asked for.
// Linking it would make it part of the C++ runtime's lookup scope: libunwind exports its own
// _Unwind_RaiseException, libstdc++ can bind to it, and every C++ exception thrown later in
// the process (matplotlib's ft2font, PyTorch) then aborts. Only the three entry points used
// here are looked up; UNW_LOCAL_ONLY maps their names to the _ULx86_64_* symbols.
namespace {
#define ROCPROF_STR2(x) #x
#define ROCPROF_STR(x) ROCPROF_STR2(x)
struct Unwind {
  decltype(&unw_init_local2) init_local2 = nullptr;
  decltype(&unw_get_reg) get_reg = nullptr;
  decltype(&unw_step) step = nullptr;
  bool ok = false;
};

const Unwind& unwind() {
  static const Unwind u = [] {
    Unwind v;
    for (const char* name : {"libunwind.so.8", "libunwind.so"}) {
      void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) continue;
      v.init_local2 =
          reinterpret_cast<decltype(v.init_local2)>(dlsym(lib, ROCPROF_STR(unw_init_local2)));
      v.get_reg = reinterpret_cast<decltype(v.get_reg)>(dlsym(lib, ROCPROF_STR(unw_get_reg)));
      v.step = reinterpret_cast<decltype(v.step)>(dlsym(lib, ROCPROF_STR(unw_step)));
      v.ok = v.init_local2 && v.get_reg && v.step;
      if (v.ok) break;
    }
    return v;
  }();
  return u;
}
}  // namespace

// Called when a session starts (never from the signal handler): loads libunwind once.
bool native_available() { return unwind().ok; }

const char* native_unavailable_reason() {
  if (unwind().ok) return "";
  return "libunwind (libunwind.so.8) could not be opened at run time: install it "
         "(Debian/Ubuntu: apt-get install libunwind8; Fedora/RHEL: dnf install libunwind)";
}

int native_walk(void* ucontext, uint64_t* out, int max) {
  // r_state is RT_ADD/RT_DELETE for the whole time the loader edits its object list (the
  // window in which dl_iterate_phdr's lock is or may be taken); skip native frames then.
  if (_r_debug.r_state != r_debug::RT_CONSISTENT) return 0;
  const Unwind& u = unwind();  // initialised by native_available() before sampling starts
  if (!u.ok) return 0;
  unw_cursor_t cursor;
  if (u.init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) < 0)
    return 0;
  int n = 0;
  do {
    unw_word_t ip = 0;
    if (u.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    out[n++] = ip;
  } while (n < max && u.step(&cursor) > 0);
  return n;
}
#else
bool native_available() { return false; }
const char* native_unavailable_reason() {
  return "built without the libunwind headers: install them (Debian/Ubuntu: apt-get install "
         "libunwind-dev; Fedora/RHEL: dnf install libunwind-devel) and rebuild rocprof";
}
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
    *func = kernel_names::demangle(info.dli_sname);
  } else {
    char buf[48];
    std::snprintf(buf, sizeof buf, "+0x%llx",
                  static_cast<unsigned long long>(ip - reinterpret_cast<uint64_t>(info.dli_fbase)));
    const char* base = std::strrchr(file->c_str(), '/');
    *func = std::string(base ? base + 1 : file->c_str()) + buf;
  }
}

}  // namespace rocprof::sampling
