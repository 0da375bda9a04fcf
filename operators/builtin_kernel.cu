// xeflow-run's GPU kernel: the virtualised kernel fused with the built-in GPU operators (null in a build
// without CUDA, where this file is compiled as C++).
#include "framework/gpu/fused_kernel.cuh"
#include "operators/builtin_gpu.hpp"

XF_KERNEL(xf::builtin_gpu_operators)
