// mri-q's inputs and its CPU reference (mri_q.hpp).
#include "apps/shared_objects/mri_q/mri_q.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "apps/shared_objects/inputs.hpp"

namespace xf::shared_bench {
namespace {

constexpr std::size_t sampled_voxels = 1024;

}  // namespace

check_result mri_q_problem::check(const output& out, bool thorough) const {
  if (out.values.size() != 2 * voxels)
    return {false, "the output has " + std::to_string(out.values.size()) + " values"};
  const std::size_t step = thorough ? 1 : std::max<std::size_t>(1, voxels / sampled_voxels);
  const double u = float_roundoff, two_pi = 2 * std::numbers::pi;
  error_tally tally;
  for (std::size_t v = 0; v < voxels; v += step) {
    double q_r = 0, q_i = 0;
    float_sum_bound bound_r, bound_i;
    for (std::size_t first = 0; first < samples; first += chunk) {
      double chunk_r = 0, chunk_i = 0;  // the kernel's order: a launch's samples, then added to Q
      for (std::size_t k = first; k < std::min(samples, first + chunk); ++k) {
        const double magnitude =
            static_cast<double>(phi_r[k]) * phi_r[k] + static_cast<double>(phi_i[k]) * phi_i[k];
        const double kxv = static_cast<double>(kx[k]) * x[v], kyv = static_cast<double>(ky[k]) * y[v],
                     kzv = static_cast<double>(kz[k]) * z[v];
        const double angle = two_pi * (kxv + kyv + kzv);
        const double term_r = magnitude * std::cos(angle), term_i = magnitude * std::sin(angle);
        // |φ|²'s two roundings, sincosf's 2 ulp and the product (5u of |φ|²), and the argument's rounding
        // (under 5u·2π·S) moving the cosine and the sine by as much.
        const double own =
            magnitude * (5 * u + 5 * u * two_pi * (std::fabs(kxv) + std::fabs(kyv) + std::fabs(kzv)));
        chunk_r += term_r;
        chunk_i += term_i;
        bound_r.term(term_r, own);
        bound_i.term(term_i, own);
        bound_r.partial(chunk_r);
        bound_i.partial(chunk_i);
      }
      q_r += chunk_r;
      q_i += chunk_i;
      bound_r.partial(q_r);
      bound_i.partial(q_i);
    }
    tally.add(out.values[v], q_r, bound_r.bound());
    tally.add(out.values[voxels + v], q_i, bound_i.bound());
  }
  return tally.result("values of Q");
}

std::unique_ptr<workload> make_mri_q(std::size_t voxels, std::size_t samples, std::size_t chunk) {
  mri_q_problem p;
  p.voxels = voxels;
  p.samples = samples;
  p.chunk = chunk;
  // k-space in cycles per field of view (±16), voxels within the field of view (±½): arguments up to
  // 2π·24, as a 32³ acquisition's.
  p.kx = uniform_floats(samples, 0x5eed0301, -16.0f, 16.0f);
  p.ky = uniform_floats(samples, 0x5eed0302, -16.0f, 16.0f);
  p.kz = uniform_floats(samples, 0x5eed0303, -16.0f, 16.0f);
  p.phi_r = uniform_floats(samples, 0x5eed0304, -1.0f, 1.0f);
  p.phi_i = uniform_floats(samples, 0x5eed0305, -1.0f, 1.0f);
  p.x = uniform_floats(voxels, 0x5eed0306, -0.5f, 0.5f);
  p.y = uniform_floats(voxels, 0x5eed0307, -0.5f, 0.5f);
  p.z = uniform_floats(voxels, 0x5eed0308, -0.5f, 0.5f);
  return std::make_unique<workload_over<mri_q_problem>>(
      std::move(p),
      host_sides<mri_q_problem>{mri_q_explicit, mri_q_shared, mri_q_managed, mri_q_managed_prefetch});
}

}  // namespace xf::shared_bench
