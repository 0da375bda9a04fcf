// cp's inputs and its CPU reference (cp.hpp).
#include "apps/shared_objects/cp/cp.hpp"

#include <algorithm>
#include <cmath>

#include "apps/shared_objects/inputs.hpp"

namespace xf::shared_bench {
namespace {

/// The points checked at a measured size: this many, spread over the whole grid.
constexpr std::size_t sampled_points = 2048;
/// A term's own float error in units of u: the squared distance's roundings (3), rsqrtf's 2 ulp (up to 4u
/// near a power of two), the product (1).
constexpr double term_ulps = 8;

}  // namespace

check_result cp_problem::check(const output& out, bool thorough) const {
  if (out.values.size() != points())
    return {false, "the output has " + std::to_string(out.values.size()) + " values"};
  const std::size_t step = thorough ? 1 : std::max<std::size_t>(1, points() / sampled_points);
  error_tally tally;
  for (std::size_t i = 0; i < points(); i += step) {
    // The point's coordinates rounded to float as the kernel's are: from 100 Å off, rounding them alone
    // would move r by more than the bound allows for.
    const float px = spacing * static_cast<float>(i % grid_x);
    const float py = spacing * static_cast<float>(i / grid_x);
    double potential = 0;
    float_sum_bound bound;
    for (std::size_t first = 0; first < atoms; first += chunk) {
      double chunk_sum = 0;  // the kernel's order: a chunk's terms, then the chunk added to the grid
      for (std::size_t a = first; a < std::min(atoms, first + chunk); ++a) {
        const double dx = static_cast<double>(px) - atom_x[a], dy = static_cast<double>(py) - atom_y[a];
        const double dz = atom_z[a];
        const double term = atom_q[a] / std::sqrt(dx * dx + dy * dy + dz * dz);
        chunk_sum += term;
        bound.term(term, term_ulps * float_roundoff * std::fabs(term));
        bound.partial(chunk_sum);
      }
      potential += chunk_sum;
      bound.partial(potential);
    }
    tally.add(out.values[i], potential, bound.bound());
  }
  return tally.result("points");
}

std::unique_ptr<workload> make_cp(std::size_t grid_x, std::size_t grid_y, std::size_t atoms,
                                  std::size_t chunk) {
  cp_problem p;
  p.grid_x = grid_x;
  p.grid_y = grid_y;
  p.atoms = atoms;
  p.chunk = chunk;
  // Atoms over the grid's extent, 1 to 20 Å above its plane (none on it: 1/r stays finite), charges ±1.
  p.atom_x = uniform_floats(atoms, 0x5eed0201, 0.0f, p.spacing * static_cast<float>(grid_x));
  p.atom_y = uniform_floats(atoms, 0x5eed0202, 0.0f, p.spacing * static_cast<float>(grid_y));
  p.atom_z = uniform_floats(atoms, 0x5eed0203, 1.0f, 20.0f);
  p.atom_q = uniform_floats(atoms, 0x5eed0204, -1.0f, 1.0f);
  return std::make_unique<workload_over<cp_problem>>(
      std::move(p), host_sides<cp_problem>{cp_explicit, cp_shared, cp_managed, cp_managed_prefetch});
}

}  // namespace xf::shared_bench
