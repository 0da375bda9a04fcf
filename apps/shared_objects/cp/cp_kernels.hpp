// The launcher of cp's kernel (cp_kernels.cu), which every variant's host side calls.
#pragma once

#include <cstddef>

namespace xf::shared_bench {

/// An atom as the kernel reads it: its position in the grid's plane, its squared distance from the plane
/// (the CPU works that out for each chunk, as Parboil's cp does), and its charge.
struct alignas(16) cp_atom {
  float x, y, dz2, q;
};

/// The Coulombic potential of `count` atoms at every point of a grid_x × grid_y grid (spacing apart, x
/// fastest): energy = Σ q / r, added to what `energy` holds where `accumulate`, else written. Default
/// stream.
void launch_coulombic_potential(const cp_atom* atoms, std::size_t count, float* energy, std::size_t grid_x,
                                std::size_t grid_y, float spacing, bool accumulate);

}  // namespace xf::shared_bench
