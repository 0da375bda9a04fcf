// Validation of a topology's shared objects (topology_spec::objects) and of the operators' bindings to them
// (operator_spec::shared), each problem at the key or value that causes it. Part of validate_topology.
#pragma once

#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/registry.hpp"
#include "framework/model/topology_spec.hpp"

namespace xf {

/// Appends the problems of spec.objects: an invalid or repeated name, versions out of object_versions_limits,
/// a rolling block that is not a positive multiple of 4 KiB, an init file that cannot be read or whose size
/// is not the object's, and a size of 0 bytes or not a whole number of elements. An object that gives no
/// size (bytes 0) and an init file takes the file's size: validation writes it into `bytes`, so every object
/// of a valid spec has bytes > 0. Reads the init files' sizes (paths as written: relative ones from the
/// working directory), nothing more.
void check_object_fields(topology_spec& spec, std::vector<diagnostic>& problems);

/// Appends the problems of the operators' bindings: a key that is not one of its class's object slots, a
/// slot bound to an undeclared object, a slot left unbound unless it is optional, a write slot on a GPU
/// operator (only CPU operators publish versions), a second writer of an object, an object whose element
/// type the slot does not take or that the slot's own check refuses (object_slot_decl::check), a source
/// that reads an object (a reader sees the version of its input frame's offset), a written object with
/// fewer than 2 versions, and an object no operator reads. `classes` holds each operator's registry entry,
/// in spec.operators' order (null where the class is unknown: its own problem is reported, and its
/// bindings are not checked); `params_valid` whether its parameters passed their checks (a slot's check
/// runs only then, on the normalized parameters).
void check_object_bindings(const topology_spec& spec, const std::vector<const operator_entry*>& classes,
                           const std::vector<bool>& params_valid, std::vector<diagnostic>& problems);

}  // namespace xf
