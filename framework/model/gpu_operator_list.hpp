// A compile-time list of GPU operator types: what a launcher's fused kernel is built from
// (framework/gpu/fused_kernel.cuh). Lists nest: fused_kernel<builtin_gpu_operators, my_op> flattens them.
#pragma once

namespace xf {

template <class... Ops>
struct gpu_operator_list {};

}  // namespace xf
