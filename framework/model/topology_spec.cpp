// Look-ups on a topology spec.
#include "framework/model/topology_spec.hpp"

namespace xf {

const topic_spec* topology_spec::find_topic(std::string_view wanted) const {
  for (const auto& t : topics)
    if (t.name == wanted) return &t;
  return nullptr;
}

const operator_spec* topology_spec::find_operator(std::string_view wanted) const {
  for (const auto& o : operators)
    if (o.name == wanted) return &o;
  return nullptr;
}

const shared_object_spec* topology_spec::find_object(std::string_view wanted) const {
  for (const shared_object_spec& o : objects)
    if (o.name == wanted) return &o;
  return nullptr;
}

const datatype_spec* topology_spec::find_datatype(std::string_view wanted) const {
  for (const datatype_spec& d : datatypes)
    if (d.name == wanted) return &d;
  return nullptr;
}

source_pos topology_spec::position_of(const std::string& path) const {
  std::string key = path;
  while (!key.empty()) {
    if (auto it = positions.find(key); it != positions.end()) return it->second;
    auto cut = key.find_last_of(".[");
    if (cut == std::string::npos) break;
    key.resize(cut);
  }
  return source_pos{source_name, 0, 0};
}

source_pos topology_spec::position_of_key(const std::string& path) const {
  if (auto it = positions.find(path + "#key"); it != positions.end()) return it->second;
  return position_of(path);
}

source_pos topology_spec::position_of_field(const std::string& owner, const std::string& field) const {
  if (auto it = positions.find(owner + "." + field); it != positions.end()) return it->second;
  return position_of_key(owner);
}

}  // namespace xf
