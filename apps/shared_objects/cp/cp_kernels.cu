// cp's kernel, the same for every variant (cp_kernels.hpp). Parboil's cp reads each chunk of atoms from
// constant memory; here the chunk is an ordinary array (a shared object in the library's variants), which
// each block stages through shared memory a tile at a time. A thread computes cp_points_per_thread points
// of a grid row, blockDim.x apart (coalesced stores), reusing each atom it reads for all of them.
#include <cuda_runtime.h>

#include "apps/shared_objects/cp/cp_kernels.hpp"
#include "framework/core/cuda_check.hpp"

namespace xf::shared_bench {
namespace {

constexpr unsigned cp_threads = 128;
constexpr unsigned cp_points_per_thread = 4;

static_assert(sizeof(cp_atom) == sizeof(float4), "an atom is read as one float4");

__global__ void coulombic_potential_kernel(const float4* __restrict__ atoms, unsigned count,
                                           float* __restrict__ energy, unsigned grid_x, unsigned grid_y,
                                           float spacing, bool accumulate) {
  __shared__ float4 tile[cp_threads];
  const unsigned y = blockIdx.y;
  const unsigned x0 = blockIdx.x * cp_threads * cp_points_per_thread + threadIdx.x;
  const float py = spacing * static_cast<float>(y);
  float px[cp_points_per_thread], sum[cp_points_per_thread];
#pragma unroll
  for (unsigned p = 0; p < cp_points_per_thread; ++p) {
    px[p] = spacing * static_cast<float>(x0 + p * cp_threads);
    sum[p] = 0.0f;
  }
  for (unsigned base = 0; base < count; base += cp_threads) {
    __syncthreads();  // the previous tile is used up
    if (base + threadIdx.x < count) tile[threadIdx.x] = atoms[base + threadIdx.x];
    __syncthreads();
    const unsigned in_tile = count - base < cp_threads ? count - base : cp_threads;
    for (unsigned j = 0; j < in_tile; ++j) {
      const float4 a = tile[j];
      const float dy = py - a.y;
      const float dyz2 = dy * dy + a.z;
#pragma unroll
      for (unsigned p = 0; p < cp_points_per_thread; ++p) {
        const float dx = px[p] - a.x;
        sum[p] += a.w * rsqrtf(dx * dx + dyz2);
      }
    }
  }
  if (y >= grid_y) return;
#pragma unroll
  for (unsigned p = 0; p < cp_points_per_thread; ++p) {
    const unsigned x = x0 + p * cp_threads;
    if (x >= grid_x) continue;
    const std::size_t i = std::size_t{y} * grid_x + x;
    energy[i] = accumulate ? energy[i] + sum[p] : sum[p];
  }
}

}  // namespace

void launch_coulombic_potential(const cp_atom* atoms, std::size_t count, float* energy, std::size_t grid_x,
                                std::size_t grid_y, float spacing, bool accumulate) {
  constexpr unsigned row_points = cp_threads * cp_points_per_thread;
  const dim3 grid(static_cast<unsigned>((grid_x + row_points - 1) / row_points),
                  static_cast<unsigned>(grid_y));
  coulombic_potential_kernel<<<grid, cp_threads>>>(
      reinterpret_cast<const float4*>(atoms), static_cast<unsigned>(count), energy,
      static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y), spacing, accumulate);
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::shared_bench
