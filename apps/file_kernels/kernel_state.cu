// kernel_state: the vectors' device memory, and the last step of the A^T products (the blocks' column sums
// added up); begin_run, the start both inputs share.
#include "apps/file_kernels/kernel_state.hpp"

#include <cuda_runtime.h>

#include <stdexcept>

#include "apps/file_kernels/file_kernels.hpp"
#include "framework/core/cuda_check.hpp"

namespace xf::file_kernels {
namespace {

/// out[1][j] = column_init[j] (or 0) + Σ_b partials[b·cols + j]: a thread a column, the blocks in order.
__global__ void sum_columns_kernel(kernel_args a) {
  const std::uint64_t j = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (j >= a.cols) return;
  float s = a.column_init != nullptr ? a.column_init[j] : 0.0f;
  for (std::uint32_t b = 0; b < a.partial_blocks; ++b) s += a.partials[std::uint64_t{b} * a.cols + j];
  a.out[1][j] = s;
}

/// A column a thread: any multiple of the warp does; the sum is a few microseconds either way.
constexpr unsigned sum_columns_threads = 256;

}  // namespace

kernel_state::kernel_state(const kernel_spec& spec, matrix_shape shape, const kernel_inputs& in,
                           std::uint32_t blocks)
    : spec_(spec), shape_(shape) {
  args_.rows = shape.rows;
  args_.cols = shape.cols;
  args_.alpha = gesummv_alpha;
  args_.beta = gesummv_beta;
  for (int dr = 0; dr < 3; ++dr)
    for (int dc = 0; dc < 3; ++dc) args_.weight[3 * dr + dc] = conv2d_weight[dr][dc];
  for (std::uint32_t k = 0; k < spec.input_count; ++k) {
    const std::vector<float>& v = in.vectors.at(k);
    inputs_.emplace_back(v.size());
    XF_CUDA_TRY(cudaMemcpy(inputs_.back().get(), v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
    args_.in[k] = inputs_.back().get();
  }
  for (std::uint32_t k = 0; k < spec.output_count; ++k) {
    outputs_.emplace_back(shape.length(spec.outputs[k].along));
    args_.out[k] = outputs_.back().get();
  }
  if (spec.kind == kernel_kind::gesummv) {
    row_sums_ = device_buffer<float>(shape.rows);
    args_.row_sums = row_sums_.get();
  }
  if (spec.kind == kernel_kind::mvt || spec.kind == kernel_kind::atax || spec.kind == kernel_kind::bicg) {
    partials_ = device_buffer<float>(std::size_t{blocks} * shape.cols);  // zeroed: the blocks add into it
    args_.partials = partials_.get();
    args_.partial_blocks = blocks;
  }
  if (spec.kind == kernel_kind::mvt) args_.column_init = args_.in[3];
}

void kernel_state::finish(cudaStream_t stream) const {
  if (args_.partials == nullptr) return;
  const auto grid = static_cast<unsigned>((shape_.cols + sum_columns_threads - 1) / sum_columns_threads);
  sum_columns_kernel<<<grid, sum_columns_threads, 0, stream>>>(args_);
  XF_CUDA_TRY(cudaGetLastError());
}

std::vector<std::vector<float>> kernel_state::download() const {
  std::vector<std::vector<float>> out;
  for (std::uint32_t k = 0; k < spec_.output_count; ++k) {
    std::vector<float>& v = out.emplace_back(outputs_[k].size());
    XF_CUDA_TRY(cudaMemcpy(v.data(), outputs_[k].get(), v.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }
  return out;
}

run_result begin_run(const run_config& c, const kernel_spec& spec) {
  if (c.threads == 0 || c.threads % 32 != 0 || c.threads > 1024)
    throw std::invalid_argument("--threads: 32 to 1024 threads a block, a multiple of 32");
  int device = 0;
  XF_CUDA_TRY(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  XF_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  run_result r;
  r.device = prop.name;
  r.blocks = c.blocks != 0 ? c.blocks : 2 * static_cast<std::uint32_t>(prop.multiProcessorCount);
  r.tile_rows = tile_rows_for(spec, c.shape, c.request);
  return r;
}

}  // namespace xf::file_kernels
