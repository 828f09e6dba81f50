// Known GPU work for tests/gpu/test_cuda_program.py: exact kernel, copy and set counts on two
// streams, part of it inside a ROCTx range. Prints the CUDA stream ids it used as
// "streams <a> <b>" so the test can compare them with the recorded ones.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "roctx.h"

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

__global__ void fill_kernel(float* p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

template <typename T>
__global__ void scale_kernel(T* p, T s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= s;
}

int main() {
  const int n = 1 << 18;  // 1 MiB of floats
  float *d = nullptr, *h = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  CHECK(cudaMallocHost(&h, n * sizeof(float)));
  for (int i = 0; i < n; ++i) h[i] = 1.0f;
  cudaStream_t a, b;
  CHECK(cudaStreamCreate(&a));
  CHECK(cudaStreamCreate(&b));
  unsigned long long ida = 0, idb = 0;
  CHECK(cudaStreamGetId(a, &ida));
  CHECK(cudaStreamGetId(b, &idb));
  for (int i = 0; i < 3; ++i)
    CHECK(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, a));
  roctxRangePushA("phase");
  for (int i = 0; i < 50; ++i) fill_kernel<<<n / 256, 256, 0, a>>>(d, float(i), n);
  roctxRangePop();
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(a));
  for (int i = 0; i < 20; ++i)
    scale_kernel<float><<<dim3(n / 128, 1, 1), dim3(128, 1, 1), 0, b>>>(d, 1.0f, n);
  for (int i = 0; i < 4; ++i) CHECK(cudaMemsetAsync(d, 0, 256 * 1024, b));
  CHECK(cudaStreamSynchronize(b));
  for (int i = 0; i < 2; ++i) CHECK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaDeviceSynchronize());
  std::printf("streams %llu %llu\n", ida, idb);
  CHECK(cudaStreamDestroy(a));
  CHECK(cudaStreamDestroy(b));
  CHECK(cudaFreeHost(h));
  CHECK(cudaFree(d));
  return 0;
}
