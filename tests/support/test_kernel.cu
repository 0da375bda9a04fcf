// The test programs' GPU kernel, compiled once for both (fusing a kernel is most of a build's time): the
// built-in operators, the files tests' readers (files_test: file_cache_run_test.cpp's device cases) and the
// faulty launcher's misbehaving operators (xeflow-faulty: the end-to-end fault tests). Each program uses its
// own operators; the others sit unused in the kernel's list. Null in a build without CUDA.
#include "apps/custom_operator/golden_diff_op.hpp"
#include "framework/gpu/fused_kernel.cuh"
#include "operators/builtin_gpu.hpp"
#include "tests/e2e/faulty_ops.hpp"
#include "tests/framework/files/files_kernel.hpp"
#include "tests/framework/files/indexed_add.hpp"
#include "tests/framework/files/small_files_reader.hpp"

namespace xf::test {

namespace {
const kernel_program* test_kernel() {
  return fused_kernel<builtin_gpu_operators, indexed_add, small_files_reader, example::golden_diff_op,
                      corrupt_at_op, fail_at_op, hang_at_op, wild_write_at_op>();
}
}  // namespace

const kernel_program* files_test_kernel() {
  return test_kernel();
}
const kernel_program* faulty_kernel() {
  return test_kernel();
}

}  // namespace xf::test
