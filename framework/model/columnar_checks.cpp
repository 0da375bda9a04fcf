// Validation of a topic's columnar fields.
#include "framework/model/columnar_checks.hpp"

#include <map>
#include <string>

#include "framework/core/units.hpp"
#include "framework/model/spec_validation.hpp"

namespace xf {
namespace {

bool power_of_two(std::uint32_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

/// "line:column" of a position in the topology's own file (the whole position where it has none).
std::string line_and_column(const source_pos& pos) {
  return pos.known() ? std::to_string(pos.line) + ":" + std::to_string(pos.column) : pos.str();
}

}  // namespace

bool check_columnar_fields(const topology_spec& spec, topic_spec& t, std::vector<diagnostic>& problems) {
  const std::string path = "topics." + t.name;
  const std::string context = "topic '" + t.name + "': ";
  const auto written = [&](const std::string& field) {
    return spec.positions.count(path + "." + field) != 0;
  };
  const auto at = [&](const std::string& field) { return spec.position_of(path + "." + field); };
  const auto at_topic = [&] {
    auto it = spec.positions.find(path + "#key");
    return it != spec.positions.end() ? it->second : spec.position_of(path);
  };
  const std::size_t before = problems.size();
  if (t.layout != frame_layout::columnar) {
    if (t.rows_per_frame != 0)
      problems.push_back(
          {at("rows_per_frame"), context + "rows_per_frame belongs to a columnar topic (layout: columnar)"});
    if (!t.columns.empty())
      problems.push_back({at("columns"), context + "columns belong to a columnar topic (layout: columnar)"});
    return problems.size() == before;
  }
  if (written("element"))
    problems.push_back(
        {at("element"), context + "a columnar topic's columns have their own types: leave out element"});
  if (t.rows_per_frame == 0)
    problems.push_back({at_topic(), context + "a columnar topic needs rows_per_frame (rows a frame holds)"});
  if (t.columns.empty()) {
    problems.push_back({written("columns") ? at("columns") : at_topic(),
                        context + "a columnar topic needs columns ({name: …, type: …} each)"});
    return false;
  }
  std::map<std::string, std::size_t, std::less<>> names;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    const column_spec& c = t.columns[i];
    const std::string item = "columns[" + std::to_string(i) + "]";
    if (!is_valid_name(c.name))
      problems.push_back({at(item + ".name"), context + "column name '" + c.name +
                                                  "' is not a valid name (use letters, digits, '_' and '-', "
                                                  "starting with a letter or '_')"});
    else if (auto [first, fresh] = names.emplace(c.name, i); !fresh)
      problems.push_back({at(item + ".name"),
                          context + "duplicate column '" + c.name + "' (first at " +
                              line_and_column(at("columns[" + std::to_string(first->second) + "].name")) +
                              ")"});
    const column_layout& l = c.layout;
    if (l.bloom_bits != 0 && (!power_of_two(l.bloom_bits) || l.bloom_bits < columnar_min_bloom_bits ||
                              l.bloom_bits > columnar_max_bloom_bits))
      problems.push_back({at(item + ".bloom_bits"), context + "column '" + c.name +
                                                        "': bloom_bits must be a power of two from " +
                                                        std::to_string(columnar_min_bloom_bits) + " to " +
                                                        std::to_string(columnar_max_bloom_bits) + ", not " +
                                                        std::to_string(l.bloom_bits)});
    if (l.bloom_bits != 0 && l.bloom_hashes == 0)
      problems.push_back({at(item + ".bloom_bits"), context + "column '" + c.name +
                                                        "': bloom_bits needs bloom_hashes (1 to " +
                                                        std::to_string(columnar_max_bloom_hashes) + ")"});
    if (l.bloom_hashes != 0 && l.bloom_bits == 0)
      problems.push_back(
          {at(item + ".bloom_hashes"), context + "column '" + c.name + "': bloom_hashes without bloom_bits"});
    if (l.bloom_hashes > columnar_max_bloom_hashes)
      problems.push_back({at(item + ".bloom_hashes"), context + "column '" + c.name +
                                                          "': bloom_hashes must be from 1 to " +
                                                          std::to_string(columnar_max_bloom_hashes) +
                                                          ", not " + std::to_string(l.bloom_hashes)});
  }
  if (problems.size() != before) return false;
  std::vector<column_layout> layouts;
  for (const column_spec& c : t.columns) layouts.push_back(c.layout);
  columnar_geometry g{};
  if (std::string why = make_columnar_geometry(layouts, t.rows_per_frame, g); !why.empty()) {
    problems.push_back({at("columns"), context + why});
    return false;
  }
  if (written("frame_size") && t.frame_bytes != g.frame_bytes()) {
    problems.push_back(
        {at("frame_size"), context + "frame_size " + format_bytes(t.frame_bytes) +
                               " is not its columns' frame: " + std::to_string(t.rows_per_frame) +
                               " rows take " + format_bytes(g.frame_bytes()) + " (leave frame_size out)"});
    return false;
  }
  t.frame_bytes = g.frame_bytes();
  // To the element machinery (dispatch, accepted types) a columnar frame is bytes: its columns carry the
  // types, and its readers compile once, not once per element type.
  t.element = element_type::u8;
  return true;
}

std::optional<columnar_geometry> columnar_geometry_of(const topic_spec& t) {
  if (t.layout != frame_layout::columnar) return std::nullopt;
  std::vector<column_layout> layouts;
  for (const column_spec& c : t.columns) layouts.push_back(c.layout);
  columnar_geometry g{};
  if (std::string why = make_columnar_geometry(layouts, t.rows_per_frame, g); !why.empty())
    throw config_error(source_pos{}, "topic '" + t.name + "': " + why);
  return g;
}

topic_info topic_info_of(const topic_spec& t) {
  topic_info info{t.name, t.frame_bytes, t.capacity, t.element, columnar_geometry_of(t), {}};
  for (const column_spec& c : t.columns) info.column_names.push_back(c.name);
  return info;
}

}  // namespace xf
