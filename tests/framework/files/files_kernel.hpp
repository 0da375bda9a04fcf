// The files tests' GPU kernel: the built-in operators and the tests' file readers (null in a build
// without CUDA, where the device cases skip).
#pragma once

namespace xf {
class kernel_program;
namespace test {
const kernel_program* files_test_kernel();
}  // namespace test
}  // namespace xf
