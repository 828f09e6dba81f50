// A serving loop of copies and sets for tests/gpu/test_gpu_on_demand.py: a host-to-device copy
// and a set every ~2 ms, each round in a numbered ROCTx range, until the file argv[1] exists
// (or 60 s pass). Prints "serving" once the GPU is in use.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
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

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const size_t bytes = 1 << 20;
  void *d = nullptr, *h = nullptr;
  CHECK(cudaMalloc(&d, bytes));
  CHECK(cudaMallocHost(&h, bytes));
  CHECK(cudaDeviceSynchronize());
  std::printf("serving\n");
  std::fflush(stdout);
  const time_t end = std::time(nullptr) + 60;
  struct stat st;
  for (int i = 0; std::time(nullptr) < end && ::stat(argv[1], &st) != 0; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "req%d", i);
    roctxRangePushA(name);
    CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d, 0, bytes));
    CHECK(cudaDeviceSynchronize());
    roctxRangePop();
    ::usleep(2000);
  }
  CHECK(cudaFreeHost(h));
  CHECK(cudaFree(d));
  return 0;
}
