/* A C program annotated with the ROCTx C ABI (linked against libroctx64.so). */
#include <stdio.h>

#include "roctx.h"

int main(void) {
  roctx_thread_id_t tid = 0;
  if (roctxGetThreadId(&tid) != 0 || tid == 0) return 10;
  roctxNameOsThread("c-main");
  /* Recorded as names of the GPU agent / HSA agent / stream rows (none exist on a CPU host). */
  struct {
    unsigned long long handle;
  } agent = {0x99};
  if (roctxNameHipDevice("c-gpu", 0) != 0) return 11;
  if (roctxNameHsaAgent("c-agent", (const struct hsa_agent_s*)&agent) != 0) return 12;
  if (roctxNameHipStream("c-stream", (const struct ihipStream_t*)0x1234) != 0) return 13;
  roctxMarkA("c-mark");
  roctxRangePushA("c-outer");
  roctxRangePushA("c-inner");
  roctxRangePop();
  roctx_range_id_t id = roctxRangeStartA("c-startstop");
  roctxRangeStop(id);
  roctxProfilerPause(0);
  roctxRangePushA("c-paused");
  roctxRangePop();
  roctxProfilerResume(0);
  roctxRangePop();
  printf("tid %llu version %u.%u\n", (unsigned long long)tid, roctx_version_major(),
         roctx_version_minor());
  return 0;
}
