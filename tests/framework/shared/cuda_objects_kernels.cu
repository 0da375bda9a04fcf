// Kernels of the shared objects' GPU tests, each launched on the default stream behind a host function (the
// test itself is plain C++). They take the objects' shared pointers as they are.
#include <cuda_runtime.h>

#include <cstddef>

#include "framework/core/cuda_check.hpp"
#include "tests/framework/shared/cuda_objects_kernels.hpp"

namespace xf::shared::test {
namespace {

__global__ void vector_add(const float* a, const float* b, float* c, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    c[i] = a[i] + b[i];
}

__global__ void add_bytes(unsigned char* p, std::size_t n, unsigned char delta) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    p[i] = static_cast<unsigned char>(p[i] + delta);
}

constexpr unsigned threads = 256;
unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(n / threads < 1024 ? n / threads + 1 : 1024);
}

}  // namespace

void launch_vector_add(const float* a, const float* b, float* c, std::size_t n) {
  vector_add<<<blocks_for(n), threads>>>(a, b, c, n);
  XF_CUDA_TRY(cudaGetLastError());
}

void launch_add_bytes(unsigned char* p, std::size_t n, unsigned char delta) {
  add_bytes<<<blocks_for(n), threads>>>(p, n, delta);
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::shared::test
