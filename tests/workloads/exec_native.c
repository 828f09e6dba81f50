/* Records N ranges, then exec()s itself with "again", which records one range and exits: a
 * native program whose image is replaced while records are still buffered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roctx.h"

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "again") == 0) {
    roctxRangePushA("after-exec");
    roctxRangePop();
    return 0;
  }
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  for (int i = 0; i < n; ++i) {
    roctxRangePushA("before-exec");
    roctxRangePop();
  }
  execl(argv[0], argv[0], "again", (char*)NULL);
  perror("execl");
  return 9;
}
