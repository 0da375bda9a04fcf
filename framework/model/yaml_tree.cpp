// The YAML front end's first half: yaml-cpp's tree → yaml_node, every node with its position in its
// source (file:line:column), so that every later problem can say where it is.
#include <yaml-cpp/yaml.h>

#include "framework/model/yaml_loader.hpp"

namespace xf {

yaml_entry* yaml_node::find(std::string_view key) {
  for (auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

const yaml_entry* yaml_node::find(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::string describe_node(const yaml_node& node) {
  switch (node.type) {
    case yaml_node::kind::null:
      return "empty";
    case yaml_node::kind::scalar:
      return "'" + node.scalar + "'";
    case yaml_node::kind::list:
      return "a list";
    case yaml_node::kind::map:
      return "a map";
  }
  return "?";
}

namespace {

/// yaml-cpp marks are 0-based; the first line may start inside a longer text (an override's value).
source_pos position(const YAML::Mark& mark, const std::string& source, int first_column) {
  if (mark.is_null() || mark.line < 0) return {source, 0, 0};
  return {source, mark.line + 1, mark.line == 0 ? mark.column + first_column : mark.column + 1};
}

class tree_converter {
 public:
  tree_converter(const std::string& source, int first_column)
      : source_(source), first_column_(first_column) {}

  yaml_node convert(const YAML::Node& node, const source_pos& fallback) {
    yaml_node out;
    out.pos = position(node.Mark(), source_, first_column_);
    if (!out.pos.known()) out.pos = fallback;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.type = yaml_node::kind::null;
        break;
      case YAML::NodeType::Scalar:
        out.type = yaml_node::kind::scalar;
        out.scalar = node.Scalar();
        break;
      case YAML::NodeType::Sequence:
        out.type = yaml_node::kind::list;
        for (const auto& item : node) out.items.push_back(convert(item, out.pos));
        break;
      case YAML::NodeType::Map:
        out.type = yaml_node::kind::map;
        for (const auto& kv : node) {
          yaml_entry entry;
          entry.key_pos = position(kv.first.Mark(), source_, first_column_);
          if (!entry.key_pos.known()) entry.key_pos = out.pos;
          if (kv.first.IsScalar()) {
            entry.key = kv.first.Scalar();
          } else {
            problems_.push_back({entry.key_pos, std::string("a map key must be a name, not ") +
                                                    (kv.first.IsNull()  ? "empty"
                                                     : kv.first.IsMap() ? "a map"
                                                                        : "a list")});
            continue;
          }
          entry.value = convert(kv.second, entry.key_pos);
          // yaml-cpp marks an empty value ("key:" then a newline) at whatever token follows it, often the
          // next key's line; the key itself is the honest place to point at.
          if (entry.value.type == yaml_node::kind::null && entry.value.pos.line != entry.key_pos.line)
            entry.value.pos = entry.key_pos;
          out.entries.push_back(std::move(entry));
        }
        break;
    }
    return out;
  }

  std::vector<diagnostic>& problems() { return problems_; }

 private:
  const std::string& source_;
  int first_column_;
  std::vector<diagnostic> problems_;
};

}  // namespace

yaml_node parse_yaml(std::string_view text, const std::string& source_name, int first_column) {
  const source_pos start{source_name, 1, first_column};
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    source_pos where = position(e.mark, source_name, first_column);
    if (!where.known()) where = start;
    throw config_error(where, "YAML syntax: " + e.msg);
  }
  if (documents.size() > 1)
    throw config_error(
        position(documents[1].Mark(), source_name, first_column),
        "a topology is one YAML document, but this text holds " + std::to_string(documents.size()));
  if (documents.empty()) return yaml_node{yaml_node::kind::null, {}, {}, {}, start};
  tree_converter converter(source_name, first_column);
  yaml_node root = converter.convert(documents.front(), start);
  if (!converter.problems().empty()) throw config_error(std::move(converter.problems()));
  return root;
}

}  // namespace xf
