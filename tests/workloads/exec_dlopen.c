/* exec_native.c in a program that is not linked with libroctx64 and opens it at run time
 * (dlopen, as Julia, ctypes or a plug-in does): its exec*() calls are libc's own, as are those
 * of a CUDA or HIP program whose session the injected tool library started. Records N ranges,
 * then exec()s PROGRAM (argv[2]; itself by default) with "again", which records one range and
 * exits; if the exec fails it records one more range and exits with 9. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int (*push)(const char*);
static int (*pop)(void);

static void range(const char* name) {
  push(name);
  pop();
}

int main(int argc, char** argv) {
  void* roctx = dlopen("libroctx64.so", RTLD_NOW | RTLD_LOCAL);
  if (roctx == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 8;
  }
  push = (int (*)(const char*))dlsym(roctx, "roctxRangePushA");
  pop = (int (*)(void))dlsym(roctx, "roctxRangePop");
  if (argc > 1 && strcmp(argv[1], "again") == 0) {
    range("after-exec");
    return 0;
  }
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  for (int i = 0; i < n; ++i) range("before-exec");
  const char* program = argc > 2 ? argv[2] : argv[0];
  execl(program, program, "again", (char*)NULL);
  perror("execl");
  range("after-failed-exec");
  return 9;
}
