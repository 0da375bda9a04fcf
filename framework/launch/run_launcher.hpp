// run_launcher<List>: xeflow-run as a function for a launcher whose GPU operators are `List`
// (launcher.hpp says what the launcher does). Apart from launcher.hpp so that only launchers parse the
// built-in operators' headers.
#pragma once

#include <functional>

#include "framework/launch/launcher.hpp"
#include "framework/model/gpu_operator_list.hpp"
#include "operators/builtin.hpp"
#include "operators/builtin_gpu.hpp"

namespace xf {

/// run_launcher with the GPU operators of `GpuOperators` (a gpu_operator_list, registered under their
/// class names, run in compiled_kernel<GpuOperators>()) and the CPU operators `add_cpu_operators` adds.
template <class GpuOperators>
int run_launcher(int argc, char** argv,
                 const std::function<void(operator_registry&)>& add_cpu_operators = {}) {
  launcher_operators operators;
  operators.add = [&](operator_registry& registry) {
    // A list that begins with the built-in GPU operators registers them through the operators library,
    // where their host code is compiled once: instantiating it again was most of a launcher's compile
    // (xeflow-run.cpp: 15 s of g++, 27 s of clang with ASan).
    using rest = after_prefix<builtin_gpu_operators, GpuOperators>;
    if constexpr (rest::value) {
      register_builtin_gpu_operators(registry);
      registry.add_gpu_operators<typename rest::type>();
    } else {
      registry.add_gpu_operators<GpuOperators>();
    }
    if (add_cpu_operators) add_cpu_operators(registry);
  };
  operators.kernel_types = operator_types<GpuOperators>();
  operators.kernel = compiled_kernel<GpuOperators>();
  return run_launcher(argc, argv, operators);
}

}  // namespace xf
