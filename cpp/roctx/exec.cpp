// exec*() in native programs: the session's database is closed before the new image replaces
// the process (what was still buffered would vanish with it, and the file would stay
// "in-progress" with its -wal), and recording resumes if the exec fails. The new image starts
// its own session (ROCPROF_AUTOSTART_OUTPUT is in its environment).
//
// These definitions interpose on libc's for the program and the libraries that resolve
// symbols after the library holding them. Built into two: libroctx64, for programs linked with
// it (before libc: `cc app.c -lroctx64`); librocprof_exec, which `rocprof run -- CMD` preloads,
// for the others, whose session a library outside the program's own symbol lookup started (the
// CUDA driver's or HSA runtime's injected tool, libroctx64 opened with dlopen or ctypes). What
// happens around the real exec is exec_hooks.hpp's. Python's os.exec* are also wrapped by
// rocprof.session (it names the run's databases first).
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "roctx/exec_hooks.hpp"

// No C++ runtime here (no static locals with guards, no containers): librocprof_exec, preloaded
// into every process of a command, links only libc.
namespace {

template <class Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

template <class Call>
int closing_first(Call&& call) {
  rocprof::exec_hooks::before();
  const int rc = call();
  const int saved = errno;
  rocprof::exec_hooks::after_failed();
  errno = saved;
  return rc;
}

// The variadic forms' arguments up to the terminating null pointer (consumed too, so that
// execle's environment comes next), in memory of their own: released when the exec fails,
// gone with the image when it succeeds.
char** arguments(const char* first, va_list ap) {
  size_t n = 0;  // pointers before the terminator
  if (first != nullptr) {
    va_list count;
    va_copy(count, ap);
    for (n = 1; va_arg(count, char*) != nullptr;) ++n;
    va_end(count);
  }
  char** argv = static_cast<char**>(malloc((n + 1) * sizeof(char*)));
  if (argv == nullptr) return nullptr;
  argv[0] = const_cast<char*>(first);
  for (size_t i = 1; i <= n; ++i) argv[i] = va_arg(ap, char*);  // argv[n]: the terminator
  return argv;
}

int failed_exec(char** argv, int rc) {
  const int saved = errno;
  free(argv);
  errno = saved;
  return rc;
}

using ExecVE = int (*)(const char*, char* const[], char* const[]);
using ExecV = int (*)(const char*, char* const[]);
using FExecVE = int (*)(int, char* const[], char* const[]);

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                  char* const envp[]) {
  return closing_first([&] { return next<ExecVE>("execve")(path, argv, envp); });
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  return closing_first([&] { return next<ExecV>("execv")(path, argv); });
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  return closing_first([&] { return next<ExecV>("execvp")(file, argv); });
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                   char* const envp[]) {
  return closing_first([&] { return next<ExecVE>("execvpe")(file, argv, envp); });
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  return closing_first([&] { return next<FExecVE>("fexecve")(fd, argv, envp); });
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char** argv = arguments(arg, ap);
  va_end(ap);
  if (argv == nullptr) return -1;  // ENOMEM
  return failed_exec(argv, execv(path, argv));
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char** argv = arguments(arg, ap);
  va_end(ap);
  if (argv == nullptr) return -1;  // ENOMEM
  return failed_exec(argv, execvp(file, argv));
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char** argv = arguments(arg, ap);
  char* const* envp = argv != nullptr ? va_arg(ap, char* const*) : nullptr;
  va_end(ap);
  if (argv == nullptr) return -1;  // ENOMEM
  return failed_exec(argv, execve(path, argv, envp));
}

}  // extern "C"
