/* A native "server" for on-demand capture: numbered ROCTx ranges (libroctx64) every ~5 ms
   until the file argv[1] exists or 60 s pass. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "roctx.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  char name[32];
  printf("serving\n");
  fflush(stdout);
  for (int i = 0; i < 12000 && access(argv[1], F_OK) != 0; ++i) {
    snprintf(name, sizeof name, "c%d", i);
    roctxRangePushA(name);
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    roctxRangePop();
  }
  return 0;
}
