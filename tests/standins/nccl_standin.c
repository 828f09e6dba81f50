/* Test-only stand-in for NCCL's side of the profiler plugin interface: no NCCL (and no GPU)
 * exists here. It does what NCCL 2.27 (interface v4) or >= 2.28 (v5) does with a profiler
 * plugin: dlopen the library named in NCCL_PROFILER_PLUGIN, look up ncclProfiler_v5 / _v4,
 * call init per communicator, start and stop the events of each call in NCCL's order (v5: the
 * group API event around the calls' API events and, at the group's end, their task events with
 * the API event as parent, as run_v5 describes; v4: the task event alone), only for the event
 * types the plugin's activation mask asks for, and finalize.
 *
 * Usage: nccl_standin v4|v5 RANK NRANKS
 * Calls made (fixed, so a test can check them value for value; counts are elements):
 *   ncclAllReduce  count 262144 ncclFloat32 (1 MiB)   stream 0x5000+rank  seq 0
 *   ncclAllReduce  count 1024   ncclBfloat16 (2 KiB)  stream 0x5000+rank  seq 1
 *   ncclBroadcast  count 4096   ncclInt64 root 1      stream 0x5000+rank  seq 0
 *   ncclAllGather  count 1000   ncclFloat16
 *   ncclSend       count 256    ncclUint8 peer (rank+1)%NRANKS
 * Communicator: hash 0xC0FFEE, name "standin-comm", 1 node. Algorithm Ring, protocol Simple,
 * 4 channels. Exit code 0 when every call returned ncclSuccess. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_profiler_api.h"

static int rank_, nranks_;

static void pause_us(long us) {
  struct timespec t = {0, us * 1000};
  nanosleep(&t, NULL);
}

#define CHECK(x)                                        \
  do {                                                  \
    if ((x) != ncclSuccess) {                           \
      fprintf(stderr, "nccl_standin: %s failed\n", #x); \
      return 1;                                         \
    }                                                   \
  } while (0)

struct call {
  const char* func;
  size_t count;
  const char* dtype;
  int root, peer;
  unsigned long long seq;
};
static const struct call calls[] = {
    {"AllReduce", 262144, "ncclFloat32", 0, -1, 0},
    {"AllReduce", 1024, "ncclBfloat16", 0, -1, 1},
    {"Broadcast", 4096, "ncclInt64", 1, -1, 0},
    {"AllGather", 1000, "ncclFloat16", 0, -1, 0},
    {"Send", 256, "ncclUint8", 0, 1, 0},
};

/* v5, in NCCL 2.28+'s order: the group API event opens (implicitly around an ungrouped call);
 * each call's API event starts and stops while NCCL appends its task; at the group's end the
 * kernel is launched and the task events (parent: the API event) start and stop; then the
 * group API event stops. Calls 1 and 2 form one explicit group (ncclGroupStart/End). */
static int api_event(ncclProfiler_v5_t* p, void* ctx, int mask, const struct call* c, void** api) {
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.rank = rank_;
  *api = NULL;
  void* stream = (void*)(unsigned long)(0x5000 + rank_);
  if (c->peer < 0 && (mask & ncclProfileCollApi)) {
    d.type = ncclProfileCollApi;
    d.collApi.func = c->func;
    d.collApi.count = c->count;
    d.collApi.datatype = c->dtype;
    d.collApi.root = c->root;
    d.collApi.stream = stream;
  } else if (c->peer >= 0 && (mask & ncclProfileP2pApi)) {
    d.type = ncclProfileP2pApi;
    d.p2pApi.func = c->func;
    d.p2pApi.count = c->count;
    d.p2pApi.datatype = c->dtype;
    d.p2pApi.stream = stream;
  } else {
    return 0;
  }
  CHECK(p->startEvent(ctx, api, &d));
  pause_us(100); /* appending the task */
  if (*api) CHECK(p->stopEvent(*api));
  return 0;
}

static int task_event(ncclProfiler_v5_t* p, void* ctx, int mask, const struct call* c, void* api) {
  ncclProfilerEventDescr_v5_t d;
  void* task = NULL;
  memset(&d, 0, sizeof d);
  d.rank = rank_;
  d.parentObj = api;
  if (c->peer < 0 && (mask & ncclProfileColl)) {
    d.type = ncclProfileColl;
    d.coll.seqNumber = c->seq;
    d.coll.func = c->func;
    d.coll.count = c->count;
    d.coll.root = c->root;
    d.coll.datatype = c->dtype;
    d.coll.nChannels = 4;
    d.coll.nWarps = 16;
    d.coll.algo = "Ring";
    d.coll.proto = "Simple";
  } else if (c->peer >= 0 && (mask & ncclProfileP2p)) {
    d.type = ncclProfileP2p;
    d.p2p.func = c->func;
    d.p2p.count = c->count;
    d.p2p.datatype = c->dtype;
    d.p2p.peer = (rank_ + 1) % nranks_;
    d.p2p.nChannels = 4;
  } else {
    return 0;
  }
  CHECK(p->startEvent(ctx, &task, &d));
  if (task) CHECK(p->stopEvent(task));
  return 0;
}

static int run_v5(ncclProfiler_v5_t* p) {
  static const int groups[][3] = {{0, -1, -1}, {1, 2, -1}, {3, -1, -1}, {4, -1, -1}};
  void* ctx = NULL;
  int mask = 0;
  CHECK(p->init(&ctx, 0xC0FFEEull, &mask, "standin-comm", 1, nranks_, rank_, NULL));
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; ++g) {
    void* group = NULL;
    void* api[3] = {NULL, NULL, NULL};
    ncclProfilerEventDescr_v5_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileGroupApi;
    d.rank = rank_;
    if (mask & ncclProfileGroupApi) CHECK(p->startEvent(ctx, &group, &d));
    for (int i = 0; i < 3 && groups[g][i] >= 0; ++i)
      if (api_event(p, ctx, mask, &calls[groups[g][i]], &api[i])) return 1;
    pause_us(300); /* planning and launching the kernel */
    for (int i = 0; i < 3 && groups[g][i] >= 0; ++i)
      if (task_event(p, ctx, mask, &calls[groups[g][i]], api[i])) return 1;
    if (group) CHECK(p->stopEvent(group));
  }
  CHECK(p->finalize(ctx));
  return 0;
}

static int run_v4(ncclProfiler_v4_t* p) {
  void* ctx = NULL;
  int mask = 0;
  CHECK(p->init(&ctx, &mask, "standin-comm", 0xC0FFEEull, 1, nranks_, rank_, NULL));
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i) {
    const struct call* c = &calls[i];
    void* task = NULL;
    ncclProfilerEventDescr_v4_t d;
    memset(&d, 0, sizeof d);
    d.rank = rank_;
    if (c->peer < 0 && (mask & ncclProfileColl)) {
      d.type = ncclProfileColl;
      d.coll.seqNumber = c->seq;
      d.coll.func = c->func;
      d.coll.count = c->count;
      d.coll.root = c->root;
      d.coll.datatype = c->dtype;
      d.coll.nChannels = 4;
      d.coll.algo = "Ring";
      d.coll.proto = "Simple";
      CHECK(p->startEvent(ctx, &task, &d));
    } else if (c->peer >= 0 && (mask & ncclProfileP2p)) {
      d.type = ncclProfileP2p;
      d.p2p.func = c->func;
      d.p2p.count = c->count;
      d.p2p.datatype = c->dtype;
      d.p2p.peer = (rank_ + 1) % nranks_;
      d.p2p.nChannels = 4;
      CHECK(p->startEvent(ctx, &task, &d));
    }
    pause_us(200);
    if (task) CHECK(p->stopEvent(task));
  }
  CHECK(p->finalize(ctx));
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: nccl_standin v4|v5 RANK NRANKS\n");
    return 2;
  }
  rank_ = atoi(argv[2]);
  nranks_ = atoi(argv[3]);
  const char* lib = getenv("NCCL_PROFILER_PLUGIN");
  if (lib == NULL) {
    fprintf(stderr, "nccl_standin: NCCL_PROFILER_PLUGIN is not set\n");
    return 3;
  }
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "nccl_standin: %s\n", dlerror());
    return 4;
  }
  if (strcmp(argv[1], "v5") == 0) {
    ncclProfiler_v5_t* p = (ncclProfiler_v5_t*)dlsym(h, "ncclProfiler_v5");
    return p ? run_v5(p) : 5;
  }
  ncclProfiler_v4_t* p = (ncclProfiler_v4_t*)dlsym(h, "ncclProfiler_v4");
  return p ? run_v4(p) : 5;
}
