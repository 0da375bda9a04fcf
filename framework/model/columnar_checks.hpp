// Validation of a topic's columnar fields: the columns' names, types and bloom filters at the lines that
// carry them, and the frame they make (topics/columnar_layout.hpp). Part of validate_topology.
#pragma once

#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/topology_spec.hpp"

namespace xf {

/// Appends the problems of topic `t` (one of spec.topics): rows_per_frame or columns on a row topic;
/// on a columnar topic an element, a missing rows_per_frame or columns, a column's bad name, duplicate
/// name or bloom filter, and a frame its columns cannot make or a frame_size other than theirs. A columnar
/// topic without problems takes its frame size from its columns. Returns whether it found none.
bool check_columnar_fields(const topology_spec& spec, topic_spec& t, std::vector<diagnostic>& problems);

}  // namespace xf
