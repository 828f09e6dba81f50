/* A native program that finds the ROCTx C ABI the way Julia's @ccall "libroctx64" and most
 * plug-in loaders do: dlopen by bare name, at run time. Records 3 nested ranges 5 times and a
 * mark, then exits with the code given as argv[1] (default 0). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*push_fn)(const char*);
typedef int (*pop_fn)(void);
typedef void (*mark_fn)(const char*);

int main(int argc, char** argv) {
  void* lib = dlopen("libroctx64.so", RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 99;
  }
  push_fn push = (push_fn)dlsym(lib, "roctxRangePushA");
  pop_fn pop = (pop_fn)dlsym(lib, "roctxRangePop");
  mark_fn mark = (mark_fn)dlsym(lib, "roctxMarkA");
  if (!push || !pop || !mark) return 98;
  for (int i = 0; i < 5; ++i) {
    push("outer");
    push("middle");
    push("inner");
    pop();
    pop();
    pop();
  }
  mark("done");
  printf("native ranges recorded\n");
  return argc > 1 ? atoi(argv[1]) : 0;
}
