// Validation of a topic's columnar fields: the columns' names, types and bloom filters at the lines that
// carry them, and the frame they make (topics/columnar_layout.hpp). Part of validate_topology. And what
// an operator is told of a topic (topic_info), its columns included.
#pragma once

#include <optional>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/topology_spec.hpp"

namespace xf {

/// Appends the problems of topic `t` (one of spec.topics): rows_per_frame or columns on a row topic;
/// on a columnar topic an element, a missing rows_per_frame or columns, a column's bad name, duplicate
/// name or bloom filter, and a frame its columns cannot make or a frame_size other than theirs. A columnar
/// topic without problems takes its frame size from its columns, and element u8 (its frames are bytes to
/// the element machinery). Returns whether it found none.
bool check_columnar_fields(const topology_spec& spec, topic_spec& t, std::vector<diagnostic>& problems);

/// The page map of a validated columnar topic's frames; nullopt for a row topic. Throws config_error
/// naming the topic when its columns make no frame (validation reports that first).
std::optional<columnar_geometry> columnar_geometry_of(const topic_spec& t);

/// What an operator is told of a validated topic: name, sizes, element, and a columnar topic's page map
/// and column names.
topic_info topic_info_of(const topic_spec& t);

}  // namespace xf
