/* Records N ranges, then exec()s PROGRAM (argv[2]; itself by default) with "again", which
 * records one range and exits: a native program whose image is replaced while records are
 * still buffered. If the exec fails it records one more range and exits with 9. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roctx.h"

static void range(const char* name) {
  roctxRangePushA(name);
  roctxRangePop();
}

int main(int argc, char** argv) {
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
