// The launchers of mri-q's kernels (mri_q_kernels.cu), which every variant's host side calls.
#pragma once

#include <cstddef>

namespace xf::shared_bench {

/// A k-space sample as ComputeQ reads it (Parboil's kValues): its coordinates and |φ|².
struct alignas(16) mri_q_sample {
  float kx, ky, kz, phi_magnitude;
};

/// phi_magnitude[k] = phi_r[k]² + phi_i[k]² for k < count. Default stream.
void launch_phi_magnitude(const float* phi_r, const float* phi_i, float* phi_magnitude, std::size_t count);

/// For every voxel v < voxels, over samples [first, first + count):
///   q_r[v] (+)= Σ |φ|²·cos(2π k·x_v),  q_i[v] (+)= Σ |φ|²·sin(2π k·x_v)
/// added to what q_r and q_i hold where `accumulate`, else written. Default stream.
void launch_compute_q(const mri_q_sample* samples, std::size_t first, std::size_t count, const float* x,
                      const float* y, const float* z, std::size_t voxels, float* q_r, float* q_i,
                      bool accumulate);

}  // namespace xf::shared_bench
