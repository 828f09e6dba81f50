// The vector-copy kernel of the ROCm/AMDGPU.jl profiling guide, in two variants:
//   sync:  the host synchronises after every launch (the mistake the guide profiles)
//   fixed: launches are queued back to back, one synchronisation at the end
// Each variant runs inside a ROCTx range of its name, so a trace shows the launch gaps of
// both. Builds with hipcc (AMD) or with nvcc against HIP's nvidia_detail headers:
//   nvcc -x cu -D__HIP_PLATFORM_NVIDIA__ -I<hip include> vcopy.hip -lroctx64
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "roctx.h"

#define CHECK(x)                                                                        \
  do {                                                                                  \
    hipError_t e = (x);                                                                 \
    if (e != hipSuccess) {                                                              \
      std::fprintf(stderr, "%s: %s\n", #x, hipGetErrorString(e));                       \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

__global__ void vcopy(const float* a, float* b) {
  const size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  b[i] = a[i];
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 200;
  const size_t n = 1 << 20;
  float *a = nullptr, *b = nullptr;
  CHECK(hipMalloc(&a, n * sizeof(float)));
  CHECK(hipMalloc(&b, n * sizeof(float)));
  CHECK(hipMemset(a, 0, n * sizeof(float)));
  for (const char* variant : {"sync", "fixed"}) {
    roctxRangePushA(variant);
    for (int i = 0; i < launches; ++i) {
      hipLaunchKernelGGL(vcopy, dim3(n / 256), dim3(256), 0, 0, a, b);
      if (std::strcmp(variant, "sync") == 0) CHECK(hipDeviceSynchronize());
    }
    CHECK(hipDeviceSynchronize());
    roctxRangePop();
  }
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  std::printf("vcopy: %d launches per variant\n", launches);
  return 0;
}
