// `--set path=value` overrides, applied to the parsed YAML document before it becomes a spec, so an
// overridden value goes through exactly the checks a value in the file does.
//
//   --set topics.in.capacity=8
//   --set operators.source.params.total_bytes=4GiB
//   --set runtime.executor=host
//   --set operators.source.outputs=[in]        # the value is YAML: flow lists and maps work
//
// The path is the YAML keys joined by '.'. Missing maps on the way are created (a new topic, a params
// block); a path that goes through a scalar or a list is an error (set the whole list instead).
//
// Positions: a problem inside an overridden value is reported in the "file" `--set <argument>` (the
// argument as given, without the option name), line 1, at the 1-based column within the argument where
// the offending value starts. "--set topics.in.capacity=abc" → "--set topics.in.capacity=abc:1:20". Keys
// the override created are placed at their path segment's column, and a malformed argument at column 1.
#pragma once

#include <string>
#include <vector>

#include "framework/model/yaml_loader.hpp"

namespace xf {

/// One parsed `--set` argument.
struct override_arg {
  std::string argument;           ///< as given: "topics.in.capacity=8"
  std::vector<std::string> path;  ///< {"topics", "in", "capacity"}
  std::vector<int> path_columns;  ///< 1-based column of each path segment within the argument
  std::string value;              ///< "8" (YAML text)
  int value_column = 0;           ///< 1-based column of the value within the argument
};

/// The source name under which an override's positions are reported: "--set <argument>", or for an
/// argument longer than max_override_source_bytes, "--set <its first bytes>...".
std::string override_source(const std::string& argument);
inline constexpr std::size_t max_override_source_bytes = 96;

/// Splits "path=value". Throws config_error (at the argument, column 1 or the bad segment) when there is
/// no '=', the path is empty or one of its names is.
override_arg parse_override(const std::string& argument);

/// Applies every override to `root` in order (a later one wins). Throws config_error listing every
/// override that could not be applied (malformed, YAML syntax error in the value, path through a scalar
/// or list, top level not a map).
void apply_overrides(yaml_node& root, const std::vector<std::string>& overrides);

}  // namespace xf
