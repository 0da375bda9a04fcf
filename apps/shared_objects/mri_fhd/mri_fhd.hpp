// mri-fhd (Parboil): the vector F^H·d of non-Cartesian 3D MRI reconstruction. Host code as Parboil's: a
// first kernel computes ρφ = φ̄·d per k-space sample, the CPU reads it back and packs the samples
// (coordinates and ρφ), and ComputeFH runs over them a launch per chunk of samples; the CPU reads F^H·d
// (real and imaginary) at the end.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/shared_objects/mri_fhd/mri_fhd_kernels.hpp"
#include "apps/shared_objects/workload.hpp"

namespace xf::shared_bench {

struct mri_fhd_problem {
  static constexpr std::string_view name = "mri-fhd";
  std::size_t voxels = 0, samples = 0;
  std::size_t chunk = 0;                      ///< samples per ComputeFH launch
  std::vector<float> kx, ky, kz;              ///< per sample: only the CPU reads them (to pack the samples)
  std::vector<float> phi_r, phi_i, d_r, d_i;  ///< per sample
  std::vector<float> x, y, z;                 ///< per voxel

  std::size_t chunks() const { return (samples + chunk - 1) / chunk; }
  std::vector<std::pair<std::string, std::uint64_t>> size() const {
    return {{"voxels", voxels}, {"samples", samples}, {"chunk", chunk}};
  }
  std::uint64_t device_bytes() const {
    return 6 * samples * sizeof(float) + samples * sizeof(mri_fhd_sample) + 5 * voxels * sizeof(float);
  }
  std::size_t device_arrays() const { return 12; }
  std::uint64_t source_bytes() const { return (7 * samples + 3 * voxels) * sizeof(float); }
  /// F^H·d at every voxel where `thorough`, else at 1024 voxels spread over all, against double precision,
  /// within float_sum_bound (workload.hpp) of the kernel's sums. As mri-q's, with each sample's weight
  /// M = |φr·dr| + |φi·di| + |φr·di| + |φi·dr| (which bounds |ρr| + |ρi| and ρφ's own float error, 2u·M): a
  /// term errs by under M·(6u + 5u·2π·S).
  check_result check(const output& out, bool thorough) const;
};

void mri_fhd_explicit(run_context& ctx, const mri_fhd_problem& p, output& out);
void mri_fhd_shared(run_context& ctx, const mri_fhd_problem& p, output& out);
void mri_fhd_managed(run_context& ctx, const mri_fhd_problem& p, output& out);
void mri_fhd_managed_prefetch(run_context& ctx, const mri_fhd_problem& p, output& out);

/// The outputs: F^H·d's real parts, then its imaginary parts (voxels each).
std::unique_ptr<workload> make_mri_fhd(std::size_t voxels, std::size_t samples, std::size_t chunk);

}  // namespace xf::shared_bench
