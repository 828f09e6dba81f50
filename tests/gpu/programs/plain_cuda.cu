// A CUDA program with no ROCTx and no profiler code: `rocprof run -- ./plain_cuda N` must
// trace every kernel through the CUDA injection hook. Launches N kernels of two kinds and
// prints how many it launched; with PROGRAM (argv[2]), then exec()s it, CUDA still set up.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void add_one(float* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] += 1.0f;
}
__global__ void halve(float* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] *= 0.5f;
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 100;
  const int n = 1 << 16;
  float* d = nullptr;
  if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) return 2;
  int a = 0, b = 0;
  for (int i = 0; i < launches; ++i) {
    if (i % 3 == 0) {
      halve<<<n / 256, 256>>>(d, n);
      ++b;
    } else {
      add_one<<<n / 256, 256>>>(d, n);
      ++a;
    }
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  std::printf("launched %d add_one %d halve %d\n", a + b, a, b);
  if (argc > 2) {
    std::fflush(stdout);
    execl(argv[2], argv[2], static_cast<char*>(nullptr));
    std::perror("execl");
    return 9;
  }
  cudaFree(d);
  return 0;
}
