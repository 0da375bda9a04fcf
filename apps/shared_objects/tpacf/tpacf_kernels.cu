// tpacf's kernels, the same for every variant (tpacf_kernels.hpp). A block takes a tile of set a's points
// (one per thread) against a run of set b's tiles staged through shared memory, counts its pairs in per-warp
// shared histograms (shared atomics on few addresses contend less per warp) and adds them to the global
// histogram once at the end.
#include <cuda_runtime.h>

#include "apps/shared_objects/tpacf/tpacf_kernels.hpp"
#include "framework/core/cuda_check.hpp"

namespace xf::shared_bench {
namespace {

constexpr unsigned clear_threads = 256;
constexpr unsigned pair_threads = 256;
constexpr unsigned pair_warps = pair_threads / 32;
/// Set b's tiles per block: 2048 points, so that a few thousand points give a grid of hundreds of blocks
/// (a warp then counts at most 32·2048 pairs: no 32-bit shared counter overflows).
constexpr unsigned pair_tiles_per_block = 8;

__global__ void tpacf_clear_kernel(unsigned long long* counts, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x)
    counts[i] = 0;
}

__global__ void tpacf_pairs_kernel(const float* __restrict__ a, const float* __restrict__ b, unsigned points,
                                   bool same_set, tpacf_edges edges,
                                   unsigned long long* __restrict__ histogram) {
  __shared__ double edge[tpacf_max_bins + 1];
  __shared__ float tile_x[pair_threads], tile_y[pair_threads], tile_z[pair_threads];
  __shared__ unsigned counts[pair_warps][tpacf_max_bins + 2];
  const unsigned i_first = blockIdx.x * pair_threads;
  const unsigned j_first = blockIdx.y * pair_threads * pair_tiles_per_block;
  const unsigned j_end = min(points, j_first + pair_threads * pair_tiles_per_block);
  // Blocks with no pair to count leave at once (the whole block, before any barrier).
  if (j_first >= points || (same_set && j_end <= i_first + 1)) return;
  for (unsigned k = threadIdx.x; k < edges.count; k += pair_threads) edge[k] = edges.cosine[k];
  for (unsigned k = threadIdx.x; k < pair_warps * (tpacf_max_bins + 2); k += pair_threads)
    counts[k / (tpacf_max_bins + 2)][k % (tpacf_max_bins + 2)] = 0;
  const unsigned i = i_first + threadIdx.x;
  const bool mine = i < points;
  const float ax = mine ? a[i] : 0.0f, ay = mine ? a[points + i] : 0.0f, az = mine ? a[2 * points + i] : 0.0f;
  unsigned* warp_counts = counts[threadIdx.x / 32];
  for (unsigned base = j_first; base < j_end; base += pair_threads) {
    __syncthreads();  // the edges and counters are set, or the previous tile is used up
    const unsigned j = base + threadIdx.x;
    if (j < j_end) {
      tile_x[threadIdx.x] = b[j];
      tile_y[threadIdx.x] = b[points + j];
      tile_z[threadIdx.x] = b[2 * points + j];
    }
    __syncthreads();
    if (!mine) continue;
    const unsigned in_tile = min(pair_threads, j_end - base);
    for (unsigned t = 0; t < in_tile; ++t) {
      if (same_set && base + t <= i) continue;
      const double dot = tpacf_dot(ax, ay, az, tile_x[t], tile_y[t], tile_z[t]);
      atomicAdd(&warp_counts[tpacf_bin(dot, edge, edges.count)], 1u);
    }
  }
  __syncthreads();
  for (unsigned k = threadIdx.x; k <= edges.count; k += pair_threads) {
    unsigned long long total = 0;
    for (unsigned w = 0; w < pair_warps; ++w) total += counts[w][k];
    if (total != 0) atomicAdd(&histogram[k], total);
  }
}

}  // namespace

void launch_tpacf_clear(std::uint64_t* counts, std::size_t count) {
  const auto blocks = static_cast<unsigned>((count + clear_threads - 1) / clear_threads);
  const unsigned grid = blocks > 0 ? blocks : 1;
  tpacf_clear_kernel<<<grid, clear_threads>>>(reinterpret_cast<unsigned long long*>(counts), count);
  XF_CUDA_TRY(cudaGetLastError());
}

void launch_tpacf_pairs(const float* a, const float* b, std::size_t points, bool same_set,
                        const tpacf_edges& edges, std::uint64_t* histogram) {
  constexpr std::size_t block_span = std::size_t{pair_threads} * pair_tiles_per_block;
  const dim3 grid(static_cast<unsigned>((points + pair_threads - 1) / pair_threads),
                  static_cast<unsigned>((points + block_span - 1) / block_span));
  tpacf_pairs_kernel<<<grid, pair_threads>>>(a, b, static_cast<unsigned>(points), same_set, edges,
                                             reinterpret_cast<unsigned long long*>(histogram));
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::shared_bench
