// The operator catalog (text and JSON) and the topology's JSON Schema (operator_catalog.hpp).
#include "framework/launch/operator_catalog.hpp"

#include <cmath>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/model/operator_schema.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/yaml_loader.hpp"

namespace xf {

namespace {

using json = nlohmann::ordered_json;

json element_names(element_set s) {
  json names = json::array();
  for (element_type t : all_element_types)
    if (s.contains(t)) names.push_back(std::string(name_of(t)));
  return names;
}

json to_json(const param_value& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const double* d = std::get_if<double>(&v)) return std::isfinite(*d) ? json(*d) : json(to_string(v));
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  return to_string(v);  // a datatype, as its constructor writes it
}

bool is_required(const param_decl& p) {
  return !p.default_value && !p.optional;
}

/// "[1, 32]", "[0, …]", "" for a parameter without bounds (limits_param).
std::string range_text(const param_decl& p) {
  const bool has_min = limits_param(p, p.min), has_max = limits_param(p, p.max);
  if (!has_min && !has_max) return "";
  const auto number = [&](double v) {
    if (p.kind == param_kind::real) {
      std::string text = std::to_string(v);
      text.erase(text.find_last_not_of('0') + 1);
      if (text.back() == '.') text.pop_back();
      return text;
    }
    return std::to_string(static_cast<long long>(v));
  };
  return "[" + (has_min ? number(p.min) : "…") + ", " + (has_max ? number(p.max) : "…") + "]";
}

// ---- schema fragments -------------------------------------------------------------------------------------

/// Byte counts as parse_bytes reads them: an integer, or digits with a unit.
const char* const bytes_pattern = "^[0-9]+ *(B|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB|Ki|Mi|Gi)?$";

json bytes_schema(const std::string& description) {
  return {{"description", description},
          {"anyOf", json::array({json{{"type", "integer"}, {"minimum", 0}},
                                 json{{"type", "string"}, {"pattern", bytes_pattern}}})}};
}

json count_schema(const std::string& description, count_limits limits) {
  return {
      {"description", description}, {"type", "integer"}, {"minimum", limits.min}, {"maximum", limits.max}};
}

json choice_schema(const std::string& description, const std::vector<std::string>& choices) {
  return {{"description", description}, {"enum", choices}};
}

json names_schema(const std::string& description) {
  return {{"description", description},
          {"anyOf", json::array({json{{"type", "string"}},
                                 json{{"type", "array"}, {"items", {{"type", "string"}}}}})}};
}

std::vector<std::string> all_element_names() {
  std::vector<std::string> names;
  for (element_type t : all_element_types) names.emplace_back(name_of(t));
  return names;
}

/// A map whose keys are exactly the loader's keys of `section`, each described by `describe(key)`; throws
/// for a key the schema has no description of (the schema must not fall behind the loader).
json section_schema(const std::string& section, const std::string& description,
                    const std::function<json(const std::string&)>& describe) {
  json properties = json::object();
  for (const std::string& key : topology_keys().at(section)) {
    json p = describe(key);
    if (p.is_null())
      throw std::logic_error("the topology schema does not describe " +
                             (section.empty() ? "" : section + ".") + key + ", which the loader reads");
    properties[key] = std::move(p);
  }
  return {{"description", description},
          {"type", "object"},
          {"properties", std::move(properties)},
          {"additionalProperties", false}};
}

/// `schema`, or nothing written: the loader takes an empty entry (`topic:`, `runtime:`) as every default.
json or_empty(json schema) {
  schema["type"] = json::array({"object", "null"});
  return schema;
}

json topic_schema() {
  json column =
      section_schema("column", "a column of a columnar topic, in page order", [](const std::string& k) {
        if (k == "name") return json{{"description", "the column's name"}, {"type", "string"}};
        if (k == "type")
          return json{{"description", "an element type, or char(N) for fixed-width characters of N bytes"},
                      {"anyOf", json::array({json{{"enum", all_element_names()}},
                                             json{{"type", "string"}, {"pattern", "^char\\([0-9]+\\)$"}}})}};
        if (k == "bloom_bits")
          return count_schema("bits of each data page's bloom filter", bloom_bits_limits);
        if (k == "bloom_hashes")
          return count_schema("hash functions of the bloom filter", bloom_hashes_limits);
        return json();
      });
  column["required"] = {"name", "type"};
  return or_empty(section_schema("topic", "a topic: a ring of frames", [&](const std::string& k) {
    if (k == "frame_size") return bytes_schema("bytes of each frame (default 64KiB)");
    if (k == "capacity") return count_schema("frames in the ring (or device_memory)", capacity_limits);
    if (k == "device_memory") return bytes_schema("the ring's bytes, buying whole frames (or capacity)");
    if (k == "element") return choice_schema("the frames' element type", all_element_names());
    if (k == "layout")
      return choice_schema("row frames, or columnar pages with index pages", {"row", "columnar"});
    if (k == "rows_per_frame") return count_schema("columnar: rows in each frame", rows_per_frame_limits);
    if (k == "columns")
      return json{{"description", "columnar: the columns"}, {"type", "array"}, {"items", column}};
    if (k == "transfer")
      return choice_schema("how GPU readers reach the frames (auto: the planner chooses)",
                           {"auto", "mapped", "dma"});
    return json();
  }));
}

json shared_object_schema() {
  return or_empty(section_schema(
      "shared_object", "a shared object: one array the operators share", [](const std::string& k) {
        if (k == "element") return choice_schema("its element type", all_element_names());
        if (k == "bytes") return bytes_schema("its size (or count)");
        if (k == "count") return count_schema("its size in elements (or bytes)", object_count_limits);
        if (k == "init") return json{{"description", "a file it starts from"}, {"type", "string"}};
        if (k == "versions") return count_schema("versions kept for readers", object_versions_limits);
        if (k == "protocol")
          return choice_schema("how a new version reaches the GPU", {"batch", "lazy", "rolling"});
        if (k == "block_size") return bytes_schema("the rolling protocol's block");
        return json();
      }));
}

json param_schema(const param_decl& p) {
  json s{{"description", p.description}};
  const auto bounds = [&](json& into) {
    if (std::isfinite(p.min)) into["minimum"] = p.min;
    if (std::isfinite(p.max)) into["maximum"] = p.max;
  };
  switch (p.kind) {
    case param_kind::boolean:
      // parse_bool's words as well: yes/no and on/off are strings in YAML 1.2.
      s["anyOf"] = json::array({json{{"type", "boolean"}}, json{{"enum", {"yes", "no", "on", "off"}}}});
      break;
    case param_kind::integer:
      s["type"] = "integer";
      bounds(s);
      break;
    case param_kind::real:
      s["type"] = "number";
      bounds(s);
      break;
    case param_kind::bytes: {
      json number{{"type", "integer"}};
      bounds(number);
      s["anyOf"] = json::array({number, json{{"type", "string"}, {"pattern", bytes_pattern}}});
      break;
    }
    case param_kind::text:
      // YAML may read a text value as a number or a boolean; the loader takes its text.
      if (!p.choices.empty())
        s["enum"] = p.choices;
      else
        s["type"] = json::array({"string", "number", "boolean"});
      break;
    case param_kind::datatype:
      s["description"] = p.description + " (a name from datatypes:, or a type written inline)";
      s["type"] = json::array({"string", "object"});
      break;
  }
  if (p.default_value) s["default"] = to_json(*p.default_value);
  return s;
}

/// What one class's params and shared slots may hold.
json class_rule(const operator_info& info) {
  json params{{"type", "object"}, {"additionalProperties", false}};
  json properties = json::object();
  json required_params = json::array();
  for (const param_decl& p : info.params) {
    properties[p.name] = param_schema(p);
    if (is_required(p)) required_params.push_back(p.name);
  }
  params["properties"] = std::move(properties);
  if (!required_params.empty()) params["required"] = required_params;
  json slots{{"type", "object"}, {"additionalProperties", false}};
  json slot_properties = json::object();
  json required_slots = json::array();
  for (const object_slot_decl& o : info.objects) {
    slot_properties[o.name] = {{"description", o.description}, {"type", "string"}};
    if (!o.optional) required_slots.push_back(o.name);
  }
  slots["properties"] = std::move(slot_properties);
  if (!required_slots.empty()) slots["required"] = required_slots;
  json then{{"properties", {{"params", std::move(params)}, {"shared", std::move(slots)}}}};
  json needs = json::array();
  if (!required_params.empty()) needs.push_back("params");
  if (!required_slots.empty()) needs.push_back("shared");
  if (!needs.empty()) then["required"] = needs;
  if (!info.gpu) then["properties"]["on"] = {{"const", "cpu"}};
  return {{"if", {{"properties", {{"class", {{"const", info.class_name}}}}}, {"required", {"class"}}}},
          {"then", std::move(then)}};
}

json operator_schema_of(const operator_registry& registry) {
  json classes = json::array();
  for (const operator_entry* e : registry.entries()) classes.push_back(e->info.class_name);
  json op = section_schema(
      "operator", "an operator: its class, its topics and where it runs", [&](const std::string& k) {
        if (k == "class")
          return json{{"description", "a registered class (xeflow-run --list-operators)"}, {"enum", classes}};
        if (k == "on") return choice_schema("where it runs (default: gpu for a GPU class)", {"cpu", "gpu"});
        if (k == "inputs") return names_schema("the topics it reads");
        if (k == "outputs") return names_schema("the topics it writes");
        if (k == "threads") return count_schema("CPU operators: its threads", threads_limits);
        if (k == "warps") return count_schema("GPU operators: warps of each block it gets", warps_limits);
        if (k == "params")
          return json{{"description", "its class's parameters (xeflow-run --list-operators)"},
                      {"type", "object"}};
        if (k == "shared")
          return json{
              {"description", "its class's shared-object slots, each bound to a shared object by name"},
              {"type", "object"},
              {"additionalProperties", {{"type", "string"}}}};
        if (k == "rank")
          return json{
              {"description", "the MPI rank it runs on: a number, or a name of runtime.ranks"},
              {"anyOf",
               json::array(
                   {json{{"type", "integer"}, {"minimum", rank_limits.min}, {"maximum", rank_limits.max}},
                    json{{"type", "string"}}})}};
        if (k == "device")
          return count_schema("GPU operators: the GPU ordinal on its rank's node", device_limits);
        return json();
      });
  op["required"] = {"class"};
  json rules = json::array();
  for (const operator_entry* e : registry.entries()) rules.push_back(class_rule(e->info));
  op["allOf"] = std::move(rules);
  return op;
}

json runtime_schema() {
  json tuning = section_schema("runtime.tuning", "the partition auto-tuner", [](const std::string& k) {
    if (k == "samples") return count_schema("frames sampled per tuning", tuning_samples_limits);
    if (k == "retune_spread_percent")
      return count_schema("auto-online: the imbalance that retunes", retune_spread_percent_limits);
    if (k == "retune_hold_ms")
      return count_schema("auto-online: how long it must last", retune_hold_ms_limits);
    return json();
  });
  json coherence =
      section_schema("runtime.coherence", "the coherence policy of each layer", [](const std::string& k) {
        if (k == "catalog") return choice_schema("the topic catalog", {"naive", "read_mostly"});
        if (k == "index") return choice_schema("the slot index", {"naive", "placed"});
        if (k == "frames") return choice_schema("the frames", {"naive", "placed"});
        return json();
      });
  json file_cache = section_schema("runtime.file_cache", "the GPU file cache", [](const std::string& k) {
    if (k == "size") return bytes_schema("its bytes");
    if (k == "page_size") return bytes_schema("a page's bytes");
    if (k == "readahead") return bytes_schema("readahead per block");
    if (k == "readahead_mode") return choice_schema("readahead", {"off", "on", "adaptive"});
    if (k == "replacement") return choice_schema("page replacement", {"lra", "global"});
    if (k == "io_threads")
      return count_schema("host I/O threads (0: one per core, at most 16)", io_threads_limits);
    if (k == "io_slots_per_block")
      return count_schema("requests in flight per block", io_slots_per_block_limits);
    if (k == "max_request") return bytes_schema("the largest request");
    if (k == "io_chunk") return bytes_schema("an I/O thread's read");
    if (k == "direct") return choice_schema("O_DIRECT reads", {"auto", "on", "off"});
    return json();
  });
  tuning = or_empty(std::move(tuning));
  coherence = or_empty(std::move(coherence));
  file_cache = or_empty(std::move(file_cache));
  return or_empty(section_schema("runtime", "how the topology runs", [&](const std::string& k) {
    if (k == "executor") return choice_schema("where GPU operators run", {"auto", "device", "host"});
    if (k == "blocks") return count_schema("the kernel's blocks (0: as many as fit)", blocks_limits);
    if (k == "warps_per_block") return count_schema("warps of each block", warps_per_block_limits);
    if (k == "partition")
      return choice_schema("how warps are split among GPU operators",
                           {"uniform", "explicit", "auto", "auto-online"});
    if (k == "tuning") return tuning;
    if (k == "coherence") return coherence;
    if (k == "watchdog_ms")
      return count_schema("a block without progress this long ends the run", watchdog_ms_limits);
    if (k == "file_cache") return file_cache;
    if (k == "timer_slack_us") return count_schema("the CPU threads' timer slack", timer_slack_us_limits);
    if (k == "max_sleep_us")
      return count_schema("the longest sleep of the run's waiting threads (0: they never sleep)",
                          max_sleep_us_limits);
    if (k == "index_rest")
      return count_schema("frames in a row whose index skipped nothing before a page reader's index rests",
                          index_rest_limits);
    if (k == "part_size") return bytes_schema("the part of a large frame a block takes");
    if (k == "spread_warps")
      return json{{"description", "a round's idle warps go to the items that compute"},
                  {"anyOf", json::array({json{{"type", "boolean"}},
                                         json{{"enum", {"off", "on", "false", "true", "no", "yes"}}}})}};
    if (k == "ranks")
      return json{{"description", "names for MPI ranks, which operators' rank: may give"},
                  {"type", "object"},
                  {"additionalProperties",
                   {{"type", "integer"}, {"minimum", rank_limits.min}, {"maximum", rank_limits.max}}}};
    return json();
  }));
}

}  // namespace

void print_operator_catalog(const operator_registry& registry, std::ostream& out) {
  for (const operator_entry* e : registry.entries()) {
    const operator_info& info = e->info;
    out << info.class_name << "  (" << name_of(info.role) << ", " << (info.gpu ? "gpu or cpu" : "cpu")
        << ")\n    " << info.description << '\n';
    if (!(info.elements == element_set::all()))
      out << "    element types: " << names_of(info.elements) << '\n';
    for (const param_decl& p : info.params) {
      out << "    " << p.name << ": " << name_of(p.kind);
      if (const std::string range = range_text(p); !range.empty()) out << ' ' << range;
      if (!p.choices.empty()) {
        out << " {";
        for (std::size_t i = 0; i < p.choices.size(); ++i) out << (i ? "|" : "") << p.choices[i];
        out << '}';
      }
      if (p.default_value)
        out << " = " << to_string(*p.default_value);
      else
        out << (p.optional ? " (optional)" : " (required)");
      out << "  — " << p.description << '\n';
    }
    for (const object_slot_decl& o : info.objects) {
      out << "    shared " << o.name << ": " << name_of(o.access) << (o.optional ? ", optional" : "");
      if (!(o.elements == element_set::all())) out << ", " << names_of(o.elements);
      out << "  — " << o.description << '\n';
    }
  }
}

json operator_catalog_json(const operator_registry& registry) {
  json classes = json::array();
  for (const operator_entry* e : registry.entries()) {
    const operator_info& info = e->info;
    json c{{"class", info.class_name},
           {"role", std::string(name_of(info.role))},
           {"gpu", info.gpu},
           {"description", info.description},
           {"elements", element_names(info.elements)},
           {"replayable", info.replayable}};
    json params = json::array();
    for (const param_decl& p : info.params) {
      json d{{"name", p.name},
             {"kind", std::string(name_of(p.kind))},
             {"description", p.description},
             {"required", is_required(p)}};
      if (p.default_value) d["default"] = to_json(*p.default_value);
      if (std::isfinite(p.min)) d["minimum"] = p.min;
      if (std::isfinite(p.max)) d["maximum"] = p.max;
      if (!p.choices.empty()) d["choices"] = p.choices;
      params.push_back(std::move(d));
    }
    c["params"] = std::move(params);
    json slots = json::array();
    for (const object_slot_decl& o : info.objects)
      slots.push_back({{"name", o.name},
                       {"access", std::string(name_of(o.access))},
                       {"optional", o.optional},
                       {"elements", element_names(o.elements)},
                       {"description", o.description}});
    c["shared"] = std::move(slots);
    classes.push_back(std::move(c));
  }
  return classes;
}

json topology_json_schema(const operator_registry& registry) {
  const json topic = topic_schema(), object = shared_object_schema(), op = operator_schema_of(registry),
             runtime = runtime_schema();
  json schema =
      section_schema("", "an xeflow topology (README: Topologies in YAML)", [&](const std::string& k) {
        if (k == "name")
          return json{{"description", "the topology's name, in its stats"}, {"type", "string"}};
        if (k == "topics")
          return json{{"description", "topic name to settings"},
                      {"type", {"object", "null"}},
                      {"additionalProperties", topic}};
        if (k == "datatypes")
          return json{{"description",
                       "named MPI-style datatypes that operators' datatype parameters name (README: "
                       "Datatypes)"},
                      {"type", "object"}};
        if (k == "shared_objects")
          return json{{"description", "shared object name to settings"},
                      {"type", {"object", "null"}},
                      {"additionalProperties", object}};
        if (k == "operators")
          return json{{"description", "operator name to settings"},
                      {"type", {"object", "null"}},
                      {"additionalProperties", op}};
        if (k == "runtime") return runtime;
        return json();
      });
  json doc{{"$schema", "http://json-schema.org/draft-07/schema#"}, {"title", "xeflow topology"}};
  doc.update(schema);
  doc["required"] = {"operators"};
  return doc;
}

}  // namespace xf
