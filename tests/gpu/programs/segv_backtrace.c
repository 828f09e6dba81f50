/* Diagnostics for the GPU host, which has no gdb: LD_PRELOAD this library and a SIGSEGV,
 * SIGBUS or SIGABRT prints the native backtrace (object + offset per frame) to stderr, then
 * the signal's default action runs. cc -shared -fPIC -o libsegv.so segv_backtrace.c */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_fault(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  dprintf(2, "segv_backtrace: signal %d in pid %d, %d frames\n", sig, getpid(), n);
  for (int i = 0; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_fname)
      dprintf(2, "  #%d %s+0x%lx (%s)\n", i, info.dli_fname,
              (unsigned long)((char*)frames[i] - (char*)info.dli_fbase),
              info.dli_sname ? info.dli_sname : "?");
    else
      dprintf(2, "  #%d %p\n", i, frames[i]);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  signal(SIGSEGV, on_fault);
  signal(SIGBUS, on_fault);
  signal(SIGABRT, on_fault);
}
