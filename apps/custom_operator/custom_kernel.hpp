// This launcher's GPU kernel: the built-in GPU operators plus clamp_op, fused (custom_kernel.cu).
#pragma once

namespace xf {
class kernel_program;
}

namespace example {
/// Null in a build without CUDA (GPU operators then run on the host executor).
const xf::kernel_program* custom_kernel();
}  // namespace example
