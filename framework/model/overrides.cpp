// `--set path=value`: edits the parsed document, so overridden values meet the same checks as the file's.
#include "framework/model/overrides.hpp"

#include <optional>

namespace xf {

std::string override_source(const std::string& argument) {
  // Every node of the override's value carries this name in its position: a long argument is named by
  // its start, so that a value of many nodes does not hold as many copies of all of it.
  if (argument.size() <= max_override_source_bytes) return "--set " + argument;
  std::size_t cut = max_override_source_bytes;
  while (cut > 0 && (static_cast<unsigned char>(argument[cut]) & 0xC0) == 0x80) --cut;  // whole characters
  return "--set " + argument.substr(0, cut) + "...";
}

override_arg parse_override(const std::string& argument) {
  const std::string source = override_source(argument);
  const std::size_t equals = argument.find('=');
  if (equals == std::string::npos)
    throw config_error(
        source_pos{source, 1, 1},
        "an override is path=value (e.g. topics.in.capacity=8), but '" + argument + "' has no '='");
  if (equals == 0) throw config_error(source_pos{source, 1, 1}, "an override needs a path before '='");
  override_arg parsed;
  parsed.argument = argument;
  parsed.value = argument.substr(equals + 1);
  parsed.value_column = static_cast<int>(equals) + 2;
  std::size_t begin = 0;
  while (true) {
    const std::size_t dot = argument.find('.', begin);
    const std::size_t end = dot == std::string::npos || dot > equals ? equals : dot;
    if (end == begin)
      throw config_error(source_pos{source, 1, static_cast<int>(begin) + 1},
                         "empty name in override path '" + argument.substr(0, equals) + "'");
    // Each name is a level of maps: past the document's bound on nesting, refused at the name that
    // crosses it (before the maps are made).
    if (parsed.path.size() == yaml_limits::max_depth)
      throw config_error(source_pos{source, 1, static_cast<int>(begin) + 1},
                         "an override path names at most " + std::to_string(yaml_limits::max_depth) +
                             " keys (lists and maps are nested at most that deep)");
    parsed.path.push_back(argument.substr(begin, end - begin));
    parsed.path_columns.push_back(static_cast<int>(begin) + 1);
    if (end == equals) break;
    begin = end + 1;
  }
  return parsed;
}

namespace {

std::string joined(const std::vector<std::string>& path, std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += (i ? "." : "") + path[i];
  return text;
}

/// Sets one parsed override in `root`; returns the problem, if any.
std::optional<diagnostic> apply_one(yaml_node& root, const override_arg& o, yaml_node value) {
  const std::string source = override_source(o.argument);
  const std::string target = joined(o.path, o.path.size());
  yaml_node* node = &root;
  for (std::size_t i = 0; i < o.path.size(); ++i) {
    const source_pos segment{source, 1, o.path_columns[i]};
    if (node->type == yaml_node::kind::null) node->type = yaml_node::kind::map;  // e.g. "params:" left empty
    if (node->type != yaml_node::kind::map) {
      const std::string parent = i == 0 ? std::string("the topology") : "'" + joined(o.path, i) + "'";
      const std::string what = node->type == yaml_node::kind::list ? "a list" : "a single value";
      std::string message = "cannot set '" + target + "': " + parent + " is " + what;
      if (node->pos.known()) message += " (at " + node->pos.str() + ")";
      if (node->type == yaml_node::kind::list)
        message += "; set the whole list, e.g. " + joined(o.path, i) + "=[a, b]";
      return diagnostic{segment, message};
    }
    yaml_entry* entry = node->find(o.path[i]);
    if (!entry) {
      yaml_entry created;
      created.key = o.path[i];
      created.key_pos = segment;
      created.value.pos = segment;
      node->entries.push_back(std::move(created));
      entry = &node->entries.back();
    }
    node = &entry->value;
  }
  *node = std::move(value);
  return std::nullopt;
}

}  // namespace

void apply_overrides(yaml_node& root, const std::vector<std::string>& overrides) {
  std::vector<diagnostic> problems;
  for (const auto& argument : overrides) {
    try {
      const override_arg parsed = parse_override(argument);
      yaml_node value = parse_yaml(parsed.value, override_source(argument), parsed.value_column);
      if (auto problem = apply_one(root, parsed, std::move(value))) problems.push_back(std::move(*problem));
    } catch (const config_error& e) {
      problems.insert(problems.end(), e.problems().begin(), e.problems().end());
    }
  }
  if (!problems.empty()) throw config_error(std::move(problems));
}

}  // namespace xf
