// A TopologySpec written back as YAML: for --plan output, for saving a builder topology as a file, and as
// the proof that the YAML schema can say everything a spec holds (load_topology_text(to_yaml(s)) == s).
#pragma once

#include <cstdint>
#include <string>

#include "framework/model/topology_spec.hpp"

namespace xf {

/// Canonical YAML for `spec`: every field written explicitly (so defaults never depend on the registry
/// that loads it back), topics as one flow map per line, operators in block style, in declaration order.
/// Frame sizes use the largest binary unit that divides them exactly ("64KiB"). Params are written as
/// their values (a normalized byte count as its integer). Datatypes, when there are any, follow the topics
/// as one flow map per line (datatype_yaml.hpp's grammar); a type that is one of them — the same node, as
/// the loader and the builder make a reference — is written as its name, in a parameter or inside another
/// datatype. Shared objects, when there are any, follow as one flow map per line, each with its size in
/// bytes.
std::string to_yaml(const topology_spec& spec);

/// "64KiB", "1GiB", "4097": `bytes` in the largest binary unit that divides it exactly, parse_bytes' syntax.
std::string exact_bytes(std::uint64_t bytes);

}  // namespace xf
