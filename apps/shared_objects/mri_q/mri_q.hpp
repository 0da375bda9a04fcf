// mri-q (Parboil): the Q matrix of non-Cartesian 3D MRI reconstruction, which stands for the scanner's
// configuration. As Parboil's host code: a first kernel computes |φ|² of every k-space sample, the CPU
// reads it back and packs the samples (coordinates and |φ|²), and ComputeQ runs over them a launch per
// chunk of samples; the CPU reads Q (real and imaginary) at the end.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/shared_objects/mri_q/mri_q_kernels.hpp"
#include "apps/shared_objects/workload.hpp"

namespace xf::shared_bench {

struct mri_q_problem {
  static constexpr std::string_view name = "mri-q";
  std::size_t voxels = 0, samples = 0;
  std::size_t chunk = 0;            ///< samples per ComputeQ launch (Parboil: 1024)
  std::vector<float> kx, ky, kz;    ///< per sample: only the CPU reads them (to pack the samples)
  std::vector<float> phi_r, phi_i;  ///< per sample
  std::vector<float> x, y, z;       ///< per voxel

  std::size_t chunks() const { return (samples + chunk - 1) / chunk; }
  std::vector<std::pair<std::string, std::uint64_t>> size() const {
    return {{"voxels", voxels}, {"samples", samples}, {"chunk", chunk}};
  }
  std::uint64_t device_bytes() const {
    return 3 * samples * sizeof(float) + samples * sizeof(mri_q_sample) + 5 * voxels * sizeof(float);
  }
  std::size_t device_arrays() const { return 9; }
  std::uint64_t source_bytes() const { return (5 * samples + 3 * voxels) * sizeof(float); }
  /// Q at every voxel where `thorough`, else at 1024 voxels spread over all, against double precision,
  /// within float_sum_bound (workload.hpp) of the kernel's sums. A term |φ|²·cos(2π k·x) errs in float by
  /// |φ|²'s two roundings, sincosf's 2 ulp and the product (under 5u·|φ|²), and by the argument's rounding
  /// (its dot product and the product with 2π: under 5u·2π·S, S = |kx·x| + |ky·y| + |kz·z|), which moves the
  /// cosine by no more; the partial sums follow the kernel's order (a launch's samples, then added to Q).
  check_result check(const output& out, bool thorough) const;
};

void mri_q_explicit(run_context& ctx, const mri_q_problem& p, output& out);
void mri_q_shared(run_context& ctx, const mri_q_problem& p, output& out);
void mri_q_managed(run_context& ctx, const mri_q_problem& p, output& out);
void mri_q_managed_prefetch(run_context& ctx, const mri_q_problem& p, output& out);

/// The outputs: Q's real parts, then its imaginary parts (voxels each).
std::unique_ptr<workload> make_mri_q(std::size_t voxels, std::size_t samples, std::size_t chunk);

}  // namespace xf::shared_bench
