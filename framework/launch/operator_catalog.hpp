// What a launcher offers, for people and for tools: its operator classes with their parameters (text for
// --list-operators, JSON for --list-operators --json) and the JSON Schema of its topology YAML (--schema),
// generated from the loader's own keys and the operators' describe(), so an editor's YAML language
// server checks a topology as the loader will.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "framework/model/registry.hpp"

namespace xf {

/// Every class, its role and side, description, element types, parameters (kind, default or required,
/// range, allowed values) and shared-object slots, as text.
void print_operator_catalog(const operator_registry& registry, std::ostream& out);

/// The same as JSON: an array of classes sorted by name.
nlohmann::ordered_json operator_catalog_json(const operator_registry& registry);

/// A JSON Schema (draft-07) of the topology YAML the launcher with `registry` loads: every section's keys
/// with their types, ranges and allowed values, each operator's parameters by its class. Throws
/// std::logic_error if the loader accepts a key this schema does not describe.
nlohmann::ordered_json topology_json_schema(const operator_registry& registry);

}  // namespace xf
