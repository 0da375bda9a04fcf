// xeflow-file-kernels' runs (the end-to-end file benchmark): one of the PolyBench-style kernels over the
// matrices of a file, its input read either by the kernel's own blocks through xeflow's file cache
// (`gpufs`: block_read into each block's window, compute as the rows arrive, no host copy) or by the CPU
// I/O baseline (`cpu-io`: N pread threads into pinned buffers + cudaMemcpyAsync into device memory, slab by
// slab, the kernel computing on one slab while the threads read the next). Both time the whole thing, from
// the first read to the result in device memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/file_kernels/kernel_spec.hpp"
#include "apps/file_kernels/matrix_file.hpp"
#include "framework/files/file_cache_spec.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/files/io_service.hpp"

namespace xf::file_kernels {

enum class input_mode : std::uint8_t { gpufs, cpu_io };

/// gpufs: which tiles a block takes. blocked: its own band of rows, tile after tile (a sequential stream a
/// block, the order the per-block readahead follows); interleaved: tiles blockIdx.x, + gridDim.x, … of the
/// whole matrix, so that the blocks' reads in flight cover one stretch of the file (conv2d then reads each
/// tile's row above and below with it).
enum class tile_order : std::uint8_t { blocked, interleaved };

struct run_config {
  kernel_kind kind = kernel_kind::atax;
  matrix_shape shape;
  std::string path;
  input_mode input = input_mode::gpufs;
  std::uint32_t blocks = 0;  ///< 0: two per SM
  /// A block's, a multiple of 32. 1024: the gpufs kernels ran 6 % (tuned) and 9 % (the cache's defaults)
  /// faster than with 512 from the page cache, cpu-io's the same (geomeans of the five kernels, warm, one
  /// H100: bench/results/files/machine-3/).
  std::uint32_t threads = 1024;
  std::uint64_t request =
      1 << 20;            ///< gpufs: a block's read (whole rows, about this many bytes); cpu-io: a pread
  file_cache_spec cache;  ///< gpufs: the file cache (its io_threads: the host I/O threads)
  tile_order order = tile_order::blocked;  ///< gpufs
  unsigned io_threads = 4;                 ///< cpu-io: pread threads
  unsigned buffers = 2;                    ///< cpu-io: pinned buffers per thread
  std::uint64_t slab = 256 << 20;  ///< cpu-io: bytes read before the kernel runs on them (whole requests)
  direct_io_mode direct = direct_io_mode::automatic;  ///< cpu-io (gpufs: cache.direct)
};

struct run_result {
  std::string device;
  std::uint64_t bytes = 0;  ///< the file's
  double seconds = 0;       ///< from the first read to the outputs in device memory (steady_clock)
  std::uint32_t blocks = 0;
  std::uint64_t tile_rows = 0;              ///< rows a block works on at a time
  bool direct = false;                      ///< the file was read O_DIRECT
  fetch_counters fetch;                     ///< gpufs: summed over blocks
  std::vector<io_thread_stats> io;          ///< gpufs: the cache's I/O threads
  std::vector<std::vector<float>> outputs;  ///< the spec's order, copied to the host after the timing
  double gbps() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0; }
};

/// Rows a block takes at a time: about `request` bytes of whole rows, at least one (conv2d: two, so that the
/// two rows its next tile needs again never overlap where they move to), at most the matrix.
inline std::uint64_t tile_rows_for(const kernel_spec& spec, matrix_shape shape, std::uint64_t request) {
  const std::uint64_t least = spec.kind == kernel_kind::conv2d ? 2 : 1;
  return std::min(shape.rows, std::max(least, request / shape.row_bytes()));
}

/// What both inputs start a run with: the block size checked (std::invalid_argument), the device's name,
/// the grid (two blocks per SM unless given) and the rows a block takes at a time. Throws cuda_error.
run_result begin_run(const run_config& c, const kernel_spec& spec);

/// A launch of the cpu-io input's kernel: rows [first_row, end_row) of matrix `matrix`.
struct row_launch {
  std::uint32_t matrix = 0;
  std::uint64_t first_row = 0, end_row = 0;
  friend bool operator==(const row_launch&, const row_launch&) = default;
};

/// The launches that follow once the file's bytes [0, loaded_bytes) are in device memory, the kernel having
/// been launched on the file's rows (all matrices' rows in file order) before `done`, which moves past them:
/// the rows now complete — for conv2d only those whose next row is too, as output row i reads input row
/// i + 1 (the last row, border, reads none) — one launch per matrix, since GESUMMV's B rows read the row
/// sums an earlier launch wrote for A's.
inline std::vector<row_launch> launches_after(const kernel_spec& spec, matrix_shape shape,
                                              std::uint64_t loaded_bytes, std::uint64_t& done) {
  const std::uint64_t file_rows = spec.matrices * shape.rows;
  const std::uint64_t loaded =
      loaded_bytes >= input_bytes(spec, shape) ? file_rows : loaded_bytes / shape.row_bytes();
  const std::uint64_t ready =
      spec.kind != kernel_kind::conv2d || loaded == file_rows ? loaded : loaded - (loaded > 0 ? 1 : 0);
  std::vector<row_launch> launches;
  while (done < ready) {
    const auto matrix = static_cast<std::uint32_t>(done / shape.rows);
    const std::uint64_t stop = std::min(ready, (matrix + 1) * shape.rows);
    launches.push_back({matrix, done - matrix * shape.rows, stop - matrix * shape.rows});
    done = stop;
  }
  return launches;
}

/// The runs. Each throws run_error (a failed read: the path and byte offset), cuda_error, and
/// std::invalid_argument for settings it cannot run (too little device memory, a read larger than a block's
/// share of the cache). The file must hold the kernel's matrices at c.shape (check_matrix_file).
run_result run_gpufs(const run_config& c, const kernel_inputs& in);
run_result run_cpu_io(const run_config& c, const kernel_inputs& in);

}  // namespace xf::file_kernels
