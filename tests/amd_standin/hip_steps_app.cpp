// A HIP step loop for the TEST-ONLY stand-in runtimes (standin_hip.cpp over standin_hsa.cpp),
// profiled by tests/integration/test_bounded_run.py under --max-size:
//   hip_steps_app STEPS HOST_STEP KERNELS_STEP: STEPS ROCTx ranges "step", each launching two
//   kernels and one 64 KiB copy and waiting for them; step HOST_STEP also sleeps 30 ms on the
//   host, step KERNELS_STEP launches 60 more kernels (GPU records reach the profiler late, from
//   the stand-in's completion thread, as a real runtime's do).
#include <hip/hip_runtime_api.h>
#include <roctx.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                              \
  do {                                                        \
    if ((x) != hipSuccess) {                                  \
      std::fprintf(stderr, "hip_steps_app: %s failed\n", #x); \
      return 1;                                               \
    }                                                         \
  } while (0)

// name duration_ns group_segment private_segment kernarg_size
static const char kCodeObject[] =
    "ROCPROF-STANDIN-CO\n"
    "_Z4stepPfi 100000 0 0 16\n";

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 300;
  const int host_step = argc > 2 ? std::atoi(argv[2]) : 100;
  const int kernels_step = argc > 3 ? std::atoi(argv[3]) : 200;
  CHECK(hipInit(0));
  void* dev = nullptr;
  CHECK(hipMalloc(&dev, 64 << 10));
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, kCodeObject));
  hipFunction_t k;
  CHECK(hipModuleGetFunction(&k, module, "_Z4stepPfi"));
  std::vector<char> host(64 << 10, 1);
  for (int i = 0; i < n; ++i) {
    roctxRangePush("step");
    if (i == host_step) usleep(30000);
    const int launches = i == kernels_step ? 62 : 2;
    for (int j = 0; j < launches; ++j)
      CHECK(hipModuleLaunchKernel(k, 64, 1, 1, 64, 1, 1, 0, s, nullptr, nullptr));
    CHECK(hipMemcpyAsync(dev, host.data(), 64 << 10, hipMemcpyHostToDevice, s));
    CHECK(hipStreamSynchronize(s));
    roctxRangePop();
  }
  CHECK(hipFree(dev));
  std::printf("hip_steps_app: %d steps\n", n);
  return 0;
}
