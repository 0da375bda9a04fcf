// The built-in operators: one call adds them all to a registry (registration is explicit).
#pragma once

#include "framework/model/registry.hpp"

namespace xf {

/// Adds the built-in operators under their class names: sources sequence_source, random_source,
/// file_source; GPU maps scale, fma, pass_through; sinks verify_sink, null_sink, file_sink.
void register_builtin_operators(operator_registry& registry);

}  // namespace xf
