/* ROCTx C API as ROCm declares it (roctx.h): annotations for C, C++, HIP and Julia programs.
 * Calls record into the running rocprof session and do nothing when none runs. */
#ifndef ROCPROF_ROCTX_H_
#define ROCPROF_ROCTX_H_
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t roctx_range_id_t;
typedef uint64_t roctx_thread_id_t;

uint32_t roctx_version_major(void);
uint32_t roctx_version_minor(void);
void roctxMarkA(const char* message);
int roctxRangePushA(const char* message);
int roctxRangePop(void);
roctx_range_id_t roctxRangeStartA(const char* message);
void roctxRangeStop(roctx_range_id_t id);
int roctxProfilerPause(roctx_thread_id_t tid);
int roctxProfilerResume(roctx_thread_id_t tid);
int roctxNameOsThread(const char* name);
struct hsa_agent_s;
struct ihipStream_t;
/* Names recorded on the agent / stream rows they refer to (ROCm's roctx.h signatures). */
int roctxNameHsaAgent(const char* name, const struct hsa_agent_s* agent);
int roctxNameHipDevice(const char* name, int device_id);
int roctxNameHipStream(const char* name, const struct ihipStream_t* stream);
int roctxGetThreadId(roctx_thread_id_t* tid);

#define roctxMark(message) roctxMarkA(message)
#define roctxRangePush(message) roctxRangePushA(message)
#define roctxRangeStart(message) roctxRangeStartA(message)

#ifdef __cplusplus
}
#endif
#endif
