// The launcher of the 3D stencil's time step (stencil_kernels.cu), which every variant's host side calls.
#pragma once

#include <cstddef>

namespace xf::shared_bench {

/// The 7-point stencil's coefficients: out = centre·in + neighbour·(sum of the six neighbours) inside the
/// volume, out = in on its faces. They sum to one with both positive (an average: values stay within
/// the range of the inputs, and rounding errors do not grow from step to step).
inline constexpr float stencil_centre = 0.4f;
inline constexpr float stencil_neighbour = 0.1f;

/// One time step over an edge³ volume (x fastest, then y, then z), `in` to `out`, on the default stream.
void launch_stencil_step(const float* in, float* out, std::size_t edge);

}  // namespace xf::shared_bench
