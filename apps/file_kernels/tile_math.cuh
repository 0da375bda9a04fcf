// The kernels' arithmetic on a tile of rows already in device memory — the same for both inputs: the gpufs
// kernel's blocks pass the rows block_read put in their window, the CPU I/O kernel passes rows of the
// matrix the host threads copied in. A block works on a tile with all its threads (row dot products reduced
// over the block, column sums a column a thread) and adds its A^T sums into its own partial.
#pragma once

#include <cstdint>

#include "apps/file_kernels/kernel_state.hpp"

namespace xf::file_kernels {

/// Rows [begin, end) of block `part` of `parts`: contiguous pieces whose sizes differ by at most one.
struct row_range {
  std::uint64_t begin, end;
};
__device__ inline row_range block_rows(std::uint64_t n, std::uint64_t parts, std::uint64_t part) {
  const std::uint64_t base = n / parts, extra = n % parts;
  const std::uint64_t begin = part * base + (part < extra ? part : extra);
  return {begin, begin + base + (part < extra ? 1 : 0)};
}

/// The sum of every thread's `value`, valid in thread 0: warp shuffles, then the warps' sums through
/// `scratch` (32 floats of shared memory). Every thread calls it (blockDim a multiple of 32); it ends with
/// a barrier, so the scratch may be used again at once.
__device__ inline float block_sum(float value, float* scratch) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(0xffffffffu, value, offset);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  float total = 0;
  if (warp == 0) {
    total = lane < blockDim.x / 32 ? scratch[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_down_sync(0xffffffffu, total, offset);
  }
  __syncthreads();  // the warps' sums are read before a next call writes them
  return total;
}

/// For each row r of the tile, thread 0 calls use(r, row r · v).
template <class Use>
__device__ void row_dots(const float* tile, std::uint64_t rows, std::uint64_t cols, const float* v,
                         float* scratch, Use&& use) {
  for (std::uint64_t r = 0; r < rows; ++r) {
    const float* row = tile + r * cols;
    float s = 0;
    for (std::uint64_t j = threadIdx.x; j < cols; j += blockDim.x) s += row[j] * v[j];
    s = block_sum(s, scratch);
    if (threadIdx.x == 0) use(r, s);
  }
}

/// partial[j] += Σ_r tile[r][j] · w[r], a column a thread (only this block touches its partial).
__device__ inline void column_sums(const float* tile, std::uint64_t rows, std::uint64_t cols, const float* w,
                                   float* partial) {
  for (std::uint64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float s = 0;
    for (std::uint64_t r = 0; r < rows; ++r) s += tile[r * cols + j] * w[r];
    partial[j] += s;
  }
}

/// Matrix `matrix`'s rows [first_row, first_row + rows) at `tile` (row-major, `cols` floats a row), for
/// kernel K, by block blockIdx.x (its partial: partials + blockIdx.x·cols). conv2d also reads the rows just
/// above and below the tile (tile − cols, tile + rows·cols) where they are inside the matrix. Every thread
/// calls it; it ends with a barrier, so the caller may overwrite the tile at once.
template <kernel_kind K>
__device__ void process_tile(const kernel_args& a, std::uint32_t matrix, std::uint64_t first_row,
                             std::uint64_t rows, const float* tile, float* scratch) {
  const std::uint64_t cols = a.cols;
  if constexpr (K == kernel_kind::conv2d) {
    for (std::uint64_t r = 0; r < rows; ++r) {
      const std::uint64_t i = first_row + r;
      const bool interior_row = i >= 1 && i + 1 < a.rows;
      const float* row = tile + r * cols;
      for (std::uint64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float s = 0;
        if (interior_row && j >= 1 && j + 1 < cols) {
#pragma unroll
          for (int dr = -1; dr <= 1; ++dr)
#pragma unroll
            for (int dc = -1; dc <= 1; ++dc)
              s += a.weight[3 * (dr + 1) + (dc + 1)] *
                   row[static_cast<std::int64_t>(dr) * static_cast<std::int64_t>(cols) +
                       static_cast<std::int64_t>(j) + dc];
        }
        a.out[0][i * cols + j] = s;
      }
    }
  } else if constexpr (K == kernel_kind::gesummv) {
    if (matrix == 0)
      row_dots(tile, rows, cols, a.in[0], scratch,
               [&](std::uint64_t r, float s) { a.row_sums[first_row + r] = s; });
    else
      row_dots(tile, rows, cols, a.in[0], scratch, [&](std::uint64_t r, float s) {
        a.out[0][first_row + r] = a.alpha * a.row_sums[first_row + r] + a.beta * s;
      });
  } else if constexpr (K == kernel_kind::mvt) {  // x1 = x1_0 + A y1; x2 += A^T y2 (x2_0 added at the end)
    row_dots(tile, rows, cols, a.in[0], scratch,
             [&](std::uint64_t r, float s) { a.out[0][first_row + r] = a.in[2][first_row + r] + s; });
    column_sums(tile, rows, cols, a.in[1] + first_row, a.partials + std::uint64_t{blockIdx.x} * cols);
  } else if constexpr (K == kernel_kind::atax) {  // tmp = A x; y += A^T tmp, with the tmp just computed
    row_dots(tile, rows, cols, a.in[0], scratch,
             [&](std::uint64_t r, float s) { a.out[0][first_row + r] = s; });
    __syncthreads();  // thread 0's tmp values are visible to the block
    column_sums(tile, rows, cols, a.out[0] + first_row, a.partials + std::uint64_t{blockIdx.x} * cols);
  } else if constexpr (K == kernel_kind::bicg) {  // q = A p; s += A^T r
    row_dots(tile, rows, cols, a.in[0], scratch,
             [&](std::uint64_t r, float s) { a.out[0][first_row + r] = s; });
    column_sums(tile, rows, cols, a.in[1] + first_row, a.partials + std::uint64_t{blockIdx.x} * cols);
  }
  __syncthreads();  // every thread is done with the tile
}

}  // namespace xf::file_kernels
