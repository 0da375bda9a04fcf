// The fused kernel of the built-in GPU operators (also compiled as C++ in builds without CUDA, where it
// is null).
#include "framework/gpu/fused_kernel.cuh"
#include "operators/builtin_gpu.hpp"
#include "operators/builtin_kernel.hpp"

namespace xf {

const kernel_program* builtin_kernel() {
  return fused_kernel<builtin_gpu_operators>();
}

}  // namespace xf
