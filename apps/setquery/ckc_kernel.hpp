// The copy-kernel-copy baselines' kernel (xeflow-setquery-ckc): the query operator's own compute over the
// frames of a chunk copied whole to the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "operators/olap/query.hpp"

namespace xf::apps::setquery {

/// Queues on `stream` the run of every variant over the chunk's `frames` frames, the table's frames
/// `first_frame` onwards, `frame_bytes` apart in `chunk`: one block per (frame, variant), blockIdx.y the
/// variant (`params`, `states` and `failures` hold one each), the blocks striding over the frames. Throws
/// when the launch fails.
void launch_queries(dim3 grid, unsigned block_threads, cudaStream_t stream, const query_op::params* params,
                    const std::byte* chunk, std::uint64_t frame_bytes, std::uint64_t first_frame,
                    std::uint64_t frames, std::byte* const* states, std::uint64_t* failures);

}  // namespace xf::apps::setquery
