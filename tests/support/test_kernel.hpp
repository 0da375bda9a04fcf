// The test programs' GPU operators, one list: the built-in ones, the files tests' readers (files_test:
// file_cache_run_test.cpp's device cases) and the faulty launcher's misbehaving operators (xeflow-faulty:
// the end-to-end fault tests). Its kernel (test_kernel.cu) is compiled once for both programs, since fusing
// a kernel is most of a build's time; each program uses its own operators of it.
#pragma once

#include "apps/custom_operator/golden_diff_op.hpp"
#include "framework/kernel/kernel_program.hpp"
#include "framework/model/gpu_operator_list.hpp"
#include "operators/builtin_gpu.hpp"
#include "tests/e2e/faulty_ops.hpp"
#include "tests/framework/files/indexed_add.hpp"
#include "tests/framework/files/small_files_reader.hpp"

namespace xf::test {

using test_gpu_operators =
    gpu_operator_list<builtin_gpu_operators, indexed_add, small_files_reader, example::golden_diff_op,
                      corrupt_at_op, fail_at_op, hang_at_op, wild_write_at_op>;

}  // namespace xf::test
