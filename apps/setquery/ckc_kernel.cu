#include "apps/setquery/ckc_kernel.hpp"

#include "framework/core/cuda_check.hpp"

namespace xf::apps::setquery {

namespace {

__global__ void run_queries(const query_op::params* params, const std::byte* chunk, std::uint64_t frame_bytes,
                            std::uint64_t first_frame, std::uint64_t frames, std::byte* const* states,
                            std::uint64_t* failures) {
  const query_op::params& p = params[blockIdx.y];
  for (std::uint64_t k = blockIdx.x; k < frames; k += gridDim.x) {
    frame_task<std::uint8_t> task;
    task.offset = first_frame + k;
    task.thread_id = threadIdx.x;
    task.thread_count = blockDim.x;
    task.failure = &failures[blockIdx.y];
    task.state = states[blockIdx.y];
    task.in = reinterpret_cast<const std::uint8_t*>(chunk + k * frame_bytes);
    task.count = frame_bytes;
    query_op::compute(p, task);
  }
}

}  // namespace

void launch_queries(dim3 grid, unsigned block_threads, cudaStream_t stream, const query_op::params* params,
                    const std::byte* chunk, std::uint64_t frame_bytes, std::uint64_t first_frame,
                    std::uint64_t frames, std::byte* const* states, std::uint64_t* failures) {
  run_queries<<<grid, block_threads, 0, stream>>>(params, chunk, frame_bytes, first_frame, frames, states,
                                                  failures);
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::apps::setquery
