// The probe's GPU work: a kernel that does nothing, so that its time is the launch and, with two processes
// on one GPU, the switch between their contexts.
#include "bench/mpi/gpu_sharing_kernel.hpp"

#include "framework/core/cuda_check.hpp"

namespace xf::mpi::bench {

namespace {
__global__ void empty_kernel() {}
}  // namespace

void launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  XF_CUDA_TRY(cudaGetLastError());
}

}  // namespace xf::mpi::bench
