// The YAML front end: yaml-cpp's tree → yaml_node (positions with their source) → topology_spec.
// Shape problems are collected here; the topology's meaning is checked by validate_topology afterwards.
#include "framework/model/yaml_loader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "framework/core/units.hpp"
#include "framework/model/datatype_yaml.hpp"
#include "framework/model/overrides.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/suggest.hpp"
#include "framework/model/yaml_fields.hpp"

namespace xf {

namespace {

const std::vector<std::string> top_keys{"name",           "topics",    "datatypes",
                                        "shared_objects", "operators", "runtime"};
const std::vector<std::string> topic_keys{"frame_size", "capacity",       "device_memory", "element",
                                          "layout",     "rows_per_frame", "columns",       "transfer"};
const std::vector<std::string> column_keys{"name", "type", "bloom_bits", "bloom_hashes"};
const std::vector<std::string> operator_keys{"class", "on",     "inputs", "outputs", "threads",
                                             "warps", "params", "shared", "rank",    "device"};
const std::vector<std::string> object_keys{"element",  "bytes",    "count",     "init",
                                           "versions", "protocol", "block_size"};
const std::vector<std::string> runtime_keys{"executor",       "blocks",       "warps_per_block", "partition",
                                            "tuning",         "coherence",    "watchdog_ms",     "file_cache",
                                            "timer_slack_us", "max_sleep_us", "part_size",       "index_rest",
                                            "spread_warps",   "ranks"};
const std::vector<std::string> tuning_keys{"samples", "retune_spread_percent", "retune_hold_ms"};
const std::vector<std::string> coherence_keys{"catalog", "index", "frames"};
const std::vector<std::string> file_cache_keys{
    "size",       "page_size",          "readahead",   "readahead_mode", "replacement",
    "io_threads", "io_slots_per_block", "max_request", "io_chunk",       "direct"};

}  // namespace

const std::map<std::string, std::vector<std::string>>& topology_keys() {
  static const std::map<std::string, std::vector<std::string>> keys{{"", top_keys},
                                                                    {"topic", topic_keys},
                                                                    {"column", column_keys},
                                                                    {"operator", operator_keys},
                                                                    {"shared_object", object_keys},
                                                                    {"runtime", runtime_keys},
                                                                    {"runtime.tuning", tuning_keys},
                                                                    {"runtime.coherence", coherence_keys},
                                                                    {"runtime.file_cache", file_cache_keys}};
  return keys;
}

namespace {

std::vector<std::string> element_names() {
  std::vector<std::string> names;
  for (element_type t : all_element_types) names.emplace_back(name_of(t));
  return names;
}

// ---- the reader -----------------------------------------------------------------------------------------

class spec_reader : yaml_field_reader {
 public:
  spec_reader(const operator_registry& registry, topology_spec& spec)
      : yaml_field_reader(spec.positions), registry_(registry), spec_(spec), datatypes_(spec.positions) {}

  std::vector<diagnostic> read(const yaml_node& root) {
    if (root.type == yaml_node::kind::null) {
      problem(root.pos, "the topology is empty (expected a map with name, topics, operators and runtime)");
      return std::move(problems_);
    }
    if (root.type != yaml_node::kind::map) {
      problem(root.pos, "the topology must be a map with name, topics, operators and runtime, not " +
                            describe_node(root));
      return std::move(problems_);
    }
    const entry_table top = accepted(root, top_keys, "at the top level", "key");
    if (auto it = top.find("name"); it != top.end()) {
      record("name", *it->second);
      if (auto text = scalar(*it->second, "", "name", "a string", true)) spec_.name = *text;
    }
    if (auto it = top.find("topics"); it != top.end()) read_topics(*it->second);
    // Before the operators: their datatype parameters may name these.
    if (auto it = top.find("datatypes"); it != top.end())
      datatypes_.read_section(*it->second, spec_.datatypes);
    if (auto it = top.find("shared_objects"); it != top.end()) read_shared_objects(*it->second);
    if (auto it = top.find("operators"); it != top.end()) read_operators(*it->second);
    if (auto it = top.find("runtime"); it != top.end()) read_runtime(*it->second);
    for (diagnostic& d : datatypes_.take_problems()) problems_.push_back(std::move(d));
    return std::move(problems_);
  }

 private:
  void read_topics(const yaml_entry& topics) {
    record("topics", topics);
    if (topics.value.type == yaml_node::kind::null) return;
    if (topics.value.type != yaml_node::kind::map) {
      problem(topics.value.pos,
              "topics must be a map from topic name to settings, not " + describe_node(topics.value));
      return;
    }
    const first_table firsts = first_entries(topics.value);
    for (const auto& entry : topics.value.entries) {
      if (!first_of(firsts, entry, "topic")) continue;
      const std::string path = "topics." + entry.key;
      const std::string context = "topic '" + entry.key + "': ";
      record(path, entry);
      topic_spec topic;
      topic.name = entry.key;
      if (entry.value.type == yaml_node::kind::map) {
        const entry_table fields = accepted(entry.value, topic_keys, "in topic '" + entry.key + "'", "key");
        const yaml_entry* capacity_field = nullptr;
        const yaml_entry* budget_field = nullptr;
        std::optional<std::uint64_t> budget;
        for (const auto& [key, field] : fields) {
          record(path + "." + key, *field);
          if (key == "frame_size") {
            if (auto bytes = byte_count(*field, context, key, "64KiB")) topic.frame_bytes = *bytes;
          } else if (key == "capacity") {
            capacity_field = field;
            if (auto n = count(*field, context, key, capacity_limits)) topic.capacity = *n;
          } else if (key == "device_memory") {
            budget_field = field;
            if (auto bytes = byte_count(*field, context, key, "256MiB")) budget = *bytes;
          } else if (key == "element") {
            if (auto i = choice(*field, context, key, element_names())) topic.element = all_element_types[*i];
          } else if (key == "layout") {
            if (auto i = choice(*field, context, key, {"row", "columnar"}))
              topic.layout = *i == 0 ? frame_layout::row : frame_layout::columnar;
          } else if (key == "rows_per_frame") {
            if (auto n = count(*field, context, key, rows_per_frame_limits)) topic.rows_per_frame = *n;
          } else if (key == "columns") {
            read_columns(*field, path, context, topic);
          } else if (key == "transfer") {
            constexpr transfer_mode modes[] = {transfer_mode::automatic, transfer_mode::mapped,
                                               transfer_mode::dma};
            if (auto i = choice(*field, context, key, {"auto", "mapped", "dma"})) topic.transfer = modes[*i];
          }
        }
        if (budget_field != nullptr && capacity_field != nullptr) {
          problem(budget_field->key_pos, context +
                                             "give capacity (frames) or device_memory (bytes), not both "
                                             "(capacity at " +
                                             first_at(capacity_field->key_pos, budget_field->key_pos) + ")");
        } else if (budget && topic.frame_bytes != 0) {  // frame_size 0 is reported by validation
          // The budget buys whole frames: the ring (and the device replica the GPU executor keeps of it).
          const std::uint64_t frames = *budget / topic.frame_bytes;
          if (frames < 1 || frames > static_cast<std::uint64_t>(capacity_limits.max))
            problem(budget_field->value.pos, context + "device_memory " + format_bytes(*budget) + " buys " +
                                                 std::to_string(frames) + " frames of " +
                                                 format_bytes(topic.frame_bytes) + ": give between 1 and " +
                                                 std::to_string(capacity_limits.max) + " frames' bytes");
          else
            topic.capacity = static_cast<std::uint32_t>(frames);
        }
      } else if (entry.value.type != yaml_node::kind::null) {
        problem(entry.value.pos, "topic '" + entry.key + "' must be a map of settings (" +
                                     join_choices(topic_keys, ", ") + "), not " + describe_node(entry.value));
      }
      spec_.topics.push_back(std::move(topic));
    }
  }

  /// Each key of a map and the first entry that has it: a map of many topics or operators is looked up
  /// once per entry, not searched from its start.
  using first_table = std::unordered_map<std::string_view, const yaml_entry*>;
  static first_table first_entries(const yaml_node& map) {
    first_table firsts;
    for (const yaml_entry& entry : map.entries) firsts.try_emplace(entry.key, &entry);
    return firsts;
  }

  /// True for the first entry with its key in its map; reports a later one as a duplicate `noun`.
  bool first_of(const first_table& firsts, const yaml_entry& entry, const std::string& noun) {
    const yaml_entry* first = firsts.at(entry.key);
    if (first == &entry) return true;
    problem(entry.key_pos, "duplicate " + noun + " '" + entry.key + "' (first at " +
                               first_at(first->key_pos, entry.key_pos) + ")");
    return false;
  }

  /// A columnar topic's columns: a list of {name, type, bloom_bits, bloom_hashes}, in page order.
  void read_columns(const yaml_entry& field, const std::string& path, const std::string& context,
                    topic_spec& topic) {
    if (field.value.type != yaml_node::kind::list) {
      problem(field.value.pos, context + "columns must be a list of columns ({name: …, type: …}), not " +
                                   describe_node(field.value));
      return;
    }
    for (std::size_t i = 0; i < field.value.items.size(); ++i) {
      const yaml_node& item = field.value.items[i];
      const std::string at = path + ".columns[" + std::to_string(i) + "]";
      spec_.positions[at] = item.pos;
      if (item.type != yaml_node::kind::map) {
        problem(item.pos,
                context + "each column must be a map ({name: …, type: …}), not " + describe_node(item));
        continue;
      }
      const entry_table fields =
          accepted(item, column_keys, "in a column of topic '" + topic.name + "'", "key");
      column_spec column;
      for (const auto& [key, f] : fields) {
        record(at + "." + key, *f);
        if (key == "name") {
          if (auto text = scalar(*f, context, "a column's name", "a name")) column.name = *text;
        } else if (key == "type") {
          read_column_type(*f, context, column.layout);
        } else if (key == "bloom_bits") {
          if (auto n = count(*f, context, key, bloom_bits_limits)) column.layout.bloom_bits = *n;
        } else if (key == "bloom_hashes") {
          if (auto n = count(*f, context, key, bloom_hashes_limits)) column.layout.bloom_hashes = *n;
        }
      }
      if (fields.find("name") == fields.end())
        problem(item.pos, context + "column " + std::to_string(i) + " has no name");
      else if (fields.find("type") == fields.end())
        problem(item.pos, context + "column '" + column.name + "' has no type (an element type or char(N))");
      topic.columns.push_back(std::move(column));
    }
  }

  /// A column's type: an element type, or char(N) for fixed-width characters of N bytes.
  void read_column_type(const yaml_entry& f, const std::string& context, column_layout& layout) {
    auto text = scalar(f, context, "type", "an element type or char(N)");
    if (!text) return;
    if (text->rfind("char(", 0) == 0 && text->back() == ')') {
      std::int64_t n = 0;
      if (parse_integer(text->substr(5, text->size() - 6), n) == integer_parse::ok && n >= 1 &&
          n <= static_cast<std::int64_t>(columnar_max_chars)) {
        layout.element = element_type::u8;
        layout.chars = static_cast<std::uint32_t>(n);
      } else {
        problem(f.value.pos, context + "type '" + *text + "': char(N) takes N from 1 to " +
                                 std::to_string(columnar_max_chars));
      }
      return;
    }
    if (auto t = element_type_from_name(*text)) {
      layout.element = *t;
      return;
    }
    std::vector<std::string> names = element_names();
    names.push_back("char(N)");
    problem(f.value.pos, context + "type must be one of " + join_choices(names, ", ") + ", not '" + *text +
                             "'" + did_you_mean(*text, names));
  }

  void read_names(const yaml_entry& field, const std::string& path, const std::string& context,
                  std::vector<std::string>& names) {
    const std::string expected = "a topic name or a list of topic names";
    if (field.value.type == yaml_node::kind::scalar) {
      spec_.positions[path + "[0]"] = field.value.pos;
      names.push_back(field.value.scalar);
      return;
    }
    if (field.value.type != yaml_node::kind::list) {
      problem(field.value.pos,
              context + field.key + " must be " + expected + ", not " + describe_node(field.value));
      return;
    }
    for (std::size_t i = 0; i < field.value.items.size(); ++i) {
      const yaml_node& item = field.value.items[i];
      if (item.type != yaml_node::kind::scalar) {
        problem(item.pos,
                context + "each of " + field.key + " must be a topic name, not " + describe_node(item));
        continue;
      }
      spec_.positions[path + "[" + std::to_string(names.size()) + "]"] = item.pos;
      names.push_back(item.scalar);
    }
  }

  void read_params(const yaml_entry& field, const std::string& path, const std::string& context,
                   operator_spec& op) {
    if (field.value.type == yaml_node::kind::null) return;
    if (field.value.type != yaml_node::kind::map) {
      problem(field.value.pos, context + "params must be a map from parameter name to value, not " +
                                   describe_node(field.value));
      return;
    }
    const entry_table params = accepted(field.value, {}, "", "parameter");
    // The class is known here: the operator's fields are read in key order, and "class" sorts first.
    const operator_entry* known = registry_.find(op.class_name);
    for (const auto& [key, entry] : params) {
      record(path + "." + key, *entry);
      const param_decl* decl = known != nullptr ? known->info.find_param(key) : nullptr;
      if (entry->value.type == yaml_node::kind::scalar) {
        op.params[key] = entry->value.scalar;  // typed by normalize_params against the class's schema
      } else if (decl != nullptr && decl->kind == param_kind::datatype &&
                 entry->value.type != yaml_node::kind::null) {
        if (auto type = datatypes_.read(entry->value, context + "parameter '" + key + "': "))
          op.params[key] = *type;
      } else if (entry->value.type == yaml_node::kind::null) {
        problem(entry->value.pos, context + "parameter '" + key + "' has no value");
      } else {
        problem(entry->value.pos, context + "parameter '" + key + "' must be a single value, not " +
                                      describe_node(entry->value));
      }
    }
  }

  /// shared_objects: name → settings. Its size is bytes, or count elements of its element type (read
  /// after the other keys, whatever their order), or — neither given — its init file's (validation).
  void read_shared_objects(const yaml_entry& objects) {
    record("shared_objects", objects);
    if (objects.value.type == yaml_node::kind::null) return;
    if (objects.value.type != yaml_node::kind::map) {
      problem(objects.value.pos, "shared_objects must be a map from object name to settings, not " +
                                     describe_node(objects.value));
      return;
    }
    const first_table firsts = first_entries(objects.value);
    for (const auto& entry : objects.value.entries) {
      if (!first_of(firsts, entry, "shared object")) continue;
      const std::string path = "shared_objects." + entry.key;
      const std::string context = "shared object '" + entry.key + "': ";
      record(path, entry);
      shared_object_spec object;
      object.name = entry.key;
      if (entry.value.type == yaml_node::kind::map) {
        const yaml_entry* bytes_field = nullptr;
        std::optional<std::uint32_t> elements;
        for (const auto& [key, field] :
             accepted(entry.value, object_keys, "in shared object '" + entry.key + "'", "key")) {
          record(path + "." + key, *field);
          if (key == "element") {
            if (auto i = choice(*field, context, key, element_names()))
              object.element = all_element_types[*i];
          } else if (key == "bytes") {
            bytes_field = field;
            if (auto b = byte_count(*field, context, key, "4KiB")) object.bytes = *b;
          } else if (key == "count") {
            if (conflicts_with(entry.value, "bytes", *field, context)) continue;
            elements = count(*field, context, key, object_count_limits);
          } else if (key == "init") {
            if (auto text = scalar(*field, context, key, "a file name", true)) object.init = *text;
          } else if (key == "versions") {
            if (auto n = count(*field, context, key, object_versions_limits)) object.versions = *n;
          } else if (key == "protocol") {
            constexpr shared::protocol protocols[] = {shared::protocol::batch, shared::protocol::lazy,
                                                      shared::protocol::rolling};
            if (auto i = choice(*field, context, key, {"batch", "lazy", "rolling"}))
              object.protocol = protocols[*i];
          } else if (key == "block_size") {
            // Checked by validation, which also sees specs built in C++.
            if (auto b = byte_count(*field, context, key, "4KiB")) object.block_bytes = *b;
          }
        }
        if (elements && bytes_field == nullptr)
          object.bytes = std::uint64_t{*elements} * size_of(object.element);
      } else if (entry.value.type != yaml_node::kind::null) {
        problem(entry.value.pos, "shared object '" + entry.key + "' must be a map of settings (" +
                                     join_choices(object_keys, ", ") + "), not " +
                                     describe_node(entry.value));
      }
      spec_.objects.push_back(std::move(object));
    }
  }

  /// Reports `field` when `other` is also written in `map` (two ways of saying one thing); true if so.
  bool conflicts_with(const yaml_node& map, const char* other, const yaml_entry& field,
                      const std::string& context) {
    const yaml_entry* first = map.find(other);
    if (first == nullptr) return false;
    problem(field.key_pos, context + "give " + other + " or " + field.key + ", not both (" + other + " at " +
                               first_at(first->key_pos, field.key_pos) + ")");
    return true;
  }

  /// An operator's `shared`: its class's object slots → the names of shared objects.
  void read_bindings(const yaml_entry& field, const std::string& path, const std::string& context,
                     operator_spec& op) {
    if (field.value.type == yaml_node::kind::null) return;
    if (field.value.type != yaml_node::kind::map) {
      problem(field.value.pos, context + "shared must be a map from object slot to shared object name, not " +
                                   describe_node(field.value));
      return;
    }
    for (const auto& [slot, entry] : accepted(field.value, {}, "", "slot")) {
      record(path + "." + slot, *entry);
      if (auto name = scalar(*entry, context, "slot '" + slot + "'", "a shared object's name"))
        op.shared[slot] = *name;
    }
  }

  void read_operators(const yaml_entry& operators) {
    record("operators", operators);
    if (operators.value.type == yaml_node::kind::null) return;
    if (operators.value.type != yaml_node::kind::map) {
      problem(operators.value.pos, "operators must be a map from operator name to settings, not " +
                                       describe_node(operators.value));
      return;
    }
    const first_table firsts = first_entries(operators.value);
    for (const auto& entry : operators.value.entries) {
      if (!first_of(firsts, entry, "operator")) continue;
      const std::string path = "operators." + entry.key;
      const std::string context = "operator '" + entry.key + "': ";
      record(path, entry);
      operator_spec op;
      op.name = entry.key;
      if (entry.value.type != yaml_node::kind::map) {
        problem(entry.value.pos, "operator '" + entry.key +
                                     "' must be a map of settings with at least a class, not " +
                                     describe_node(entry.value));
        continue;
      }
      const entry_table fields =
          accepted(entry.value, operator_keys, "in operator '" + entry.key + "'", "key");
      bool placed = false;
      for (const auto& [key, field] : fields) {
        record(path + "." + key, *field);
        if (key == "class") {
          if (auto text = scalar(*field, context, key, "an operator class name")) op.class_name = *text;
        } else if (key == "on") {
          if (auto i = choice(*field, context, key, {"cpu", "gpu"})) {
            op.on = *i == 0 ? placement::cpu : placement::gpu;
            placed = true;
          }
        } else if (key == "inputs") {
          read_names(*field, path + ".inputs", context, op.inputs);
        } else if (key == "outputs") {
          read_names(*field, path + ".outputs", context, op.outputs);
        } else if (key == "threads") {
          if (auto n = count(*field, context, key, threads_limits)) op.threads = *n;
        } else if (key == "warps") {
          if (auto n = count(*field, context, key, warps_limits)) op.warps = *n;
        } else if (key == "params") {
          read_params(*field, path + ".params", context, op);
        } else if (key == "shared") {
          read_bindings(*field, path + ".shared", context, op);
        } else if (key == "rank") {
          // A name is looked up in runtime.ranks by validation, which also sees specs built in C++.
          if (auto r = count_or_name(*field, context, key, rank_limits,
                                     "a rank number or a name of runtime.ranks")) {
            op.rank = r->count;
            op.rank_name = r->name;
          }
        } else if (key == "device") {
          if (auto n = count(*field, context, key, device_limits)) op.device = *n;
        }
      }
      if (!placed) {
        const operator_entry* known = registry_.find(op.class_name);
        op.on = known && known->info.gpu ? placement::gpu : placement::cpu;
      }
      spec_.operators.push_back(std::move(op));
    }
  }

  void read_runtime(const yaml_entry& runtime) {
    record("runtime", runtime);
    if (runtime.value.type == yaml_node::kind::null) return;
    if (runtime.value.type != yaml_node::kind::map) {
      problem(runtime.value.pos, "runtime must be a map of settings (" + join_choices(runtime_keys, ", ") +
                                     "), not " + describe_node(runtime.value));
      return;
    }
    const std::string context = "runtime: ";
    runtime_spec& rt = spec_.runtime;
    for (const auto& [key, field] : accepted(runtime.value, runtime_keys, "in runtime", "key")) {
      record("runtime." + key, *field);
      if (key == "executor") {
        if (auto i = choice(*field, context, key, {"auto", "device", "host"}))
          rt.executor = *i == 0   ? executor_kind::automatic
                        : *i == 1 ? executor_kind::device
                                  : executor_kind::host;
      } else if (key == "blocks") {
        if (auto n = count(*field, context, key, blocks_limits)) rt.blocks = *n;
      } else if (key == "warps_per_block") {
        if (auto n = count(*field, context, key, warps_per_block_limits)) rt.warps_per_block = *n;
      } else if (key == "partition") {
        if (auto i = choice(*field, context, key, {"uniform", "explicit", "auto", "auto-online"}))
          rt.partition = std::array{partition_policy::uniform, partition_policy::explicit_warps,
                                    partition_policy::auto_once, partition_policy::auto_online}[*i];
      } else if (key == "tuning") {
        read_tuning(*field, rt.tuning);
      } else if (key == "coherence") {
        read_coherence(*field, rt.coherence);
      } else if (key == "watchdog_ms") {
        if (auto n = count(*field, context, key, watchdog_ms_limits)) rt.watchdog_ms = *n;
      } else if (key == "timer_slack_us") {
        if (auto n = count(*field, context, key, timer_slack_us_limits)) rt.timer_slack_us = *n;
      } else if (key == "max_sleep_us") {
        if (auto n = count(*field, context, key, max_sleep_us_limits)) rt.max_sleep_us = *n;
      } else if (key == "index_rest") {
        if (auto n = count(*field, context, key, index_rest_limits)) rt.index_rest = *n;
      } else if (key == "spread_warps") {
        if (auto i = choice(*field, context, key, {"off", "on", "false", "true", "no", "yes"}))
          rt.spread_warps = *i % 2 == 1;
      } else if (key == "part_size") {
        // Checked against its limits by validation, which also sees specs built in C++.
        if (auto b = byte_count(*field, context, key, "64KiB")) rt.part_bytes = *b;
      } else if (key == "file_cache") {
        read_file_cache(*field, rt.file_cache.emplace());
      } else if (key == "ranks") {
        read_ranks(*field, rt.ranks);
      }
    }
  }

  /// runtime.ranks: rank name → rank number. The names are checked by validation, which also sees specs
  /// built in C++.
  void read_ranks(const yaml_entry& ranks, std::map<std::string, std::uint32_t>& names) {
    if (ranks.value.type == yaml_node::kind::null) return;
    if (ranks.value.type != yaml_node::kind::map) {
      problem(ranks.value.pos, "runtime: ranks must be a map from rank name to rank number, not " +
                                   describe_node(ranks.value));
      return;
    }
    for (const auto& [name, entry] : accepted(ranks.value, {}, "", "rank name")) {
      record("runtime.ranks." + name, *entry);
      if (auto n = count(*entry, "runtime.ranks: ", "rank '" + name + "'", rank_limits)) names[name] = *n;
    }
  }

  void read_tuning(const yaml_entry& tuning, tuning_spec& t) {
    if (tuning.value.type == yaml_node::kind::null) return;
    if (tuning.value.type != yaml_node::kind::map) {
      problem(tuning.value.pos, "runtime: tuning must be a map of settings (" +
                                    join_choices(tuning_keys, ", ") + "), not " +
                                    describe_node(tuning.value));
      return;
    }
    const std::string context = "runtime.tuning: ";
    for (const auto& [key, field] : accepted(tuning.value, tuning_keys, "in runtime.tuning", "key")) {
      record("runtime.tuning." + key, *field);
      if (key == "samples") {
        if (auto n = count(*field, context, key, tuning_samples_limits)) t.samples = *n;
      } else if (key == "retune_spread_percent") {
        if (auto n = count(*field, context, key, retune_spread_percent_limits)) t.retune_spread_percent = *n;
      } else if (key == "retune_hold_ms") {
        if (auto n = count(*field, context, key, retune_hold_ms_limits)) t.retune_hold_ms = *n;
      }
    }
  }

  void read_file_cache(const yaml_entry& cache, file_cache_spec& c) {
    if (cache.value.type == yaml_node::kind::null) return;  // `file_cache:` alone: every default
    if (cache.value.type != yaml_node::kind::map) {
      problem(cache.value.pos, "runtime: file_cache must be a map of settings (" +
                                   join_choices(file_cache_keys, ", ") + "), not " +
                                   describe_node(cache.value));
      return;
    }
    const std::string context = "runtime.file_cache: ";
    for (const auto& [key, field] : accepted(cache.value, file_cache_keys, "in runtime.file_cache", "key")) {
      record("runtime.file_cache." + key, *field);
      if (key == "size") {
        if (auto b = byte_count(*field, context, key, "2GiB")) c.size = *b;
      } else if (key == "page_size") {
        // Checked against its limits by validation, which also sees specs built in C++.
        if (auto b = byte_count(*field, context, key, "4KiB"))
          c.page_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(*b, UINT32_MAX));
      } else if (key == "readahead") {
        if (auto b = byte_count(*field, context, key, "64KiB")) c.readahead = *b;
      } else if (key == "readahead_mode") {
        if (auto i = choice(*field, context, key, {"off", "on", "adaptive"}))
          c.readahead_policy =
              std::array{readahead_mode::off, readahead_mode::on, readahead_mode::adaptive}[*i];
      } else if (key == "replacement") {
        if (auto i = choice(*field, context, key, {"lra", "global"}))
          c.replacement = *i == 0 ? page_replacement::lra : page_replacement::global;
      } else if (key == "io_threads") {
        if (auto n = count(*field, context, key, io_threads_limits)) c.io_threads = *n;
      } else if (key == "io_slots_per_block") {
        if (auto n = count(*field, context, key, io_slots_per_block_limits)) c.io_slots_per_block = *n;
      } else if (key == "max_request") {
        if (auto b = byte_count(*field, context, key, "256KiB")) c.max_request = *b;
      } else if (key == "io_chunk") {
        if (auto b = byte_count(*field, context, key, "1MiB")) c.io_chunk = *b;
      } else if (key == "direct") {
        if (auto i = choice(*field, context, key, {"auto", "on", "off"}))
          c.direct = std::array{direct_io_mode::automatic, direct_io_mode::on, direct_io_mode::off}[*i];
      }
    }
  }

  void read_coherence(const yaml_entry& coherence, coherence_spec& c) {
    if (coherence.value.type == yaml_node::kind::null) return;
    if (coherence.value.type != yaml_node::kind::map) {
      problem(coherence.value.pos, "runtime: coherence must be a map of layer policies (" +
                                       join_choices(coherence_keys, ", ") + "), not " +
                                       describe_node(coherence.value));
      return;
    }
    const std::string context = "runtime.coherence: ";
    for (const auto& [key, field] :
         accepted(coherence.value, coherence_keys, "in runtime.coherence", "key")) {
      record("runtime.coherence." + key, *field);
      if (key == "catalog") {
        if (auto i = choice(*field, context, key, {"naive", "read_mostly"}))
          c.catalog = *i == 0 ? catalog_policy::naive : catalog_policy::read_mostly;
      } else if (key == "index") {
        if (auto i = choice(*field, context, key, {"naive", "placed"}))
          c.index = *i == 0 ? index_policy::naive : index_policy::placed;
      } else if (key == "frames") {
        if (auto i = choice(*field, context, key, {"naive", "placed"}))
          c.frames = *i == 0 ? frames_policy::naive : frames_policy::placed;
      }
    }
  }

  const operator_registry& registry_;
  topology_spec& spec_;
  datatype_reader datatypes_;
};

}  // namespace

std::vector<diagnostic> read_topology(const yaml_node& root, const std::string& source_name,
                                      const operator_registry& registry, topology_spec& spec) {
  spec.source_name = source_name;
  return spec_reader(registry, spec).read(root);
}

topology_spec load_topology_text(std::string_view yaml_text, const std::string& source_name,
                                 const operator_registry& registry,
                                 const std::vector<std::string>& overrides) {
  yaml_node root = parse_yaml(yaml_text, source_name);
  apply_overrides(root, overrides);
  topology_spec spec;
  std::vector<diagnostic> problems = read_topology(root, source_name, registry, spec);
  if (problems.empty()) problems = topology_problems(spec, registry);
  if (!problems.empty()) {
    std::vector<std::string> files{source_name};
    for (const auto& o : overrides) files.push_back(override_source(o));
    sort_problems(problems, files);
    throw config_error(std::move(problems));
  }
  return spec;
}

namespace {

/// What a path that is not a regular file is, for the message that refuses it.
const char* kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

[[noreturn]] void refuse_file(const std::string& path, const std::string& why) {
  throw config_error(source_pos{path, 0, 0}, "cannot read topology: " + why);
}

/// The file's text, read with a bound: only regular files, at most yaml_limits::max_bytes. A device
/// (/dev/zero) or a FIFO has no end to wait for, and a file past the bound is refused before it is read.

std::string read_topology_text(const std::string& path) {
  const auto refuse = [&](const std::string& why) { refuse_file(path, why); };
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) refuse(std::strerror(errno));
  struct fd_closer {
    int fd;
    ~fd_closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) refuse(std::strerror(errno));
  if (S_ISDIR(info.st_mode)) refuse(std::strerror(EISDIR));
  if (!S_ISREG(info.st_mode))
    refuse(std::string("it is ") + kind_of_file(info.st_mode) + ", not a regular file");
  const auto too_large = [&](std::uint64_t bytes, const char* more) {
    refuse_file(path, "the file is " + std::string(more) + std::to_string(bytes) +
                          " bytes, more than a topology may be (" +
                          std::to_string(yaml_limits::max_bytes >> 20) + " MiB)");
  };
  if (static_cast<std::uint64_t>(info.st_size) > yaml_limits::max_bytes)
    too_large(static_cast<std::uint64_t>(info.st_size), "");
  std::string text(static_cast<std::size_t>(info.st_size) + 1, '\0');
  std::size_t have = 0;
  while (true) {
    // One byte more than the bound, so that a file grown since fstat is refused, not cut short.
    if (have == text.size()) {
      if (text.size() > yaml_limits::max_bytes) too_large(yaml_limits::max_bytes, "over ");
      text.resize(std::min(text.size() * 2, yaml_limits::max_bytes + 1));
    }
    const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(std::strerror(errno));
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  text.resize(have);
  return text;
}

}  // namespace

topology_spec load_topology_file(const std::string& path, const operator_registry& registry,
                                 const std::vector<std::string>& overrides) {
  return load_topology_text(read_topology_text(path), path, registry, overrides);
}

}  // namespace xf
