// The problems a topology's loading or validation reports, as the text the config tests compare: every
// problem ("file:line:column: error: message", one a line) or the first, and "ok" when there is none.
#pragma once

#include <string>

#include "framework/model/registry.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/yaml_loader.hpp"
#include "tests/config/test_registry.hpp"

namespace xf::test {

/// Every problem of validating `spec` against `registry`, one a line, or "ok".
inline std::string validation_problems(topology_spec spec,
                                       const operator_registry& registry = config_registry()) {
  try {
    validate_topology(spec, registry);
  } catch (const config_error& e) {
    return e.what();
  }
  return "ok";
}

/// The first problem of loading `yaml` as "t.yaml" against `registry`, or "ok".
inline std::string first_load_problem(const std::string& yaml,
                                      const operator_registry& registry = config_registry()) {
  try {
    load_topology_text(yaml, "t.yaml", registry);
  } catch (const config_error& e) {
    return e.first().str();
  }
  return "ok";
}

/// Every problem of loading `yaml` as "t.yaml" against `registry`, one a line, or "ok".
inline std::string load_problems(const std::string& yaml,
                                 const operator_registry& registry = config_registry()) {
  try {
    load_topology_text(yaml, "t.yaml", registry);
  } catch (const config_error& e) {
    return e.what();
  }
  return "ok";
}

}  // namespace xf::test
