// Topologies of the built-in operators in tests: their registry, made once, and a YAML text run on the
// host executor in process.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "framework/model/registry.hpp"
#include "framework/model/yaml_loader.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/executor.hpp"
#include "framework/runtime/run_control.hpp"
#include "operators/builtin.hpp"
#include "tests/support/builtin_registry.hpp"

namespace xf::test {

/// Loads `yaml` (with `overrides`, as --set gives them) and runs it on the host executor; `check_plan` sees
/// the plan first. The run's failure, if any.
inline std::optional<run_error> run_yaml_on_host(const std::string& yaml,
                                                 const std::vector<std::string>& overrides = {},
                                                 const std::function<void(const plan&)>& check_plan = {}) {
  topology_spec spec = load_topology_text(yaml, "test.yaml", builtin_registry(), overrides);
  plan_options options;
  options.force_host = true;
  const plan p = make_plan(spec, builtin_registry(), options);
  if (check_plan) check_plan(p);
  run_control control;
  run_topology(p, spec, control);
  return control.failure();
}

}  // namespace xf::test
