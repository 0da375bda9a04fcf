// mri-q's kernels, the same for every variant (mri_q_kernels.hpp). Parboil's ComputeQ reads each launch's
// samples from constant memory; here they are an ordinary array (a shared object in the library's
// variants) that each block stages through shared memory a tile at a time. One thread per voxel.
#include <cuda_runtime.h>

#include "apps/shared_objects/launch_shape.hpp"
#include "apps/shared_objects/mri_q/mri_q_kernels.hpp"
#include "framework/core/cuda_check.hpp"

namespace xf::shared_bench {
namespace {

constexpr unsigned phi_threads = 256;
constexpr unsigned phi_blocks_per_sm = 8;
constexpr unsigned q_threads = 256;
/// 2π as Parboil's PIx2.
constexpr float two_pi = 6.2831853071795864769f;

static_assert(sizeof(mri_q_sample) == sizeof(float4), "a sample is read as one float4");

__global__ void phi_magnitude_kernel(const float* __restrict__ phi_r, const float* __restrict__ phi_i,
                                     float* __restrict__ phi_magnitude, std::size_t count) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < count;
       k += std::size_t{gridDim.x} * blockDim.x)
    phi_magnitude[k] = phi_r[k] * phi_r[k] + phi_i[k] * phi_i[k];
}

__global__ void compute_q_kernel(const float4* __restrict__ samples, unsigned count,
                                 const float* __restrict__ x, const float* __restrict__ y,
                                 const float* __restrict__ z, unsigned voxels, float* __restrict__ q_r,
                                 float* __restrict__ q_i, bool accumulate) {
  __shared__ float4 tile[q_threads];
  const unsigned v = blockIdx.x * q_threads + threadIdx.x;
  const bool mine = v < voxels;
  const float vx = mine ? x[v] : 0.0f, vy = mine ? y[v] : 0.0f, vz = mine ? z[v] : 0.0f;
  float sum_r = 0.0f, sum_i = 0.0f;
  for (unsigned base = 0; base < count; base += q_threads) {
    __syncthreads();  // the previous tile is used up
    if (base + threadIdx.x < count) tile[threadIdx.x] = samples[base + threadIdx.x];
    __syncthreads();
    const unsigned in_tile = count - base < q_threads ? count - base : q_threads;
    for (unsigned j = 0; j < in_tile; ++j) {
      const float4 s = tile[j];
      const float argument = two_pi * (s.x * vx + s.y * vy + s.z * vz);
      float sine, cosine;
      sincosf(argument, &sine, &cosine);
      sum_r += s.w * cosine;
      sum_i += s.w * sine;
    }
  }
  if (!mine) return;
  q_r[v] = accumulate ? q_r[v] + sum_r : sum_r;
  q_i[v] = accumulate ? q_i[v] + sum_i : sum_i;
}

}  // namespace

void launch_phi_magnitude(const float* phi_r, const float* phi_i, float* phi_magnitude, std::size_t count) {
  phi_magnitude_kernel<<<grid_for(count, phi_threads, phi_blocks_per_sm), phi_threads>>>(
      phi_r, phi_i, phi_magnitude, count);
  XF_CUDA_TRY(cudaGetLastError());
}

void launch_compute_q(const mri_q_sample* samples, std::size_t first, std::size_t count, const float* x,
                      const float* y, const float* z, std::size_t voxels, float* q_r, float* q_i,
                      bool accumulate) {
  const auto blocks = static_cast<unsigned>((voxels + q_threads - 1) / q_threads);
  compute_q_kernel<<<blocks, q_threads>>>(reinterpret_cast<const float4*>(samples + first),
                                          static_cast<unsigned>(count), x, y, z,
                                          static_cast<unsigned>(voxels), q_r, q_i, accumulate);
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::shared_bench
