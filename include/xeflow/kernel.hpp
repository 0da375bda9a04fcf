// What a launcher's kernel file includes to fuse the built-in GPU operators and its own into the one
// persistent kernel:
//
//   const xf::kernel_program* my_kernel() { return xf::fused_kernel<xf::builtin_gpu_operators, my_op>(); }
//
// Compiled by nvcc (with the flags xeflow was built with: `pkg-config --variable=nvcc_flags xeflow`, or
// CMake's xeflow_add_kernel) it is the GPU kernel; compiled as plain C++ (`c++ -x c++`) it returns null,
// and the launcher runs its GPU operators on the host executor.
#pragma once

#include "framework/gpu/fused_kernel.cuh"
#include "operators/builtin_gpu.hpp"
