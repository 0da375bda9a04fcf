// mri-fhd's inputs and its CPU reference (mri_fhd.hpp).
#include "apps/shared_objects/mri_fhd/mri_fhd.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "apps/shared_objects/inputs.hpp"

namespace xf::shared_bench {
namespace {

constexpr std::size_t sampled_voxels = 1024;

}  // namespace

check_result mri_fhd_problem::check(const output& out, bool thorough) const {
  if (out.values.size() != 2 * voxels)
    return {false, "the output has " + std::to_string(out.values.size()) + " values"};
  const std::size_t step = thorough ? 1 : std::max<std::size_t>(1, voxels / sampled_voxels);
  const double u = float_roundoff, two_pi = 2 * std::numbers::pi;
  error_tally tally;
  for (std::size_t v = 0; v < voxels; v += step) {
    double fh_r = 0, fh_i = 0;
    float_sum_bound bound_r, bound_i;
    for (std::size_t first = 0; first < samples; first += chunk) {
      double chunk_r = 0, chunk_i = 0;  // the kernel's order: a launch's samples, then added to F^H·d
      for (std::size_t k = first; k < std::min(samples, first + chunk); ++k) {
        const double pr = phi_r[k], pi = phi_i[k], dr = d_r[k], di = d_i[k];
        const double rho_r = pr * dr + pi * di, rho_i = pr * di - pi * dr;
        const double weight =
            std::fabs(pr * dr) + std::fabs(pi * di) + std::fabs(pr * di) + std::fabs(pi * dr);
        const double kxv = static_cast<double>(kx[k]) * x[v], kyv = static_cast<double>(ky[k]) * y[v],
                     kzv = static_cast<double>(kz[k]) * z[v];
        const double angle = two_pi * (kxv + kyv + kzv);
        const double c = std::cos(angle), s = std::sin(angle);
        const double term_r = rho_r * c - rho_i * s, term_i = rho_i * c + rho_r * s;
        // ρφ's roundings (2u of its weight), sincosf's 2 ulp and the term's products and difference (4u),
        // and the argument's rounding (under 5u·2π·S) moving cosine and sine by as much.
        const double own =
            weight * (6 * u + 5 * u * two_pi * (std::fabs(kxv) + std::fabs(kyv) + std::fabs(kzv)));
        chunk_r += term_r;
        chunk_i += term_i;
        bound_r.term(term_r, own);
        bound_i.term(term_i, own);
        bound_r.partial(chunk_r);
        bound_i.partial(chunk_i);
      }
      fh_r += chunk_r;
      fh_i += chunk_i;
      bound_r.partial(fh_r);
      bound_i.partial(fh_i);
    }
    tally.add(out.values[v], fh_r, bound_r.bound());
    tally.add(out.values[voxels + v], fh_i, bound_i.bound());
  }
  return tally.result("values of F^H·d");
}

std::unique_ptr<workload> make_mri_fhd(std::size_t voxels, std::size_t samples, std::size_t chunk) {
  mri_fhd_problem p;
  p.voxels = voxels;
  p.samples = samples;
  p.chunk = chunk;
  // As mri-q's: k-space within ±16 cycles per field of view, voxels within ±½ of it.
  p.kx = uniform_floats(samples, 0x5eed0401, -16.0f, 16.0f);
  p.ky = uniform_floats(samples, 0x5eed0402, -16.0f, 16.0f);
  p.kz = uniform_floats(samples, 0x5eed0403, -16.0f, 16.0f);
  p.phi_r = uniform_floats(samples, 0x5eed0404, -1.0f, 1.0f);
  p.phi_i = uniform_floats(samples, 0x5eed0405, -1.0f, 1.0f);
  p.d_r = uniform_floats(samples, 0x5eed0406, -1.0f, 1.0f);
  p.d_i = uniform_floats(samples, 0x5eed0407, -1.0f, 1.0f);
  p.x = uniform_floats(voxels, 0x5eed0408, -0.5f, 0.5f);
  p.y = uniform_floats(voxels, 0x5eed0409, -0.5f, 0.5f);
  p.z = uniform_floats(voxels, 0x5eed040a, -0.5f, 0.5f);
  return std::make_unique<workload_over<mri_fhd_problem>>(
      std::move(p), host_sides<mri_fhd_problem>{mri_fhd_explicit, mri_fhd_shared, mri_fhd_managed,
                                                mri_fhd_managed_prefetch});
}

}  // namespace xf::shared_bench
