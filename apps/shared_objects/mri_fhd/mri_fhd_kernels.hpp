// The launchers of mri-fhd's kernels (mri_fhd_kernels.cu), which every variant's host side calls.
#pragma once

#include <cstddef>

namespace xf::shared_bench {

/// A k-space sample as ComputeFH reads it (Parboil's kValues): its coordinates and ρφ.
struct mri_fhd_sample {
  float kx, ky, kz, rho_phi_r, rho_phi_i;
};

/// ρφ = φ̄·d per sample: rho_phi_r = φr·dr + φi·di, rho_phi_i = φr·di − φi·dr, for k < count. Default stream.
void launch_rho_phi(const float* phi_r, const float* phi_i, const float* d_r, const float* d_i,
                    float* rho_phi_r, float* rho_phi_i, std::size_t count);

/// For every voxel v < voxels, over samples [first, first + count), with θ = 2π k·x_v:
///   fh_r[v] (+)= Σ ρr·cos θ − ρi·sin θ,  fh_i[v] (+)= Σ ρi·cos θ + ρr·sin θ
/// added to what fh_r and fh_i hold where `accumulate`, else written. Default stream.
void launch_compute_fh(const mri_fhd_sample* samples, std::size_t first, std::size_t count, const float* x,
                       const float* y, const float* z, std::size_t voxels, float* fh_r, float* fh_i,
                       bool accumulate);

}  // namespace xf::shared_bench
