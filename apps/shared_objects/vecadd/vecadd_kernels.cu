// Vector addition's kernel, the same for every variant (vecadd_kernels.hpp).
#include <cuda_runtime.h>

#include "apps/shared_objects/launch_shape.hpp"
#include "apps/shared_objects/vecadd/vecadd_kernels.hpp"
#include "framework/core/cuda_check.hpp"

namespace xf::shared_bench {
namespace {

/// A memory-bound map: 256 threads and up to 8 resident blocks per multiprocessor keep the H100's 64 warps
/// per multiprocessor in flight.
constexpr unsigned vector_add_threads = 256;
constexpr unsigned vector_add_blocks_per_sm = 8;

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    c[i] = a[i] + b[i];
}

}  // namespace

void launch_vector_add(const float* a, const float* b, float* c, std::size_t n) {
  vector_add_kernel<<<grid_for(n, vector_add_threads, vector_add_blocks_per_sm), vector_add_threads>>>(a, b,
                                                                                                       c, n);
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::shared_bench
