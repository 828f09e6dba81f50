// A small HIP program for the TEST-ONLY stand-in runtimes (standin_hip.cpp over
// standin_hsa.cpp): what tests/integration/test_amd_standin.py profiles and checks.
//   hip_like_app [N]: N launches of each of two named kernels, on two streams (two HSA queues),
//   inside ROCTx ranges; two copies (1 MiB host→device, 256 KiB device→host); two allocations
//   freed at the end. Kernel durations are stated by the stand-in code object below; copies take
//   1 ns per byte on the stand-in's copy engine.
#include <hip/hip_runtime_api.h>
#include <roctx.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                             \
  do {                                                       \
    if ((x) != hipSuccess) {                                 \
      std::fprintf(stderr, "hip_like_app: %s failed\n", #x); \
      return 1;                                              \
    }                                                        \
  } while (0)

// name duration_ns group_segment private_segment kernarg_size
static const char kCodeObject[] =
    "ROCPROF-STANDIN-CO\n"
    "_Z10vector_addPfPKfS1_i 200000 0 0 32\n"
    "_Z10reduce_sumPKfPfi 500000 4096 16 24\n";

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 6;
  CHECK(hipInit(0));  // starts HSA: the profiler's OnLoad runs in here
  roctxRangePush("setup");
  void *big = nullptr, *small = nullptr;
  CHECK(hipMalloc(&big, 1 << 20));
  CHECK(hipMalloc(&small, 256 << 10));
  hipStream_t s1, s2;
  CHECK(hipStreamCreate(&s1));
  CHECK(hipStreamCreate(&s2));
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, kCodeObject));
  hipFunction_t add, reduce;
  CHECK(hipModuleGetFunction(&add, module, "_Z10vector_addPfPKfS1_i"));
  CHECK(hipModuleGetFunction(&reduce, module, "_Z10reduce_sumPKfPfi"));
  roctxRangePop();

  roctxRangePush("compute");
  for (int i = 0; i < n; ++i) {
    CHECK(hipModuleLaunchKernel(add, 1024, 1, 1, 256, 1, 1, 0, s1, nullptr, nullptr));
    CHECK(hipModuleLaunchKernel(reduce, 64, 2, 1, 128, 2, 1, 1024, s2, nullptr, nullptr));
  }
  CHECK(hipDeviceSynchronize());
  roctxRangePop();

  roctxRangePush("transfer");
  std::vector<char> host(1 << 20, 7);
  CHECK(hipMemcpyAsync(big, host.data(), 1 << 20, hipMemcpyHostToDevice, s1));
  CHECK(hipStreamSynchronize(s1));
  CHECK(hipMemcpyAsync(host.data(), small, 256 << 10, hipMemcpyDeviceToHost, s2));
  CHECK(hipStreamSynchronize(s2));
  roctxRangePop();

  CHECK(hipFree(big));
  CHECK(hipFree(small));
  std::printf("hip_like_app: %d dispatches, 2 copies\n", 2 * n);
  return 0;
}
