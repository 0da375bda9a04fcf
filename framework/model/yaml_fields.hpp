// The YAML front end's field readers: a value of each kind read from a yaml_entry, or a problem at its
// position ("file:line:column: <context><field> must be …"), with suggestions. The spec reader
// (yaml_loader.cpp) is built on them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/units.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/suggest.hpp"
#include "framework/model/yaml_loader.hpp"

namespace xf {

enum class integer_parse : std::uint8_t { ok, not_integer, too_large };

/// Integers as YAML 1.2's core schema writes them: optional sign, decimal, 0x hexadecimal or 0o octal.
integer_parse parse_integer(const std::string& text, std::int64_t& value);

/// "a, b or c" (`last_separator` " or ").
std::string join_choices(const std::vector<std::string>& names, const char* last_separator);

/// Where `first` was, as a message names it from `here`: "line:column" in the same file, else in full.
std::string first_at(const source_pos& first, const source_pos& here);

/// The accepted entries of one map: first occurrences of allowed keys, by key.
using entry_table = std::map<std::string, const yaml_entry*, std::less<>>;

/// Reads fields, records where each was written, and collects the problems.
class yaml_field_reader {
 protected:
  explicit yaml_field_reader(source_map& positions) : positions_(positions) {}

  void problem(const source_pos& pos, std::string message) { problems_.push_back({pos, std::move(message)}); }

  void record(const std::string& path, const yaml_entry& entry) {
    positions_[path + "#key"] = entry.key_pos;
    positions_[path] = entry.value.pos;
  }

  /// Reports unknown keys (when `allowed` is non-empty) and duplicates; returns the rest.
  /// `where` ends "unknown key 'x' …" ("in topic 'in'"); `noun` names a duplicate ("key", "topic").
  entry_table accepted(const yaml_node& map, const std::vector<std::string>& allowed,
                       const std::string& where, const std::string& noun) {
    entry_table table;
    for (const auto& entry : map.entries) {
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), entry.key) == allowed.end()) {
        std::string hint = did_you_mean(entry.key, allowed);
        if (hint.empty()) hint = " (expected " + join_choices(allowed, " or ") + ")";
        problem(entry.key_pos, "unknown key '" + entry.key + "' " + where + hint);
        continue;
      }
      if (auto it = table.find(entry.key); it != table.end()) {
        problem(entry.key_pos, "duplicate " + noun + " '" + entry.key + "' (first at " +
                                   first_at(it->second->key_pos, entry.key_pos) + ")");
        continue;
      }
      table.emplace(entry.key, &entry);
    }
    return table;
  }

  /// The scalar text of an entry, or a problem "<context>: <field> must be <expected>, not a map".
  /// `null_is_empty`: an empty value reads as "".
  std::optional<std::string> scalar(const yaml_entry& entry, const std::string& context,
                                    const std::string& field, const std::string& expected,
                                    bool null_is_empty = false) {
    if (entry.value.type == yaml_node::kind::scalar) return entry.value.scalar;
    if (entry.value.type == yaml_node::kind::null && null_is_empty) return std::string();
    problem(entry.value.pos,
            context + field + " must be " + expected + ", not " + describe_node(entry.value));
    return std::nullopt;
  }

  std::optional<std::uint32_t> count(const yaml_entry& entry, const std::string& context,
                                     const std::string& field, count_limits limits) {
    auto text = scalar(entry, context, field, "an integer");
    if (!text) return std::nullopt;
    std::int64_t value = 0;
    const integer_parse parsed = parse_integer(*text, value);
    if (parsed == integer_parse::not_integer) {
      problem(entry.value.pos, context + field + " must be an integer, not '" + *text + "'");
      return std::nullopt;
    }
    return within(entry, *text, parsed, value, context, field, limits);
  }

  /// A count, or a name that validation looks up (`rank: 1` or `rank: writer`). Names cannot start with a
  /// digit (is_valid_name), so every value reads one way. `expected` says what the value may be.
  struct count_or_name_value {
    std::uint32_t count = 0;
    std::string name;  ///< empty when a count was given
  };
  std::optional<count_or_name_value> count_or_name(const yaml_entry& entry, const std::string& context,
                                                   const std::string& field, count_limits limits,
                                                   const std::string& expected) {
    auto text = scalar(entry, context, field, expected);
    if (!text) return std::nullopt;
    std::int64_t value = 0;
    const integer_parse parsed = parse_integer(*text, value);
    if (parsed == integer_parse::not_integer) {
      if (is_valid_name(*text)) return count_or_name_value{0, *text};
      problem(entry.value.pos, context + field + " must be " + expected + ", not '" + *text + "'");
      return std::nullopt;
    }
    if (auto n = within(entry, *text, parsed, value, context, field, limits))
      return count_or_name_value{*n, {}};
    return std::nullopt;
  }

  /// The index of the entry's value among `names`, or a problem with a suggestion.
  /// A byte count with a unit ("64KiB"); `example` shows one in the message when the value is not a scalar.
  std::optional<std::uint64_t> byte_count(const yaml_entry& entry, const std::string& context,
                                          const std::string& field, const std::string& example) {
    auto text = scalar(entry, context, field, "a byte count (e.g. " + example + ")");
    if (!text) return std::nullopt;
    if (auto bytes = parse_bytes(*text)) return bytes;
    problem(entry.value.pos, context + field + ": " + bytes_syntax_problem(*text));
    return std::nullopt;
  }

  std::optional<std::size_t> choice(const yaml_entry& entry, const std::string& context,
                                    const std::string& field, const std::vector<std::string>& names) {
    const std::string expected = "one of " + join_choices(names, ", ");
    auto text = scalar(entry, context, field, expected);
    if (!text) return std::nullopt;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == *text) return i;
    problem(entry.value.pos,
            context + field + " must be " + expected + ", not '" + *text + "'" + did_you_mean(*text, names));
    return std::nullopt;
  }

  source_map& positions_;
  std::vector<diagnostic> problems_;

 private:
  /// An integer read from `text` as `parsed` gave it, checked against `limits`.
  std::optional<std::uint32_t> within(const yaml_entry& entry, const std::string& text, integer_parse parsed,
                                      std::int64_t value, const std::string& context,
                                      const std::string& field, count_limits limits) {
    if (parsed == integer_parse::too_large) {
      problem(entry.value.pos, context + count_problem_text(field, text, limits));
      return std::nullopt;
    }
    if (std::string why = count_problem(field, value, limits); !why.empty()) {
      problem(entry.value.pos, context + why);
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(value);
  }
};

}  // namespace xf
