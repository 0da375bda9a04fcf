// xeflow-file-kernels' cpu-io input, the baseline: the CPU I/O baseline's threads (pread_copier: N preads
// into pinned buffers + cudaMemcpyAsync) bring the file into device memory slab by slab, and after each
// slab the kernel runs on the rows it completed — on its own stream, while the threads read the next slab.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "apps/file_baseline/pread_copier.hpp"
#include "apps/file_kernels/file_kernels.hpp"
#include "apps/file_kernels/kernel_state.hpp"
#include "apps/file_kernels/tile_math.cuh"
#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/files/file_table.hpp"

namespace xf::file_kernels {
namespace {

/// Rows [first_row, end_row) of matrix `matrix` (at `base`, in device memory) shared among the blocks,
/// each taking its rows tile by tile (its column sums into its own partial, like the gpufs kernel's).
/// __launch_bounds__(1024): any --threads launches, whatever registers the build gives it.
template <kernel_kind K>
__global__ void __launch_bounds__(1024)
    slab_kernel(kernel_args a, const float* base, std::uint32_t matrix, std::uint64_t first_row,
                std::uint64_t end_row, std::uint64_t tile_rows) {
  __shared__ float scratch[32];
  const row_range part = block_rows(end_row - first_row, gridDim.x, blockIdx.x);
  for (std::uint64_t i0 = first_row + part.begin; i0 < first_row + part.end; i0 += tile_rows) {
    const std::uint64_t n = tile_rows < first_row + part.end - i0 ? tile_rows : first_row + part.end - i0;
    process_tile<K>(a, matrix, i0, n, base + i0 * a.cols, scratch);
  }
}

void launch(kernel_kind kind, std::uint32_t blocks, std::uint32_t threads, cudaStream_t stream,
            const kernel_args& a, const float* base, std::uint32_t matrix, std::uint64_t first_row,
            std::uint64_t end_row, std::uint64_t tile_rows) {
  switch (kind) {
    case kernel_kind::conv2d:
      slab_kernel<kernel_kind::conv2d>
          <<<blocks, threads, 0, stream>>>(a, base, matrix, first_row, end_row, tile_rows);
      break;
    case kernel_kind::gesummv:
      slab_kernel<kernel_kind::gesummv>
          <<<blocks, threads, 0, stream>>>(a, base, matrix, first_row, end_row, tile_rows);
      break;
    case kernel_kind::mvt:
      slab_kernel<kernel_kind::mvt>
          <<<blocks, threads, 0, stream>>>(a, base, matrix, first_row, end_row, tile_rows);
      break;
    case kernel_kind::atax:
      slab_kernel<kernel_kind::atax>
          <<<blocks, threads, 0, stream>>>(a, base, matrix, first_row, end_row, tile_rows);
      break;
    case kernel_kind::bicg:
      slab_kernel<kernel_kind::bicg>
          <<<blocks, threads, 0, stream>>>(a, base, matrix, first_row, end_row, tile_rows);
      break;
  }
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace

run_result run_cpu_io(const run_config& c, const kernel_inputs& in) {
  const kernel_spec& spec = spec_of(c.kind);
  file_table files({.direct = c.direct, .max_direct_alignment = 4096});
  files.open(c.path, {"xeflow-file-kernels", "", std::nullopt});
  run_result r = begin_run(c, spec);
  r.bytes = files.file(0).size;
  r.direct = files.file(0).direct;
  if (r.bytes != input_bytes(spec, c.shape))
    throw std::runtime_error("the file's size changed since it was checked");
  std::size_t free_bytes = 0, total_bytes = 0;
  XF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (r.bytes > free_bytes / 10 * 9)
    throw std::invalid_argument("the file (" + std::to_string(r.bytes) +
                                " bytes) does not fit in the GPU's free memory (" +
                                std::to_string(free_bytes) + " bytes): the CPU I/O input holds all of it");
  device_buffer<float> matrices(r.bytes / sizeof(float));
  kernel_state state(spec, c.shape, in, r.blocks);
  file_baseline::pread_copier copier(files, 0, c.io_threads, c.request, c.buffers, "xeflow-file-kernels");
  const std::uint64_t slab = std::max(c.request, c.slab / c.request * c.request);
  auto* image = reinterpret_cast<std::byte*>(matrices.get());

  cuda_stream stream;
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t done = 0;  // file rows the kernel has been launched on
  for (std::uint64_t begin = 0; begin < r.bytes; begin += slab) {
    const std::uint64_t end = std::min(r.bytes, begin + slab);
    copier.read(begin, end, image + begin);  // returns once the slab's copies are complete
    for (const row_launch& l : launches_after(spec, c.shape, end, done))
      launch(c.kind, r.blocks, c.threads, stream.get(), state.args(),
             matrices.get() + l.matrix * c.shape.rows * c.shape.cols, l.matrix, l.first_row, l.end_row,
             r.tile_rows);
  }
  state.finish(stream.get());
  XF_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.outputs = state.download();
  return r;
}

}  // namespace xf::file_kernels
