// The 3D stencil's time step, the same for every variant (stencil_kernels.hpp). A thread owns one (x, y)
// column and walks it along z, keeping the column's three z-neighbours in registers; x and y neighbours are
// read from memory (the block's neighbouring threads read the same lines, so L1 serves most of them).
#include <cuda_runtime.h>

#include "apps/shared_objects/stencil/stencil_kernels.hpp"
#include "framework/core/cuda_check.hpp"

namespace xf::shared_bench {
namespace {

/// 32 threads along x: a warp reads whole 128-byte lines of a row.
constexpr unsigned stencil_block_x = 32;
constexpr unsigned stencil_block_y = 8;

__global__ void stencil_step_kernel(const float* __restrict__ in, float* __restrict__ out, unsigned edge,
                                    float centre, float neighbour) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= edge || y >= edge) return;
  const std::size_t row = edge, plane = std::size_t{edge} * edge;
  const std::size_t column = y * row + x;
  const bool face = x == 0 || y == 0 || x == edge - 1 || y == edge - 1;
  float below = in[column];
  out[column] = below;  // z = 0: a face
  if (edge == 1) return;
  float here = in[column + plane];
  for (unsigned z = 1; z + 1 < edge; ++z) {
    const std::size_t c = column + z * plane;
    const float above = in[c + plane];
    if (face) {
      out[c] = here;
    } else {
      // The order of the sum is the CPU reference's.
      const float sum = in[c - 1] + in[c + 1] + in[c - row] + in[c + row] + below + above;
      out[c] = centre * here + neighbour * sum;
    }
    below = here;
    here = above;
  }
  out[column + (edge - 1) * plane] = here;  // z = edge - 1: a face
}

}  // namespace

void launch_stencil_step(const float* in, float* out, std::size_t edge) {
  const auto e = static_cast<unsigned>(edge);
  const dim3 block(stencil_block_x, stencil_block_y);
  const dim3 grid((e + stencil_block_x - 1) / stencil_block_x, (e + stencil_block_y - 1) / stencil_block_y);
  stencil_step_kernel<<<grid, block>>>(in, out, e, stencil_centre, stencil_neighbour);
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::shared_bench
