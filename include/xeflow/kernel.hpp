// What a launcher's kernel file includes to fuse its GPU operators (its gpu_operator_list, usually the
// built-in ones plus its own) into the one persistent kernel. The file is one line after the includes:
//
//   XF_KERNEL(my_gpu_operators)  // defines xf::compiled_kernel<my_gpu_operators>()
//
// Compiled by nvcc (with the flags xeflow was built with: `pkg-config --variable=nvcc_flags xeflow`, or
// CMake's xeflow_add_kernel) it is the GPU kernel; compiled as plain C++ (`c++ -x c++`) the kernel is null,
// and the launcher runs its GPU operators on the host executor.
#pragma once

#include "framework/gpu/fused_kernel.cuh"
#include "operators/builtin_gpu.hpp"
