// cp (Parboil): the Coulombic potential on a plane of a 3D grid from point charges, adapted from VMD's
// cionize. The atoms go to the GPU a chunk at a time, each chunk a kernel call that adds its potential to
// the grid; the CPU writes each chunk (working out its atoms' distances from the plane) between calls, and
// reads the grid at the end.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/shared_objects/cp/cp_kernels.hpp"
#include "apps/shared_objects/workload.hpp"

namespace xf::shared_bench {

struct cp_problem {
  static constexpr std::string_view name = "cp";
  std::size_t grid_x = 0, grid_y = 0;
  std::size_t atoms = 0;
  std::size_t chunk = 0;                              ///< atoms per kernel call
  float spacing = 0.1f;                               ///< Å between grid points, as Parboil's
  std::vector<float> atom_x, atom_y, atom_z, atom_q;  ///< the atoms as read; the grid's plane is z = 0

  std::size_t points() const { return grid_x * grid_y; }
  std::size_t chunks() const { return (atoms + chunk - 1) / chunk; }
  /// Atom i as the kernel reads it.
  cp_atom atom(std::size_t i) const { return {atom_x[i], atom_y[i], atom_z[i] * atom_z[i], atom_q[i]}; }

  std::vector<std::pair<std::string, std::uint64_t>> size() const {
    return {{"grid_x", grid_x}, {"grid_y", grid_y}, {"atoms", atoms}, {"chunk", chunk}};
  }
  std::uint64_t device_bytes() const { return points() * sizeof(float) + chunk * sizeof(cp_atom); }
  std::size_t device_arrays() const { return 2; }
  std::uint64_t source_bytes() const { return atoms * 4 * sizeof(float); }
  /// Every point where `thorough`, else 2048 points spread over the grid, against Σ q/r in double, within
  /// float_sum_bound (workload.hpp) of the kernel's sum: each term's own error under 8u of it (the squared
  /// distance's roundings, rsqrtf's 2 ulp, the product), the partial sums in the kernel's order (a chunk's
  /// terms, then the chunk added to the grid).
  check_result check(const output& out, bool thorough) const;
};

void cp_explicit(run_context& ctx, const cp_problem& p, output& out);
void cp_shared(run_context& ctx, const cp_problem& p, output& out);
void cp_managed(run_context& ctx, const cp_problem& p, output& out);
void cp_managed_prefetch(run_context& ctx, const cp_problem& p, output& out);

std::unique_ptr<workload> make_cp(std::size_t grid_x, std::size_t grid_y, std::size_t atoms,
                                  std::size_t chunk);

}  // namespace xf::shared_bench
