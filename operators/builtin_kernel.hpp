// xeflow-run's GPU kernel: the virtualised kernel fused with the built-in GPU operators.
#pragma once

namespace xf {

class kernel_program;

/// The built-in operators' fused kernel, or null in a build without CUDA.
const kernel_program* builtin_kernel();

}  // namespace xf
