// The faulty launcher's GPU kernel: the built-ins plus the misbehaving test operators.
#include "framework/gpu/fused_kernel.cuh"
#include "operators/builtin_gpu.hpp"
#include "tests/e2e/faulty_ops.hpp"

namespace xf::test {

const kernel_program* faulty_kernel() {
  return fused_kernel<builtin_gpu_operators, corrupt_at_op, fail_at_op, hang_at_op, wild_write_at_op>();
}

}  // namespace xf::test
