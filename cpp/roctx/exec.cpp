// exec*() in native programs linked with libroctx64: the session's database is closed before
// the new image replaces the process (what was still buffered would vanish with it, and the
// file would stay "in-progress" with its -wal), and recording resumes if the exec fails. The
// new image starts its own session (ROCPROF_AUTOSTART_OUTPUT is in its environment).
//
// These definitions interpose on libc's for the program and the libraries that resolve
// symbols after libroctx64 (it is linked before libc: `cc app.c -lroctx64`). A library that
// opens libroctx64 itself (dlopen, ctypes) keeps libc's exec: Python's os.exec* are wrapped
// by rocprof.session instead.
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include <vector>

#include "session/session.hpp"

namespace {

template <class Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

template <class Call>
int closing_first(Call&& call) {
  rocprof::session::before_exec();
  const int rc = call();
  const int saved = errno;
  rocprof::session::after_failed_exec();
  errno = saved;
  return rc;
}

// The variadic forms' arguments, up to the terminating null pointer.
std::vector<char*> arguments(const char* first, va_list ap) {
  std::vector<char*> argv{const_cast<char*>(first)};
  while (argv.back() != nullptr) argv.push_back(va_arg(ap, char*));
  return argv;
}

using ExecVE = int (*)(const char*, char* const[], char* const[]);
using ExecV = int (*)(const char*, char* const[]);
using FExecVE = int (*)(int, char* const[], char* const[]);

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                  char* const envp[]) {
  static const ExecVE real = next<ExecVE>("execve");
  return closing_first([&] { return real(path, argv, envp); });
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  static const ExecV real = next<ExecV>("execv");
  return closing_first([&] { return real(path, argv); });
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  static const ExecV real = next<ExecV>("execvp");
  return closing_first([&] { return real(file, argv); });
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                   char* const envp[]) {
  static const ExecVE real = next<ExecVE>("execvpe");
  return closing_first([&] { return real(file, argv, envp); });
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  static const FExecVE real = next<FExecVE>("fexecve");
  return closing_first([&] { return real(fd, argv, envp); });
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = arguments(arg, ap);
  va_end(ap);
  return execv(path, argv.data());
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = arguments(arg, ap);
  va_end(ap);
  return execvp(file, argv.data());
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = arguments(arg, ap);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return execve(path, argv.data(), envp);
}

}  // extern "C"
