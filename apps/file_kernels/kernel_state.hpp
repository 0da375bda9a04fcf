// The vectors of a xeflow-file-kernels run in device memory: the inputs copied in, the outputs, GESUMMV's
// row sums and each block's column sums (the A^T products). kernel_state owns them on the host;
// kernel_args is the view the kernels of both inputs (gpufs_input.cu, cpu_io_input.cu) take by value.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "apps/file_kernels/kernel_spec.hpp"
#include "apps/file_kernels/matrix_file.hpp"
#include "framework/core/cuda_buffer.hpp"

namespace xf::file_kernels {

struct kernel_args {
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  float alpha = 0, beta = 0;  ///< gesummv's
  float weight[9] = {};       ///< conv2d's: weight[3·(dr + 1) + (dc + 1)] multiplies A[i + dr][j + dc]
  const float* in[4] = {};    ///< the input vectors, the spec's order
  float* out[2] = {};         ///< the outputs, the spec's order (conv2d's: the rows × cols matrix)
  float* row_sums = nullptr;  ///< gesummv: A's row i · x, written before B's row i is read [rows]
  float* partials = nullptr;  ///< mvt, atax, bicg: block b's column sums at b·cols [blocks × cols]
  const float* column_init = nullptr;  ///< added to the column output when it is summed up (mvt's x2_0)
  std::uint32_t partial_blocks = 0;    ///< the blocks of the kernels that add into `partials`
};

static_assert(std::is_trivially_copyable_v<kernel_args>, "passed to the kernels by value");

class kernel_state {
 public:
  /// Device memory for `spec`'s vectors at `shape` with `in` copied in, for kernels of at most `blocks`
  /// blocks (block b adds its column sums into partials at b·cols). Throws cuda_error.
  kernel_state(const kernel_spec& spec, matrix_shape shape, const kernel_inputs& in, std::uint32_t blocks);
  kernel_state(const kernel_state&) = delete;
  kernel_state& operator=(const kernel_state&) = delete;

  const kernel_args& args() const { return args_; }
  /// Queues on `stream` the column output's sum over the blocks' partials (mvt, atax, bicg; nothing for the
  /// others): after every kernel that adds into them.
  void finish(cudaStream_t stream) const;
  /// The outputs in host memory, the spec's order (synchronous: after the stream's work is done).
  std::vector<std::vector<float>> download() const;

 private:
  const kernel_spec& spec_;
  matrix_shape shape_;
  std::vector<device_buffer<float>> inputs_, outputs_;
  device_buffer<float> row_sums_, partials_;
  kernel_args args_;
};

}  // namespace xf::file_kernels
