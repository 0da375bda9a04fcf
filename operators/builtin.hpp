// The built-in operators: one call adds them all to a registry (registration is explicit).
#pragma once

#include "framework/model/registry.hpp"

namespace xf {

/// Adds the built-in CPU operators under their class names: the sources (sequence_source, random_source,
/// file_source, prefetch_source, …), the CPU maps and the sinks (verify_sink, null_sink, file_sink, …).
void register_builtin_cpu_operators(operator_registry& registry);

/// Adds builtin_gpu_operators (operators/builtin_gpu.hpp) under their class names: compiled here once, so
/// that a launcher whose list begins with them does not instantiate their host code again.
void register_builtin_gpu_operators(operator_registry& registry);

/// Adds every built-in operator: the CPU ones and builtin_gpu_operators (operators/builtin_gpu.hpp).
void register_builtin_operators(operator_registry& registry);

}  // namespace xf
