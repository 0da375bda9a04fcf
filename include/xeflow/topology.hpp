// xeflow's topology in C++: the builder (`xf::topology_builder`: topics, operators and the links between
// them, the XeFlow paper's Link(prev_topic, op, next_topic)) and the spec it builds, the same one a YAML
// topology loads into.
#pragma once

#include "framework/model/topology_builder.hpp"
#include "framework/model/topology_spec.hpp"
