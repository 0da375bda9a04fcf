// Validation of a TopologySpec: everything the runtime relies on, checked before anything starts, with
// every problem reported at the value that causes it.
#include "framework/model/spec_validation.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "framework/core/units.hpp"
#include "framework/model/columnar_checks.hpp"
#include "framework/model/shared_object_checks.hpp"
#include "framework/model/spec_yaml.hpp"
#include "framework/model/suggest.hpp"
#include "topics/topic_layout.hpp"

namespace xf {

namespace {

constexpr std::int64_t uint32_max = std::numeric_limits<std::uint32_t>::max();

/// "at least 1", "at most 4294967295" or "between 1 and 32": the words for the side `value` is on.
std::string range_words(count_limits limits, bool below) {
  if (limits.max == uint32_max)
    return below ? "at least " + std::to_string(limits.min) : "at most " + std::to_string(limits.max);
  return "between " + std::to_string(limits.min) + " and " + std::to_string(limits.max);
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "'" : ", '") + n + "'";
  return text;
}

/// One use of a topic by an operator: operator index, and the position of the name in its list.
struct topic_use {
  std::size_t op;
  std::size_t index;
};

class validator {
 public:
  validator(topology_spec& spec, const operator_registry& registry) : spec_(spec), registry_(registry) {}

  std::vector<diagnostic> run() {
    check_topics();
    check_datatypes();
    check_runtime();
    check_operators();
    check_thread_total();
    check_file_cache();
    check_partition();
    resolve_references();
    check_topic_uses();
    check_publishers();
    check_placement();
    check_cycles();
    check_maps();
    check_inputs();
    check_elements();
    check_columnar_uses();
    check_object_fields(spec_, problems_);
    check_object_bindings(spec_, entries_, params_valid_, problems_);
    check_references_for_verification();
    check_memory();
    check_written_files();
    return std::move(problems_);
  }

 private:
  void problem(const source_pos& pos, std::string message) { problems_.push_back({pos, std::move(message)}); }

  source_pos at(const std::string& path) const { return spec_.position_of(path); }

  source_pos at_key(const std::string& path) const { return spec_.position_of_key(path); }
  source_pos at_field(const std::string& owner, const std::string& field) const {
    return spec_.position_of_field(owner, field);
  }

  static std::string op_path(const operator_spec& op) { return "operators." + op.name; }
  static std::string topic_path(const topic_spec& t) { return "topics." + t.name; }

  void check_topics() {
    std::set<std::string, std::less<>> seen;
    for (auto& t : spec_.topics) {
      const std::string path = topic_path(t);
      const std::string context = "topic '" + t.name + "': ";
      if (!is_valid_name(t.name))
        problem(
            at_key(path),
            "topic name '" + t.name +
                "' is not a valid name (use letters, digits, '_' and '-', starting with a letter or '_')");
      if (!seen.insert(t.name).second) problem(at_key(path), "duplicate topic '" + t.name + "'");
      const bool columns_valid = check_columnar_fields(spec_, t, problems_);
      if (std::string why = frame_size_problem(t.frame_bytes); !why.empty())
        problem(at_field(path, "frame_size"), context + why);
      if (std::string why = count_problem("capacity", t.capacity, capacity_limits); !why.empty())
        problem(at_field(path, "capacity"), context + why);
      columns_valid_.push_back(columns_valid);
    }
  }

  /// The datatypes' names: parameters refer to them, and a primitive's name means the primitive.
  void check_datatypes() {
    std::set<std::string, std::less<>> seen;
    for (const datatype_spec& d : spec_.datatypes) {
      const source_pos where = at_key("datatypes." + d.name);
      if (!is_valid_name(d.name))
        problem(
            where,
            "datatype name '" + d.name +
                "' is not a valid name (use letters, digits, '_' and '-', starting with a letter or '_')");
      else if (dt::primitive_from_name(d.name))
        problem(where, "datatype name '" + d.name +
                           "' is a primitive's (a parameter naming it means the primitive)");
      if (!seen.insert(d.name).second) problem(where, "duplicate datatype '" + d.name + "'");
    }
  }

  void check_runtime() {
    if (std::string why = count_problem("blocks", spec_.runtime.blocks, blocks_limits); !why.empty())
      problem(at("runtime.blocks"), "runtime: " + why);
    if (std::string why =
            count_problem("warps_per_block", spec_.runtime.warps_per_block, warps_per_block_limits);
        !why.empty())
      problem(at("runtime.warps_per_block"), "runtime: " + why);
    if (std::string why =
            count_problem("timer_slack_us", spec_.runtime.timer_slack_us, timer_slack_us_limits);
        !why.empty())
      problem(at("runtime.timer_slack_us"), "runtime: " + why);
    if (std::string why = count_problem("max_sleep_us", spec_.runtime.max_sleep_us, max_sleep_us_limits);
        !why.empty())
      problem(at("runtime.max_sleep_us"), "runtime: " + why);
    if (std::string why = count_problem("index_rest", spec_.runtime.index_rest, index_rest_limits);
        !why.empty())
      problem(at("runtime.index_rest"), "runtime: " + why);
    // Parts start on page boundaries, where every element type and the kernel's vector loads align.
    if (spec_.runtime.part_bytes % part_size_multiple != 0)
      problem(at("runtime.part_size"),
              "runtime: part_size must be a multiple of 4KiB (0: the plan's choice), not " +
                  exact_bytes(spec_.runtime.part_bytes));
    const tuning_spec& t = spec_.runtime.tuning;
    if (!is_tuned(spec_.runtime.partition) && t != tuning_spec{}) {
      problem(at("runtime.tuning"),
              "runtime: tuning is only used with runtime.partition: auto or auto-online "
              "(this topology's partition is " +
                  std::string(name_of(spec_.runtime.partition)) + ")");
      return;
    }
    const std::pair<const char*, std::pair<std::uint32_t, count_limits>> fields[] = {
        {"samples", {t.samples, tuning_samples_limits}},
        {"retune_spread_percent", {t.retune_spread_percent, retune_spread_percent_limits}},
        {"retune_hold_ms", {t.retune_hold_ms, retune_hold_ms_limits}}};
    for (const auto& [name, value] : fields)
      if (std::string why = count_problem(name, value.first, value.second); !why.empty())
        problem(at(std::string("runtime.tuning.") + name), "runtime.tuning: " + why);
  }

  /// runtime.file_cache: each size against its limits and the others (page ≤ readahead + page ≤ request),
  /// and only where an operator reads files through the cache.
  void check_file_cache() {
    // Sizes as YAML takes them ("64KiB"), exact: "9.77 KiB" would hide why 10000 is not whole pages.
    auto size_text = [](std::uint64_t bytes) {
      const std::string text = exact_bytes(bytes);
      return text.back() >= '0' && text.back() <= '9' ? text + " bytes" : text;
    };
    if (!spec_.runtime.file_cache) return;
    const file_cache_spec& c = *spec_.runtime.file_cache;
    const std::string context = "runtime.file_cache: ";
    auto here = [&](const char* key) { return at(std::string("runtime.file_cache.") + key); };
    const std::uint64_t page = c.page_bytes;
    const bool page_ok = page >= 4 * KiB && page <= 64 * KiB && (page & (page - 1)) == 0;
    if (!page_ok) {
      problem(here("page_size"),
              context + "page_size must be a power of two from 4KiB to 64KiB, not " + size_text(page));
    }
    if (page_ok && (c.size < page || c.size % page != 0)) {
      problem(here("size"), context + "size must be a whole number of pages (" + size_text(page) + "), not " +
                                size_text(c.size));
    }
    const bool readahead_ok = !page_ok || (c.readahead <= MiB && c.readahead % page == 0);
    if (!readahead_ok) {
      problem(here("readahead"), context + "readahead must be a whole number of pages (" + size_text(page) +
                                     ") up to 1MiB, not " + size_text(c.readahead));
    }
    if (page_ok && (c.max_request > 16 * MiB || c.max_request % page != 0)) {
      problem(here("max_request"), context + "max_request must be a whole number of pages (" +
                                       size_text(page) + ") up to 16MiB, not " + size_text(c.max_request));
    } else if (page_ok && readahead_ok && c.max_request < page + c.readahead) {
      problem(here("max_request"), context + "max_request (" + size_text(c.max_request) +
                                       ") must hold a page and its readahead (" +
                                       size_text(page + c.readahead) + ")");
    }
    if (c.io_chunk < 4 * KiB || c.io_chunk % (4 * KiB) != 0) {
      problem(here("io_chunk"),
              context + "io_chunk must be a whole number of 4KiB blocks, not " + size_text(c.io_chunk));
    }
    for (const auto& [name, value, limits] :
         {std::tuple{"io_threads", c.io_threads, io_threads_limits},
          std::tuple{"io_slots_per_block", c.io_slots_per_block, io_slots_per_block_limits}}) {
      if (std::string why = count_problem(name, value, limits); !why.empty())
        problem(here(name), context + why);
    }
    const bool any_reader = std::any_of(entries_.begin(), entries_.end(), [](const operator_entry* e) {
      return e != nullptr && e->info.reads_files;
    });
    const bool all_known =
        std::none_of(entries_.begin(), entries_.end(), [](const operator_entry* e) { return e == nullptr; });
    if (!any_reader && all_known) {  // an unknown class may be the reader: its own error says so
      problem(at_key("runtime.file_cache"),
              "runtime: file_cache is set, but no operator of this topology reads files through the cache");
    }
  }

  void check_operators() {
    if (spec_.operators.empty()) problem(at_key("operators"), "the topology has no operators");
    const std::vector<std::string> classes = registry_.class_names();
    std::set<std::string, std::less<>> seen;
    entries_.assign(spec_.operators.size(), nullptr);
    params_valid_.assign(spec_.operators.size(), false);
    for (std::size_t i = 0; i < spec_.operators.size(); ++i) {
      operator_spec& op = spec_.operators[i];
      const std::string path = op_path(op);
      const std::string context = "operator '" + op.name + "': ";
      if (!is_valid_name(op.name))
        problem(
            at_key(path),
            "operator name '" + op.name +
                "' is not a valid name (use letters, digits, '_' and '-', starting with a letter or '_')");
      if (!seen.insert(op.name).second) problem(at_key(path), "duplicate operator '" + op.name + "'");

      // Workers: threads for CPU operators, warps (explicit partition) for GPU ones.
      if (std::string why = count_problem("threads", op.threads, threads_limits); !why.empty())
        problem(at_field(path, "threads"), context + why);
      else if (op.on == placement::gpu && op.threads != 1)
        problem(at_field(path, "threads"),
                context +
                    "threads applies to CPU operators only (a GPU operator runs in every kernel block; see "
                    "runtime.blocks)");
      if (op.warps != 0) {
        if (op.on == placement::cpu)
          problem(at_field(path, "warps"),
                  context + "warps applies to GPU operators only (this one is on cpu)");
        else if (std::string why = count_problem("warps", op.warps, warps_limits); !why.empty())
          problem(at_field(path, "warps"), context + why);
        else if (spec_.runtime.partition != partition_policy::explicit_warps)
          problem(
              at_field(path, "warps"),
              context +
                  "warps is only used with runtime.partition: explicit (uniform splits each block's warps "
                  "evenly)");
      } else if (op.on == placement::gpu && spec_.runtime.partition == partition_policy::explicit_warps) {
        problem(at_key(path),
                context + "runtime.partition is explicit, so this GPU operator needs warps (1 to 32)");
      }

      if (op.class_name.empty()) {
        problem(at_key(path),
                "operator '" + op.name + "' has no class (xeflow-run --list-operators lists them)");
        continue;
      }
      const operator_entry* entry = registry_.find(op.class_name);
      if (!entry) {
        problem(at_field(path, "class"), context + "unknown operator class '" + op.class_name + "'" +
                                             did_you_mean(op.class_name, classes));
        continue;
      }
      entries_[i] = entry;
      const operator_info& info = entry->info;
      if (op.on == placement::gpu && !info.gpu)
        problem(at_field(path, "on"),
                context + "class '" + op.class_name + "' has no GPU compute, so it cannot run on gpu");
      check_arity(op, info);
      const auto param_problems = normalize_params(info, op.params, spec_.datatypes);
      params_valid_[i] = param_problems.empty();
      for (const auto& p : param_problems) {
        source_pos where = p.key.empty()                       ? at_field(path, "params")
                           : info.find_param(p.key) == nullptr ? at_key(path + ".params." + p.key)
                                                               : at(path + ".params." + p.key);
        problem(where, context + p.message);
      }
    }
  }

  /// Each CPU operator's threads are bounded (threads_limits); so is their sum, reported at the operator
  /// that takes it past the bound.
  void check_thread_total() {
    std::uint64_t total = 0;
    for (const operator_spec& op : spec_.operators) {
      if (op.on != placement::cpu || !count_problem("threads", op.threads, threads_limits).empty()) continue;
      total += op.threads;
      if (total <= max_cpu_threads) continue;
      problem(at_field(op_path(op), "threads"),
              "operator '" + op.name + "': its " + std::to_string(op.threads) +
                  (op.threads == 1 ? " thread brings" : " threads bring") +
                  " the CPU operators' threads to " + std::to_string(total) +
                  ", more than a topology may run (" + std::to_string(max_cpu_threads) + ")");
      return;
    }
  }

  /// Two operators writing one file (two file sinks with one path) interleave their frames and leave
  /// holes where the other's stream is shorter: refused at the second writer's parameter. Paths compare
  /// after making them absolute and normal, and resolving the links of what exists.
  void check_written_files() {
    std::map<std::string, std::pair<std::size_t, std::string>> writers;  // file -> operator, its parameter
    for (std::size_t i = 0; i < spec_.operators.size(); ++i) {
      if (entries_[i] == nullptr) continue;
      const operator_spec& op = spec_.operators[i];
      for (const param_decl& decl : entries_[i]->info.params) {
        if (!decl.writes_file) continue;
        const auto value = op.params.find(decl.name);
        if (value == op.params.end()) continue;
        const std::string* text = std::get_if<std::string>(&value->second);
        if (text == nullptr || text->empty()) continue;
        std::error_code ec;
        std::string file =
            std::filesystem::weakly_canonical(std::filesystem::absolute(*text, ec), ec).string();
        if (ec) file = std::filesystem::path(*text).lexically_normal().string();
        const auto [it, first] = writers.emplace(file, std::make_pair(i, decl.name));
        if (first) continue;
        const operator_spec& other = spec_.operators[it->second.first];
        const source_pos there = at(op_path(other) + ".params." + it->second.second);
        problem(at(op_path(op) + ".params." + decl.name),
                "operator '" + op.name + "': " + decl.name + " '" + *text + "' is a file operator '" +
                    other.name + "' writes too (" + there.str() +
                    "): two writers into one file interleave their streams and leave holes");
      }
    }
  }

  void check_arity(const operator_spec& op, const operator_info& info) {
    const std::string path = op_path(op);
    const std::string what =
        "operator '" + op.name + "': class '" + op.class_name + "' is a " + std::string(name_of(info.role));
    auto exactly_one = [&](const std::vector<std::string>& list, const char* field, const char* noun) {
      if (list.size() == 1) return;
      const source_pos where = list.size() > 1 ? at(path + "." + field + "[1]") : at_field(path, field);
      problem(where, what + " and needs exactly 1 " + noun + ", not " + std::to_string(list.size()));
    };
    auto none = [&](const std::vector<std::string>& list, const char* field, const char* noun) {
      if (list.empty()) return;
      problem(at(path + "." + field + "[0]"), what + " and takes no " + noun);
    };
    switch (info.role) {
      case operator_role::source:
        none(op.inputs, "inputs", "inputs");
        exactly_one(op.outputs, "outputs", "output");
        break;
      case operator_role::map:
        exactly_one(op.inputs, "inputs", "input");
        exactly_one(op.outputs, "outputs", "output");
        break;
      case operator_role::sink:
        exactly_one(op.inputs, "inputs", "input");
        none(op.outputs, "outputs", "outputs");
        break;
    }
  }

  /// Under the explicit partition the GPU operators' warps share one block.
  void check_partition() {
    if (spec_.runtime.partition != partition_policy::explicit_warps) return;
    const std::uint32_t block = spec_.runtime.warps_per_block;
    if (count_problem("warps_per_block", block, warps_per_block_limits) != "") return;
    std::uint64_t total = 0;
    for (const auto& op : spec_.operators) {
      if (op.on != placement::gpu || op.warps == 0) continue;
      total += op.warps;
      if (total > block) {
        problem(at_field(op_path(op), "warps"),
                "operator '" + op.name + "': its " + std::to_string(op.warps) +
                    " warps bring the GPU operators' total to " + std::to_string(total) +
                    ", more than runtime.warps_per_block (" + std::to_string(block) + ")");
        return;
      }
    }
  }

  /// Maps topic names to indices; reports undeclared and repeated names; fills publishers/subscribers.
  void resolve_references() {
    std::map<std::string, std::size_t, std::less<>> index;
    std::vector<std::string> names;
    for (std::size_t t = 0; t < spec_.topics.size(); ++t) {
      index.emplace(spec_.topics[t].name, t);
      names.push_back(spec_.topics[t].name);
    }
    publishers_.assign(spec_.topics.size(), {});
    subscribers_.assign(spec_.topics.size(), {});
    inputs_.assign(spec_.operators.size(), {});
    outputs_.assign(spec_.operators.size(), {});
    for (std::size_t o = 0; o < spec_.operators.size(); ++o) {
      const operator_spec& op = spec_.operators[o];
      const std::string path = op_path(op);
      std::map<std::string, std::string, std::less<>> listed;  // topic → "inputs"/"outputs"
      auto resolve = [&](const std::vector<std::string>& list, const char* field, bool publishing) {
        for (std::size_t i = 0; i < list.size(); ++i) {
          const std::string& name = list[i];
          const std::string item = path + "." + field + "[" + std::to_string(i) + "]";
          auto it = index.find(name);
          if (it == index.end()) {
            problem(at(item), "operator '" + op.name + "': " + (publishing ? "output" : "input") + " '" +
                                  name + "' is not a declared topic" + did_you_mean(name, names));
            continue;
          }
          auto [seen, fresh] = listed.emplace(name, field);
          if (!fresh) {
            // The repeat is left out of the graph: as an input and output of one operator it would also
            // read as a cycle and as a second publisher, which says the same thing three times.
            problem(at(item), "operator '" + op.name + "': topic '" + name + "' is already listed in its " +
                                  seen->second);
            continue;
          }
          (publishing ? publishers_ : subscribers_)[it->second].push_back({o, i});
          (publishing ? outputs_ : inputs_)[o].push_back(it->second);
        }
      };
      resolve(op.inputs, "inputs", false);
      resolve(op.outputs, "outputs", true);
    }
  }

  void check_topic_uses() {
    for (std::size_t t = 0; t < spec_.topics.size(); ++t) {
      const topic_spec& topic = spec_.topics[t];
      const source_pos where = at_key(topic_path(topic));
      if (publishers_[t].empty() && subscribers_[t].empty())
        problem(where, "topic '" + topic.name + "' is not used by any operator");
      else if (publishers_[t].empty())
        problem(where, "topic '" + topic.name + "' has no publisher (no operator lists it in its outputs)");
      else if (subscribers_[t].empty())
        problem(where, "topic '" + topic.name + "' has no subscriber (no operator lists it in its inputs)");
    }
  }

  std::string output_item(const topic_use& use) const {
    return op_path(spec_.operators[use.op]) + ".outputs[" + std::to_string(use.index) + "]";
  }
  std::string input_item(const topic_use& use) const {
    return op_path(spec_.operators[use.op]) + ".inputs[" + std::to_string(use.index) + "]";
  }

  /// Several publishers of one topic share its claim counter and frame heap: all on one side, and no map
  /// among them (a 1:1 map publishes at its input's offsets, which would collide with anyone else's).
  void check_publishers() {
    for (std::size_t t = 0; t < spec_.topics.size(); ++t) {
      const auto& pubs = publishers_[t];
      if (pubs.size() < 2) continue;
      const std::string& topic = spec_.topics[t].name;
      std::vector<std::string> names;
      for (const auto& p : pubs) names.push_back(spec_.operators[p.op].name);
      const operator_spec& first = spec_.operators[pubs[0].op];
      bool reported = false;
      for (std::size_t k = 1; k < pubs.size() && !reported; ++k) {
        const operator_spec& other = spec_.operators[pubs[k].op];
        if (other.on != first.on) {
          problem(
              at(output_item(pubs[k])),
              "topic '" + topic + "' has publishers on both sides ('" + first.name + "' on " +
                  std::string(name_of(first.on)) + ", '" + other.name + "' on " +
                  std::string(name_of(other.on)) +
                  "); a topic's claim counter and frame heap are written by one side only, so its publishers "
                  "must all be on cpu or all on gpu");
          reported = true;
        }
      }
      for (std::size_t k = 0; k < pubs.size() && !reported; ++k) {
        const operator_entry* entry = entries_[pubs[k].op];
        if (!entry || entry->info.role != operator_role::map) continue;
        problem(
            at(output_item(pubs[k == 0 ? 1 : k])),
            "topic '" + topic + "' has " + std::to_string(pubs.size()) + " publishers (" +
                quoted_list(names) + "), but '" + spec_.operators[pubs[k].op].name +
                "' is a 1:1 map: it publishes at its input's offsets, so it must be its output topic's only "
                "publisher");
        reported = true;
      }
    }
  }

  /// Placement on MPI ranks and GPUs: rank names resolved into numbers, `device:` on GPU operators only,
  /// and what must share a rank. Rank numbers are not checked against how many ranks run: only the
  /// planner, which runs with them, knows that.
  void check_placement() {
    check_rank_names();
    rank_known_.assign(spec_.operators.size(), false);
    for (std::size_t o = 0; o < spec_.operators.size(); ++o) {
      operator_spec& op = spec_.operators[o];
      const std::string path = op_path(op);
      const std::string context = "operator '" + op.name + "': ";
      if (!op.rank_name.empty()) {
        const auto named = spec_.runtime.ranks.find(op.rank_name);
        if (named == spec_.runtime.ranks.end()) {
          problem(at_field(path, "rank"), context + unknown_rank_name(op.rank_name));
        } else {
          op.rank = named->second;
          rank_known_[o] = count_problem("rank", op.rank, rank_limits).empty();  // else reported at its name
        }
      } else if (std::string why = count_problem("rank", op.rank, rank_limits); !why.empty()) {
        problem(at_field(path, "rank"), context + why);
      } else {
        rank_known_[o] = true;
      }
      if (!op.device) continue;
      if (op.on == placement::cpu)
        problem(at_field(path, "device"),
                context +
                    "device applies to GPU operators only (this one is on cpu): it names the GPU its "
                    "rank's kernel runs on");
      else if (std::string why = count_problem("device", *op.device, device_limits); !why.empty())
        problem(at_field(path, "device"), context + why);
    }
    check_rank_devices();
    check_topic_ranks();
    check_object_ranks();
  }

  /// runtime.ranks: names that read as names (never as numbers), for numbers within rank_limits.
  void check_rank_names() {
    for (const auto& [name, rank] : spec_.runtime.ranks) {
      const std::string path = "runtime.ranks." + name;
      if (!is_valid_name(name))
        problem(at_key(path), "runtime.ranks: rank name '" + name +
                                  "' is not a valid name (use letters, digits, '_' and '-', starting with a "
                                  "letter or '_')");
      if (std::string why = count_problem("rank '" + name + "'", rank, rank_limits); !why.empty())
        problem(at(path), "runtime.ranks: " + why);
    }
  }

  std::string unknown_rank_name(const std::string& name) const {
    std::vector<std::string> names;
    for (const auto& entry : spec_.runtime.ranks) names.push_back(entry.first);
    const std::string text = "rank '" + name + "' is not a name of runtime.ranks";
    if (names.empty())
      return text + " (it names no rank: give a rank number, or name the rank under runtime.ranks)";
    const std::string close = closest_match(name, names);
    return text + " (" + (close.empty() ? "" : "did you mean '" + close + "'? ") +
           "its names: " + quoted_list(names) + ")";
  }

  /// "rank 1", or "rank 'writer' (1)" for a rank given by its name.
  std::string rank_text(const operator_spec& op) const {
    return op.rank_name.empty() ? "rank " + std::to_string(op.rank)
                                : "rank '" + op.rank_name + "' (" + std::to_string(op.rank) + ")";
  }

  /// Where an operator's rank is written, else `fallback` (the use that puts it on the wrong rank).
  source_pos rank_or(const operator_spec& op, const std::string& fallback) const {
    const std::string path = op_path(op) + ".rank";
    return spec_.positions.count(path) != 0 ? at(path) : at(fallback);
  }

  /// A rank's GPU operators run in its one kernel, on one GPU: those that give `device:` give the same.
  void check_rank_devices() {
    std::map<std::uint32_t, std::size_t> first_with_device;  // rank → operator
    for (std::size_t o = 0; o < spec_.operators.size(); ++o) {
      const operator_spec& op = spec_.operators[o];
      if (!rank_known_[o] || op.on != placement::gpu || !op.device) continue;
      const auto [first, fresh] = first_with_device.emplace(op.rank, o);
      const operator_spec& other = spec_.operators[first->second];
      if (fresh || *other.device == *op.device) continue;
      problem(at_field(op_path(op), "device"),
              "operator '" + op.name + "': device " + std::to_string(*op.device) + ", but '" + other.name +
                  "', a GPU operator on the same " + rank_text(op) + ", gives device " +
                  std::to_string(*other.device) + ": a rank runs one kernel on one GPU");
    }
  }

  /// A topic's offsets are claimed where it is published (its claim counter is in that process's memory),
  /// so its publishers share one rank; a subscriber elsewhere gets its frames over a bridge.
  void check_topic_ranks() {
    for (std::size_t t = 0; t < spec_.topics.size(); ++t) {
      const auto& pubs = publishers_[t];
      const auto first =
          std::find_if(pubs.begin(), pubs.end(), [&](const topic_use& u) { return rank_known_[u.op]; });
      if (first == pubs.end()) continue;
      const operator_spec& a = spec_.operators[first->op];
      for (auto use = first + 1; use != pubs.end(); ++use) {
        const operator_spec& b = spec_.operators[use->op];
        if (!rank_known_[use->op] || b.rank == a.rank) continue;
        problem(rank_or(b, output_item(*use)),
                "topic '" + spec_.topics[t].name + "' has publishers on two ranks ('" + a.name + "' on " +
                    rank_text(a) + ", '" + b.name + "' on " + rank_text(b) +
                    "); offsets are claimed where a topic is published, so a topic's publishers share one "
                    "rank (its subscribers may be on any)");
        break;
      }
    }
  }

  /// A shared object lives on its writer's rank: its readers resolve each frame's version in the writer's
  /// memory. An object no operator writes only ever holds version 0 (its init file, or zeros), the same
  /// wherever it is read, so its readers are not held to one rank here.
  void check_object_ranks() {
    struct binding {
      std::size_t op;
      std::string slot;
    };
    std::map<std::string, binding, std::less<>> writers;
    std::map<std::string, std::vector<binding>, std::less<>> readers;
    for (std::size_t o = 0; o < spec_.operators.size(); ++o) {
      if (entries_[o] == nullptr || !rank_known_[o]) continue;
      for (const auto& [slot, object] : spec_.operators[o].shared) {
        const object_slot_decl* decl = entries_[o]->info.find_object(slot);
        if (decl == nullptr || spec_.find_object(object) == nullptr)
          continue;  // reported by the bindings' checks
        if (decl->access == object_access::write)
          writers.try_emplace(object, binding{o, slot});  // a second writer is reported there too
        else
          readers[object].push_back({o, slot});
      }
    }
    for (const auto& [object, writer] : writers) {
      const operator_spec& w = spec_.operators[writer.op];
      for (const binding& reader : readers[object]) {
        const operator_spec& r = spec_.operators[reader.op];
        if (r.rank == w.rank) continue;
        // At whichever of the two comes second, as the topic's second publisher is.
        const binding& later = reader.op > writer.op ? reader : writer;
        const operator_spec& at_op = spec_.operators[later.op];
        problem(rank_or(at_op, op_path(at_op) + ".shared." + later.slot),
                "shared object '" + object + "' is written by '" + w.name + "' on " + rank_text(w) +
                    " and read by '" + r.name + "' on " + rank_text(r) +
                    "; a shared object lives on one rank: its readers resolve versions in the writer's "
                    "memory");
        break;
      }
    }
  }

  /// One step of a path through the operator graph: an operator and the topic taken to the next one.
  struct path_step {
    std::size_t op;
    std::size_t topic;
  };

  /// Depth-first search over operator → topic → subscriber edges; names each cycle once. Iterative, with
  /// its own stack: a chain of many thousand operators is as deep as it is long.
  void check_cycles() {
    enum class mark : std::uint8_t { fresh, open, done };
    std::vector<mark> marks(spec_.operators.size(), mark::fresh);
    std::vector<path_step> path;
    std::set<std::vector<std::size_t>> reported;
    // An operator being visited, and the next of its (output, subscriber) edges to take.
    struct visit {
      std::size_t op;
      std::size_t output = 0;
      std::size_t subscriber = 0;
    };
    std::vector<visit> stack;
    for (std::size_t root = 0; root < spec_.operators.size(); ++root) {
      if (marks[root] != mark::fresh) continue;
      marks[root] = mark::open;
      stack.push_back({root});
      while (!stack.empty()) {
        visit& v = stack.back();
        const std::vector<std::size_t>& outputs = outputs_[v.op];
        if (v.output == outputs.size()) {
          marks[v.op] = mark::done;
          stack.pop_back();
          if (!path.empty()) path.pop_back();  // the edge that led here
          continue;
        }
        const std::size_t t = outputs[v.output];
        if (v.subscriber == subscribers_[t].size()) {
          ++v.output;
          v.subscriber = 0;
          continue;
        }
        const std::size_t next = subscribers_[t][v.subscriber++].op;
        path.push_back({v.op, t});
        if (marks[next] == mark::fresh) {
          marks[next] = mark::open;
          stack.push_back({next});  // `v` is not used past here: the push may move it
          continue;
        }
        if (marks[next] == mark::open) report_cycle(path, next, reported);
        path.pop_back();
      }
    }
  }

  /// `path` ends with an edge back to `start`, which is open on the path: the cycle is start … back.
  void report_cycle(const std::vector<path_step>& path, std::size_t start,
                    std::set<std::vector<std::size_t>>& reported) {
    // Each back edge costs a walk of the path: a graph of many thousand operators and edges back could
    // make that quadratic, and a handful of cycles says what is wrong.
    constexpr std::size_t most_back_edges = 64;
    if (++back_edges_ > most_back_edges) return;
    auto first = std::find_if(path.begin(), path.end(), [&](const path_step& s) { return s.op == start; });
    std::vector<std::size_t> members;
    for (auto it = first; it != path.end(); ++it) members.push_back(it->op);
    // A long cycle is named by its ends: its first and last steps, and how many operators it has.
    constexpr std::size_t shown_steps = 5;
    const std::size_t steps = members.size();
    std::string text =
        steps > 2 * shown_steps ? "cycle of " + std::to_string(steps) + " operators: " : "cycle: ";
    for (std::size_t k = 0; k < steps; ++k) {
      if (steps > 2 * shown_steps && k == shown_steps) {
        text += "... -> ";
        k = steps - shown_steps;
      }
      const path_step& step = first[static_cast<std::ptrdiff_t>(k)];
      text += spec_.operators[step.op].name + " -> " + spec_.topics[step.topic].name + " -> ";
    }
    text += spec_.operators[start].name;
    std::sort(members.begin(), members.end());
    if (!reported.insert(members).second) return;
    // Point at the output through which the cycle leaves its first operator.
    const operator_spec& op = spec_.operators[start];
    const std::string& topic = spec_.topics[first->topic].name;
    const auto written = std::find(op.outputs.begin(), op.outputs.end(), topic) - op.outputs.begin();
    problem(at(op_path(op) + ".outputs[" + std::to_string(written) + "]"), text);
  }

  /// A problem an operator's parameters have with its input topic, at the parameter it names.
  void param_problem_at(const operator_spec& op, const param_problem& bad) {
    const std::string path = op_path(op);
    problem(bad.key.empty() ? at_field(path, "params") : at_field(path + ".params", bad.key),
            "operator '" + op.name + "': " + (bad.key.empty() ? "" : "parameter '" + bad.key + "': ") +
                bad.message);
  }

  /// Operators whose parameters must agree with their input topic (input_binder, operator.hpp).
  void check_inputs() {
    for (std::size_t o = 0; o < spec_.operators.size(); ++o) {
      const operator_entry* entry = entries_[o];
      if (!entry || !entry->info.input_check || !params_valid_[o] || inputs_[o].size() != 1) continue;
      const topic_spec& in = spec_.topics[inputs_[o][0]];
      if (!frame_size_problem(in.frame_bytes).empty()) continue;  // reported at the topic
      if (auto bad = entry->info.input_check(spec_.operators[o].params, topic_info_of(in)))
        param_problem_at(spec_.operators[o], *bad);
    }
  }

  /// A 1:1 map writes each input frame's result — all of it, or the share its parameters give it — into one
  /// output frame of the same offset.
  void check_maps() {
    for (std::size_t o = 0; o < spec_.operators.size(); ++o) {
      const operator_entry* entry = entries_[o];
      if (!entry || entry->info.role != operator_role::map) continue;
      if (inputs_[o].size() != 1 || outputs_[o].size() != 1) continue;
      const operator_spec& op = spec_.operators[o];
      const topic_spec& in = spec_.topics[inputs_[o][0]];
      const topic_spec& out = spec_.topics[outputs_[o][0]];
      const source_pos where = at(op_path(op) + ".outputs[0]");
      // A share set by parameters that are wrong is unknown: their problem is reported at them.
      const bool sizes_valid = frame_size_problem(in.frame_bytes).empty() &&
                               frame_size_problem(out.frame_bytes).empty() &&
                               (params_valid_[o] || !entry->info.output_share);
      const output_fraction share =
          params_valid_[o] ? entry->info.output_share_for(op.params) : output_fraction{};
      if (sizes_valid && share.whole() && out.frame_bytes < in.frame_bytes)
        problem(where, "operator '" + op.name + "': output topic '" + out.name + "' has smaller frames (" +
                           format_bytes(out.frame_bytes) + ") than input topic '" + in.name + "' (" +
                           format_bytes(in.frame_bytes) +
                           "); a 1:1 map's output frame must hold its input frame");
      if (sizes_valid && !share.whole() && out.frame_bytes < share.of(in.frame_bytes))
        problem(where, "operator '" + op.name + "': output topic '" + out.name + "' has frames of " +
                           format_bytes(out.frame_bytes) + ", but its output of a frame of input topic '" +
                           in.name + "' (" + format_bytes(in.frame_bytes) + ") is " +
                           std::to_string(share.numerator) + "/" + std::to_string(share.denominator) +
                           " of it: " + format_bytes(share.of(in.frame_bytes)));
      // (Columnar topics are checked whole: check_columnar_uses.)
      if (op.on == placement::gpu && out.element != in.element && in.layout == frame_layout::row &&
          out.layout == frame_layout::row)
        problem(where, "operator '" + op.name +
                           "': a GPU map reads and writes one element type, but input topic '" + in.name +
                           "' is " + std::string(name_of(in.element)) + " and output topic '" + out.name +
                           "' is " + std::string(name_of(out.element)));
    }
  }

  /// An operator that declares the element types it accepts (accepted_elements) reads only those: checked
  /// at its inputs, and at a source's outputs.
  void check_elements() {
    for (std::size_t t = 0; t < spec_.topics.size(); ++t) {
      const topic_spec& topic = spec_.topics[t];
      auto check = [&](const topic_use& use, const char* side, const std::string& item) {
        const operator_entry* entry = entries_[use.op];
        // A columnar reader's topic is checked whole (check_columnar_uses).
        if (!entry || entry->info.elements.contains(topic.element) || entry->info.reads_columnar) return;
        const operator_spec& op = spec_.operators[use.op];
        problem(at(item), "operator '" + op.name + "': class '" + op.class_name + "' accepts " +
                              names_of(entry->info.elements) + " topics, but " + side + " topic '" +
                              topic.name + "' is " + std::string(name_of(topic.element)));
      };
      for (const topic_use& use : subscribers_[t]) check(use, "input", input_item(use));
      for (const topic_use& use : publishers_[t]) {
        const operator_entry* entry = entries_[use.op];
        if (entry && entry->info.role == operator_role::source) check(use, "output", output_item(use));
      }
    }
  }

  /// Columnar topics and the operators that use them: a columnar reader (operator.hpp) reads one topic,
  /// a columnar one, and its parameters bind to that topic's columns (an unknown column or a constant of
  /// the wrong type is reported at the parameter); an operator on the GPU otherwise reads and writes row
  /// topics only (CPU operators publish columnar frames, and get their page map in topic_info).
  void check_columnar_uses() {
    for (std::size_t t = 0; t < spec_.topics.size(); ++t) {
      const topic_spec& topic = spec_.topics[t];
      const bool columnar = topic.layout == frame_layout::columnar;
      if (columnar && !columns_valid_[t]) continue;  // its columns' problems are reported
      for (const topic_use& use : subscribers_[t]) {
        const operator_entry* entry = entries_[use.op];
        if (!entry) continue;
        const operator_spec& op = spec_.operators[use.op];
        const std::string context = "operator '" + op.name + "': ";
        if (entry->info.reads_columnar && !columnar) {
          problem(at(input_item(use)), context + "class '" + op.class_name +
                                           "' reads columnar topics, but topic '" + topic.name +
                                           "' holds rows (layout: row)");
        } else if (!entry->info.reads_columnar && columnar && op.on == placement::gpu && entry->info.gpu) {
          problem(at(input_item(use)), context + "class '" + op.class_name +
                                           "' reads row frames, but topic '" + topic.name +
                                           "' is columnar (a columnar reader such as query reads it)");
        } else if (entry->info.reads_columnar && columnar && params_valid_[use.op] &&
                   inputs_[use.op].size() == 1 && entry->info.bind_check) {
          if (auto bad = entry->info.bind_check(op.params, topic_info_of(topic))) param_problem_at(op, *bad);
        }
      }
      if (!columnar) continue;
      for (const topic_use& use : publishers_[t]) {
        const operator_spec& op = spec_.operators[use.op];
        if (entries_[use.op] && op.on == placement::gpu)
          problem(at(output_item(use)), "operator '" + op.name +
                                            "' runs on the GPU, and GPU operators do not "
                                            "publish columnar frames: topic '" +
                                            topic.name + "' takes a CPU publisher (table_source)");
      }
    }
  }

  /// Verify sinks replay their input from the source through every operator on the way: that needs one
  /// publisher per topic upstream and operators whose output is a function of (offset, input).
  void check_references_for_verification() {
    for (std::size_t o = 0; o < spec_.operators.size(); ++o) {
      const operator_entry* entry = entries_[o];
      if (!entry || !entry->info.needs_reference || inputs_[o].size() != 1) continue;
      const operator_spec& sink = spec_.operators[o];
      const source_pos where = at(op_path(sink) + ".inputs[0]");
      const std::string context =
          "operator '" + sink.name + "': a " + sink.class_name + " replays its input from the source, so ";
      std::size_t topic = inputs_[o][0];
      std::set<std::size_t> visited;
      while (true) {
        const auto& pubs = publishers_[topic];
        if (pubs.empty()) break;  // reported as a topic without publisher
        if (pubs.size() > 1) {
          std::vector<std::string> names;
          for (const auto& p : pubs) names.push_back(spec_.operators[p.op].name);
          problem(where, context + "every topic upstream needs exactly one publisher, but topic '" +
                             spec_.topics[topic].name + "' has " + std::to_string(pubs.size()) + " (" +
                             quoted_list(names) + ")");
          break;
        }
        const std::size_t p = pubs[0].op;
        const operator_entry* up = entries_[p];
        if (!up || !visited.insert(p).second) break;  // unknown class or a cycle: reported elsewhere
        if (!up->info.replayable) {
          problem(where, context + "every operator upstream must be replayable, but '" +
                             spec_.operators[p].name + "' (class '" + spec_.operators[p].class_name +
                             "') is not");
          break;
        }
        if (!spec_.operators[p].shared.empty()) {
          problem(where, context + "every operator upstream must be replayable, but '" +
                             spec_.operators[p].name +
                             "' reads shared objects (a replay later may not find its frames' versions)");
          break;
        }
        if (up->info.role != operator_role::map || inputs_[p].size() != 1) break;  // a source ends the chain
        topic = inputs_[p][0];
      }
    }
  }

  /// What no machine that runs this topology can hold: a topic's frames (frame_size x capacity), a shared
  /// object's versions or the file cache past this machine's memory, or past 64 bits. Refused here, with
  /// the setting that asks for it, rather than when the run allocates (or, with a product that wraps around
  /// 64 bits, writes past what it allocated).
  void check_memory() {
    const std::uint64_t memory = machine_memory_bytes();
    if (memory == 0) return;  // the machine does not say
    const std::string machine = "this machine's memory (" + format_bytes(memory) + ")";
    auto product = [](std::uint64_t a, std::uint64_t b) -> std::optional<std::uint64_t> {
      std::uint64_t out = 0;
      if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
      return out;
    };
    for (const topic_spec& t : spec_.topics) {
      if (!frame_size_problem(t.frame_bytes).empty() || t.capacity == 0) continue;  // reported
      const std::string path = topic_path(t);
      const std::string context = "topic '" + t.name + "': ";
      if (t.frame_bytes > memory) {
        problem(at_field(path, "frame_size"),
                context + "a frame of " + format_bytes(t.frame_bytes) + " is more than " + machine);
        continue;
      }
      const std::optional<std::uint64_t> heap = product(t.frame_bytes, t.capacity);
      if (heap && *heap <= memory) continue;
      const char* setting = spec_.positions.count(path + ".capacity")        ? "capacity"
                            : spec_.positions.count(path + ".device_memory") ? "device_memory"
                                                                             : "frame_size";
      problem(at_field(path, setting), context + "its " + std::to_string(t.capacity) + " frames of " +
                                           format_bytes(t.frame_bytes) + " (capacity x frame_size) take " +
                                           (heap ? format_bytes(*heap) + ", more than " + machine
                                                 : std::string("more than 2^64 bytes")));
    }
    for (const shared_object_spec& o : spec_.objects) {
      if (o.bytes == 0 || o.versions == 0) continue;
      const std::optional<std::uint64_t> all = product(o.bytes, o.versions);
      if (all && *all <= memory) continue;
      const std::string path = "shared_objects." + o.name;
      const char* setting = spec_.positions.count(path + ".count") ? "count"
                            : spec_.positions.count(path + ".init") && !spec_.positions.count(path + ".bytes")
                                ? "init"
                                : "bytes";
      problem(at_field(path, setting), "shared object '" + o.name + "': its " + std::to_string(o.versions) +
                                           " versions of " + format_bytes(o.bytes) + " take " +
                                           (all ? format_bytes(*all) + ", more than " + machine
                                                : std::string("more than 2^64 bytes")));
    }
    if (spec_.runtime.file_cache && spec_.runtime.file_cache->size > memory)
      problem(at("runtime.file_cache.size"), "runtime.file_cache: size " +
                                                 format_bytes(spec_.runtime.file_cache->size) +
                                                 " is more than " + machine);
  }

  topology_spec& spec_;
  const operator_registry& registry_;
  std::vector<diagnostic> problems_;
  std::vector<const operator_entry*> entries_;       // per operator; null when the class is unknown
  std::vector<bool> params_valid_;                   // per operator: its parameters passed their checks
  std::vector<bool> columns_valid_;                  // per topic: its columnar fields passed theirs
  std::vector<bool> rank_known_;                     // per operator: its rank is a valid number (resolved)
  std::size_t back_edges_ = 0;                       // edges check_cycles found closing a cycle
  std::vector<std::vector<topic_use>> publishers_;   // per topic
  std::vector<std::vector<topic_use>> subscribers_;  // per topic
  std::vector<std::vector<std::size_t>> inputs_;     // per operator: resolved topic indices
  std::vector<std::vector<std::size_t>> outputs_;    // per operator
};

}  // namespace

std::uint64_t machine_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_bytes <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes);
}

std::string count_problem(std::string_view field, std::int64_t value, count_limits limits) {
  if (value >= limits.min && value <= limits.max) return {};
  return std::string(field) + " must be " + range_words(limits, value < limits.min) + ", not " +
         std::to_string(value);
}

std::string count_problem_text(std::string_view field, std::string_view value_text, count_limits limits) {
  const bool below = !value_text.empty() && value_text.front() == '-';
  return std::string(field) + " must be " + range_words(limits, below) + ", not " + std::string(value_text);
}

std::string frame_size_problem(std::uint64_t bytes) {
  // Frames sit back to back in the topic's page-aligned heap: whole pages keep every frame aligned.
  static_assert(frame_alignment_bytes == 4 * KiB, "the message below names the alignment");
  if (bytes != 0 && bytes % frame_alignment_bytes == 0) return {};
  return "frame_size must be a positive multiple of 4 KiB (4096 bytes), not " + std::to_string(bytes) +
         " bytes";
}

bool is_valid_name(std::string_view name) {
  if (name.empty()) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!letter(name.front())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || digit(c) || c == '-'; });
}

std::vector<diagnostic> topology_problems(topology_spec& spec, const operator_registry& registry) {
  return validator(spec, registry).run();
}

void sort_problems(std::vector<diagnostic>& problems, const std::vector<std::string>& file_order) {
  std::vector<std::string> files = file_order;
  for (const auto& p : problems)
    if (std::find(files.begin(), files.end(), p.pos.file) == files.end()) files.push_back(p.pos.file);
  auto rank = [&](const diagnostic& d) {
    const auto file =
        static_cast<std::size_t>(std::find(files.begin(), files.end(), d.pos.file) - files.begin());
    return std::tuple(file, d.pos.line, d.pos.column);
  };
  std::stable_sort(problems.begin(), problems.end(),
                   [&](const diagnostic& a, const diagnostic& b) { return rank(a) < rank(b); });
}

void validate_topology(topology_spec& spec, const operator_registry& registry) {
  std::vector<diagnostic> problems = topology_problems(spec, registry);
  if (problems.empty()) return;
  sort_problems(problems, {spec.source_name});
  throw config_error(std::move(problems));
}

}  // namespace xf
