// An empty kernel for xeflow-mpi-gpu-sharing (gpu_sharing_kernel.cu).
#pragma once

#include <cuda_runtime_api.h>

namespace xf::mpi::bench {

/// Launches a kernel of one warp that does nothing on `stream`. Throws cuda_error if the launch fails.
void launch_empty_kernel(cudaStream_t stream);

}  // namespace xf::mpi::bench
