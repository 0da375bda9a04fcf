// mri-fhd's kernels, the same for every variant (mri_fhd_kernels.hpp): as mri-q's, the samples staged through
// shared memory a tile at a time, one thread per voxel.
#include <cuda_runtime.h>

#include "apps/shared_objects/launch_shape.hpp"
#include "apps/shared_objects/mri_fhd/mri_fhd_kernels.hpp"
#include "framework/core/cuda_check.hpp"

namespace xf::shared_bench {
namespace {

constexpr unsigned rho_threads = 256;
constexpr unsigned rho_blocks_per_sm = 8;
constexpr unsigned fh_threads = 256;
/// 2π as Parboil's PIx2.
constexpr float two_pi = 6.2831853071795864769f;

__global__ void rho_phi_kernel(const float* __restrict__ phi_r, const float* __restrict__ phi_i,
                               const float* __restrict__ d_r, const float* __restrict__ d_i,
                               float* __restrict__ rho_phi_r, float* __restrict__ rho_phi_i,
                               std::size_t count) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < count;
       k += std::size_t{gridDim.x} * blockDim.x) {
    rho_phi_r[k] = phi_r[k] * d_r[k] + phi_i[k] * d_i[k];
    rho_phi_i[k] = phi_r[k] * d_i[k] - phi_i[k] * d_r[k];
  }
}

__global__ void compute_fh_kernel(const mri_fhd_sample* __restrict__ samples, unsigned count,
                                  const float* __restrict__ x, const float* __restrict__ y,
                                  const float* __restrict__ z, unsigned voxels, float* __restrict__ fh_r,
                                  float* __restrict__ fh_i, bool accumulate) {
  __shared__ mri_fhd_sample tile[fh_threads];
  const unsigned v = blockIdx.x * fh_threads + threadIdx.x;
  const bool mine = v < voxels;
  const float vx = mine ? x[v] : 0.0f, vy = mine ? y[v] : 0.0f, vz = mine ? z[v] : 0.0f;
  float sum_r = 0.0f, sum_i = 0.0f;
  for (unsigned base = 0; base < count; base += fh_threads) {
    __syncthreads();  // the previous tile is used up
    if (base + threadIdx.x < count) tile[threadIdx.x] = samples[base + threadIdx.x];
    __syncthreads();
    const unsigned in_tile = count - base < fh_threads ? count - base : fh_threads;
    for (unsigned j = 0; j < in_tile; ++j) {
      const mri_fhd_sample s = tile[j];
      const float argument = two_pi * (s.kx * vx + s.ky * vy + s.kz * vz);
      float sine, cosine;
      sincosf(argument, &sine, &cosine);
      sum_r += s.rho_phi_r * cosine - s.rho_phi_i * sine;
      sum_i += s.rho_phi_i * cosine + s.rho_phi_r * sine;
    }
  }
  if (!mine) return;
  fh_r[v] = accumulate ? fh_r[v] + sum_r : sum_r;
  fh_i[v] = accumulate ? fh_i[v] + sum_i : sum_i;
}

}  // namespace

void launch_rho_phi(const float* phi_r, const float* phi_i, const float* d_r, const float* d_i,
                    float* rho_phi_r, float* rho_phi_i, std::size_t count) {
  rho_phi_kernel<<<grid_for(count, rho_threads, rho_blocks_per_sm), rho_threads>>>(
      phi_r, phi_i, d_r, d_i, rho_phi_r, rho_phi_i, count);
  XF_CUDA_TRY(cudaGetLastError());
}

void launch_compute_fh(const mri_fhd_sample* samples, std::size_t first, std::size_t count, const float* x,
                       const float* y, const float* z, std::size_t voxels, float* fh_r, float* fh_i,
                       bool accumulate) {
  const auto blocks = static_cast<unsigned>((voxels + fh_threads - 1) / fh_threads);
  compute_fh_kernel<<<blocks, fh_threads>>>(samples + first, static_cast<unsigned>(count), x, y, z,
                                            static_cast<unsigned>(voxels), fh_r, fh_i, accumulate);
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::shared_bench
