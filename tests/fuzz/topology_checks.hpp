// What the topology and --set targets check of a topology they load: the registry xeflow-run loads with,
// and to_yaml's promise (load_topology_text(to_yaml(s)) == s, and a second trip changes nothing).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/spec_yaml.hpp"
#include "framework/model/yaml_loader.hpp"
#include "operators/builtin.hpp"
#include "tests/fuzz/fuzz_target.hpp"
#include "tests/support/builtin_registry.hpp"

namespace xf::fuzz {

using test::builtin_registry;

/// Loads `text` with `overrides` as xeflow-run does; a config_error is the loader's correct answer. A
/// topology that loads must survive to_yaml and load again unchanged.
inline void load_and_round_trip(std::string_view text, const std::vector<std::string>& overrides) {
  topology_spec spec;
  try {
    spec = load_topology_text(text, "fuzz.yaml", builtin_registry(), overrides);
  } catch (const config_error&) {
    return;
  }
  const std::string canonical = to_yaml(spec);
  topology_spec again;
  try {
    again = load_topology_text(canonical, "<round trip>", builtin_registry());
  } catch (const config_error& e) {
    fail_invariant("a loaded topology's to_yaml does not load: " + std::string(e.what()) + "\n" + canonical);
  }
  fuzz_expect(again == spec, "to_yaml then load changed the topology:\n" + canonical);
  fuzz_expect(to_yaml(again) == canonical,
              "to_yaml is not canonical: a second trip changed it:\n" + canonical);
}

}  // namespace xf::fuzz
