// The test programs' GPU kernel (tests/support/test_kernel.hpp's list); null in a build without CUDA.
#include "framework/gpu/fused_kernel.cuh"
#include "tests/support/test_kernel.hpp"

XF_KERNEL(xf::test::test_gpu_operators)
