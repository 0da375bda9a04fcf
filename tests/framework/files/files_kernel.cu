// The files tests' GPU kernel (files_kernel.hpp): the file cache's protocol compiled as device code and
// run by the device cases of file_cache_run_test.cpp on the H100.
#include "tests/framework/files/files_kernel.hpp"

#include "apps/custom_operator/golden_diff_op.hpp"
#include "framework/gpu/fused_kernel.cuh"
#include "operators/builtin_gpu.hpp"
#include "tests/framework/files/indexed_add.hpp"
#include "tests/framework/files/small_files_reader.hpp"

namespace xf::test {

const kernel_program* files_test_kernel() {
  return fused_kernel<builtin_gpu_operators, indexed_add, small_files_reader, example::golden_diff_op>();
}

}  // namespace xf::test
