// PC sampling target (tests/gpu/test_gpu_pc_sampling.py): two kernels of the same shape and
// launch geometry whose loops differ only in trip count, so hot_loop takes ~80 % of the GPU
// time and warm_loop ~20 %. The loop lines are marked LOOP-HOT / LOOP-WARM: the test reads
// their line numbers from this file. Built with -lineinfo, as a program and as a library.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void hot_loop(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f;
  for (int i = 0; i < iters; ++i) {  // LOOP-HOT
    a = a * b + 1e-7f;               // LOOP-HOT
    b = b * a + 1e-7f;               // LOOP-HOT
  }  // LOOP-HOT
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
}

__global__ void warm_loop(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f;
  for (int i = 0; i < iters; ++i) {  // LOOP-WARM
    a = a * b + 1e-7f;               // LOOP-WARM
    b = b * a + 1e-7f;               // LOOP-WARM
  }  // LOOP-WARM
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
}

// The loop, callable from Python through ctypes (the program is also built as a library)
// and from main.
extern "C" int pc_hot_loop_run(int rounds) {
  const int blocks = 1024, threads = 256, iters = 20000;
  float* out = nullptr;
  if (cudaMalloc(&out, sizeof(float) * blocks * threads) != cudaSuccess) return 1;
  for (int r = 0; r < rounds; ++r) {
    hot_loop<<<blocks, threads>>>(out, 4 * iters);
    warm_loop<<<blocks, threads>>>(out, iters);
  }
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("rounds %d: %s\n", rounds, cudaGetErrorString(e));
  std::fflush(stdout);
  cudaFree(out);
  return e == cudaSuccess ? 0 : 1;
}

int main(int argc, char** argv) { return pc_hot_loop_run(argc > 1 ? std::atoi(argv[1]) : 20); }
