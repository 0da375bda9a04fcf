// xeflow-file-kernels' gpufs input: the file cache in device memory with host I/O threads behind it, and
// the kernel whose blocks read their rows with block_read (GPUfs's gread) into a window of their own and
// compute on each tile as it arrives — the file's bytes reach the kernel with no copy through the host's
// program.
#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "apps/file_kernels/file_kernels.hpp"
#include "apps/file_kernels/kernel_state.hpp"
#include "apps/file_kernels/tile_math.cuh"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/files/file_cache.hpp"
#include "framework/gpu/block_readers.cuh"
#include "framework/gpu/device_cache_memory.hpp"

namespace xf::file_kernels {
namespace {

struct gpufs_args {
  kernel_args k;
  block_readers_view readers;
  float* windows;               ///< block b's window at b·window_floats (device memory)
  std::uint64_t window_floats;  ///< a tile's rows, and conv2d's row above and row below
  std::uint64_t tile_rows;
  bool interleaved;          ///< tile_order::interleaved
  fetch_counters* counters;  ///< [blocks]
  std::uint32_t* failed;     ///< 1 + block_read_status of the first failed read
};

/// Block b computes its tiles of the output (tile_order: rows block_rows(rows, blocks, b), or every
/// gridDim.x-th tile from tile b), tile by tile: it reads the tile's rows of each matrix into its window
/// (conv2d: with the rows above and below; in a band, the next tile's window keeps the last two rows it
/// already has and reads the rest) and runs the tile's arithmetic on them. Its readahead stops where the
/// rows it reads in a row end (its band's, or the tile's when interleaved): the next rows are another
/// block's, and reading them ahead fetched 3 % of a 4 GiB file twice (measured on
/// the H100).
/// __launch_bounds__(1024): any --threads launches, whatever registers the build gives it.
template <kernel_kind K>
__global__ void __launch_bounds__(1024) gpufs_kernel(gpufs_args a) {
  __shared__ deferred_moves moves;
  __shared__ float scratch[32];
  if (threadIdx.x == 0) moves.clear();
  __syncthreads();
  fetch_counters counters{};
  const std::uint64_t rows = a.k.rows, cols = a.k.cols, row_bytes = cols * sizeof(float);
  const row_range mine = block_rows(rows, gridDim.x, blockIdx.x);
  float* window = a.windows + std::uint64_t{blockIdx.x} * a.window_floats;
  // Reads `count` rows of matrix `matrix` from `first` into dst, reading ahead no further than row
  // `last_row` (exclusive) of the matrix: the end of the rows this block reads in a row, past which the
  // rows are another block's. False (the block's failure recorded) where the read failed. The status is
  // the block's: every thread returns the same.
  const auto read_rows = [&](std::uint32_t matrix, std::uint64_t first, std::uint64_t count,
                             std::uint64_t last_row, float* dst) {
    const block_read_status status =
        a.readers.read(moves, counters, 0, (matrix * rows + first) * row_bytes, count * row_bytes,
                       reinterpret_cast<std::byte*>(dst), (matrix * rows + last_row) * row_bytes);
    if (status != block_read_status::ok && threadIdx.x == 0)
      atomicCAS(a.failed, 0u, 1u + static_cast<std::uint32_t>(status));
    return status == block_read_status::ok;
  };
  // Rows [i0, i0 + n) of the rows [.., end) the block reads one after another (its band, or the tile
  // itself when interleaved); `fresh`: the window holds nothing of it yet (conv2d: the first tile of a
  // band, or any interleaved tile).
  const auto tile = [&](std::uint64_t i0, std::uint64_t n, std::uint64_t end, bool fresh) {
    bool ok = true;
    if constexpr (K == kernel_kind::conv2d) {
      // Window row k holds row i0 − 1 + k: the tile starts at window row 1. Rows outside the matrix are
      // never read (the output's border rows need none).
      const std::uint64_t hi = i0 + n + 1 < rows ? i0 + n + 1 : rows;
      const std::uint64_t last = end + 1 < rows ? end + 1 : rows;  // the band's row below
      if (fresh) {
        const std::uint64_t lo = i0 == 0 ? 0 : i0 - 1;
        ok = read_rows(0, lo, hi - lo, last, window + (lo + 1 - i0) * cols);
      } else {
        // The previous tile was whole (tile_rows ≥ 2): its window rows tile_rows and tile_rows + 1 are rows
        // i0 − 1 and i0, and move to 0 and 1 without overlapping.
        for (std::uint64_t e = threadIdx.x; e < 2 * cols; e += blockDim.x)
          window[e] = window[a.tile_rows * cols + e];
        __syncthreads();
        if (hi > i0 + 1) ok = read_rows(0, i0 + 1, hi - i0 - 1, last, window + 2 * cols);
      }
      if (ok) process_tile<K>(a.k, 0, i0, n, window + cols, scratch);
    } else {
      constexpr std::uint32_t matrices = K == kernel_kind::gesummv ? 2 : 1;
      for (std::uint32_t m = 0; ok && m < matrices; ++m) {
        ok = read_rows(m, i0, n, end, window);
        if (ok) process_tile<K>(a.k, m, i0, n, window, scratch);
      }
    }
    return ok;
  };
  bool ok = true;
  if (a.interleaved) {
    const std::uint64_t step = std::uint64_t{gridDim.x} * a.tile_rows;
    for (std::uint64_t i0 = blockIdx.x * a.tile_rows; ok && i0 < rows; i0 += step) {
      const std::uint64_t n = a.tile_rows < rows - i0 ? a.tile_rows : rows - i0;
      ok = tile(i0, n, i0 + n, true);
    }
  } else {
    for (std::uint64_t i0 = mine.begin; ok && i0 < mine.end; i0 += a.tile_rows)
      ok = tile(i0, a.tile_rows < mine.end - i0 ? a.tile_rows : mine.end - i0, mine.end, i0 == mine.begin);
  }
  if (threadIdx.x == 0) a.counters[blockIdx.x] = counters;
}

void launch(kernel_kind kind, std::uint32_t blocks, std::uint32_t threads, cudaStream_t stream,
            const gpufs_args& a) {
  switch (kind) {
    case kernel_kind::conv2d:
      gpufs_kernel<kernel_kind::conv2d><<<blocks, threads, 0, stream>>>(a);
      break;
    case kernel_kind::gesummv:
      gpufs_kernel<kernel_kind::gesummv><<<blocks, threads, 0, stream>>>(a);
      break;
    case kernel_kind::mvt:
      gpufs_kernel<kernel_kind::mvt><<<blocks, threads, 0, stream>>>(a);
      break;
    case kernel_kind::atax:
      gpufs_kernel<kernel_kind::atax><<<blocks, threads, 0, stream>>>(a);
      break;
    case kernel_kind::bicg:
      gpufs_kernel<kernel_kind::bicg><<<blocks, threads, 0, stream>>>(a);
      break;
  }
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace

run_result run_gpufs(const run_config& c, const kernel_inputs& in) {
  const kernel_spec& spec = spec_of(c.kind);
  run_result r = begin_run(c, spec);

  const auto site_of = [](std::uint32_t, std::uint64_t offset) {
    return fault_site{"xeflow-file-kernels", "", offset};
  };
  file_cache cache(c.cache, r.blocks,
                   {cache_file{c.path, fault_site{"xeflow-file-kernels", "", std::nullopt}}}, site_of,
                   std::chrono::milliseconds(30000), std::make_unique<device_cache_memory>());
  r.bytes = cache.sizes().at(0);
  r.direct = cache.files().file(0).direct;
  if (r.bytes != input_bytes(spec, c.shape))
    throw std::runtime_error("the file's size changed since it was checked");
  const std::uint64_t halo = c.kind == kernel_kind::conv2d ? 2 : 0;
  const std::uint64_t window_floats = (r.tile_rows + halo) * c.shape.cols;
  block_readers readers(cache, window_floats * sizeof(float));
  kernel_state state(spec, c.shape, in, r.blocks);
  device_buffer<float> windows(std::size_t{r.blocks} * window_floats);
  device_buffer<fetch_counters> counters(r.blocks);
  device_buffer<std::uint32_t> failed(1);

  gpufs_args a{};
  a.k = state.args();
  a.readers = readers.view();
  a.windows = windows.get();
  a.window_floats = window_floats;
  a.tile_rows = r.tile_rows;
  a.interleaved = c.order == tile_order::interleaved;
  a.counters = counters.get();
  a.failed = failed.get();

  cuda_stream stream;
  cache.start();
  const auto start = std::chrono::steady_clock::now();
  launch(c.kind, r.blocks, c.threads, stream.get(), a);
  // A failed read is answered, and so is a hung one once poll's watchdog gives up on it: the kernel ends.
  std::optional<run_error> io_error;
  while (cudaStreamQuery(stream.get()) == cudaErrorNotReady) {
    if (!io_error) io_error = cache.poll();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  if (!io_error) io_error = cache.poll();
  if (io_error) throw *io_error;
  std::uint32_t failure = 0;
  XF_CUDA_TRY(cudaMemcpy(&failure, failed.get(), sizeof failure, cudaMemcpyDeviceToHost));
  if (failure != 0)
    throw std::runtime_error(failure == 1 + static_cast<std::uint32_t>(block_read_status::too_large)
                                 ? "a read spans more pages than a block may hold"
                                 : "a read of the file failed");
  state.finish(stream.get());
  XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  cache.stop();
  r.io = cache.io_stats();
  std::vector<fetch_counters> per_block(r.blocks);
  XF_CUDA_TRY(cudaMemcpy(per_block.data(), counters.get(), sizeof(fetch_counters) * r.blocks,
                         cudaMemcpyDeviceToHost));
  for (const fetch_counters& f : per_block) r.fetch += f;
  r.outputs = state.download();
  return r;
}

}  // namespace xf::file_kernels
