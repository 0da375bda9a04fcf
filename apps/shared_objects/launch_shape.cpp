// The current device's multiprocessor count, asked once (launch_shape.hpp).
#include "apps/shared_objects/launch_shape.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "framework/core/cuda_check.hpp"

namespace xf::shared_bench {

unsigned grid_for(std::size_t items, unsigned threads, unsigned blocks_per_sm) {
  static const unsigned multiprocessors = [] {
    int device = 0, count = 0;
    XF_CUDA_TRY(cudaGetDevice(&device));
    XF_CUDA_TRY(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return static_cast<unsigned>(count);
  }();
  const std::size_t wanted = (items + threads - 1) / threads;
  return static_cast<unsigned>(
      std::clamp<std::size_t>(wanted, 1, std::size_t{multiprocessors} * blocks_per_sm));
}

}  // namespace xf::shared_bench
