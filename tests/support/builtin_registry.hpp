// The registry of every built-in operator, CPU and GPU, as xeflow-run registers them: made once, since
// tests (and fuzz targets, millions of times) ask for it again and again.
#pragma once

#include "framework/model/registry.hpp"
#include "operators/builtin.hpp"

namespace xf::test {

inline const operator_registry& builtin_registry() {
  static const operator_registry registry = [] {
    operator_registry r;
    register_builtin_operators(r);
    return r;
  }();
  return registry;
}

}  // namespace xf::test
