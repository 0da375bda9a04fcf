// Parameter normalization against an operator's declared schema.
#include "framework/model/operator_schema.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "framework/core/units.hpp"
#include "framework/model/suggest.hpp"
#include "framework/model/yaml_fields.hpp"

namespace xf {

const param_decl* operator_info::find_param(std::string_view name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

std::string to_string(const param_value& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<V, double>) {
          char buffer[64];
          std::snprintf(buffer, sizeof buffer, "%.17g", v);
          return buffer;
        } else if constexpr (std::is_same_v<V, dt::datatype>) {
          return dt::describe(v);
        } else {
          return v;
        }
      },
      value);
}

dt::datatype datatype_value(const std::string& param, const param_value& value) {
  if (const auto* type = std::get_if<dt::datatype>(&value)) return *type;
  if (const auto* text = std::get_if<std::string>(&value))
    if (const std::optional<dt::primitive> p = dt::primitive_from_name(*text)) return *p;
  throw std::invalid_argument("parameter '" + param + "' must hold a datatype, not '" + to_string(value) +
                              "' (a topology's datatype names are resolved by validate_topology)");
}

namespace {

/// Integers as YAML 1.2's core schema writes them (yaml_fields.hpp's reader), or nullopt.
std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  if (::xf::parse_integer(text, value) != integer_parse::ok) return std::nullopt;
  return value;
}

std::optional<double> parse_real(const std::string& text) {
  if (text.empty()) return std::nullopt;
  // YAML 1.2 core schema spellings of the special values.
  if (text == ".inf" || text == ".Inf" || text == "+.inf") return INFINITY;
  if (text == "-.inf" || text == "-.Inf") return -INFINITY;
  if (text == ".nan" || text == ".NaN") return NAN;
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (*first == '+') ++first;
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || end != last || first == last) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(const std::string& text) {
  if (text == "true" || text == "True" || text == "TRUE" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "False" || text == "FALSE" || text == "no" || text == "off") return false;
  return std::nullopt;
}

std::string type_problem(const param_decl& decl, const param_value& v) {
  return "parameter '" + decl.name + "' must be " +
         (decl.kind == param_kind::bytes      ? std::string("a byte count (e.g. 4096, 64KiB, 1GiB)")
          : decl.kind == param_kind::integer  ? std::string("an integer")
          : decl.kind == param_kind::real     ? std::string("a number")
          : decl.kind == param_kind::boolean  ? std::string("true or false")
          : decl.kind == param_kind::datatype ? std::string("a datatype")
                                              : std::string("a string")) +
         ", not " + (std::holds_alternative<dt::datatype>(v) ? "a datatype" : "'" + to_string(v) + "'");
}

std::string not_finite(const param_decl& decl, const std::string& shown) {
  return "parameter '" + decl.name + "' must be a finite number, not " + shown;
}

/// A datatype parameter's value: a datatype, or the name of a primitive or of one of `datatypes`.
std::optional<std::string> normalize_datatype(const param_decl& decl, param_value& v,
                                              const std::vector<datatype_spec>& datatypes) {
  if (const std::string* name = std::get_if<std::string>(&v)) {
    if (const std::optional<dt::primitive> p = dt::primitive_from_name(*name)) {
      v = dt::datatype(*p);
    } else if (const auto named = std::find_if(datatypes.begin(), datatypes.end(),
                                               [&](const datatype_spec& d) { return d.name == *name; });
               named != datatypes.end()) {
      v = named->type;  // the same node: to_yaml writes the name back
    } else {
      std::vector<std::string> names;
      for (const datatype_spec& d : datatypes) names.push_back(d.name);
      for (int i = 0; i < dt::primitive_count; ++i)
        names.emplace_back(dt::name_of(static_cast<dt::primitive>(i)));
      std::string hint = did_you_mean(*name, names);
      if (hint.empty()) hint = " (declare it under datatypes:, or name a primitive)";
      return "parameter '" + decl.name + "': no datatype is named '" + *name + "'" + hint;
    }
  }
  const dt::datatype* type = std::get_if<dt::datatype>(&v);
  if (type == nullptr) return type_problem(decl, v);
  if (decl.check_type)
    if (std::string problem = decl.check_type(*type); !problem.empty())
      return "parameter '" + decl.name + "': " + problem;
  return std::nullopt;
}

/// Converts `v` to the declared kind; returns a message on failure.
std::optional<std::string> normalize_one(const param_decl& decl, param_value& v,
                                         const std::vector<datatype_spec>& datatypes) {
  const std::string* text = std::get_if<std::string>(&v);
  switch (decl.kind) {
    case param_kind::datatype:
      return normalize_datatype(decl, v, datatypes);
    case param_kind::boolean:
      if (text) {
        if (auto b = parse_bool(*text))
          v = *b;
        else
          return type_problem(decl, v);
      } else if (!std::holds_alternative<bool>(v)) {
        return type_problem(decl, v);
      }
      return std::nullopt;
    case param_kind::integer:
      if (text) {
        if (auto i = parse_integer(*text))
          v = *i;
        else
          return type_problem(decl, v);
      } else if (!std::holds_alternative<std::int64_t>(v)) {
        return type_problem(decl, v);
      }
      break;
    case param_kind::bytes:
      if (text) {
        auto b = parse_bytes(*text);
        if (!b) return "parameter '" + decl.name + "': " + bytes_syntax_problem(*text);
        if (*b > static_cast<std::uint64_t>(INT64_MAX)) return "parameter '" + decl.name + "' is too large";
        v = static_cast<std::int64_t>(*b);
      } else if (!std::holds_alternative<std::int64_t>(v)) {
        return type_problem(decl, v);
      }
      break;
    case param_kind::real:
      if (text) {
        const std::optional<double> r = parse_real(*text);
        if (!r) return type_problem(decl, v);
        if (!std::isfinite(*r)) return not_finite(decl, "'" + *text + "'");
        v = *r;
      } else if (auto* i = std::get_if<std::int64_t>(&v)) {
        v = static_cast<double>(*i);
      } else if (!std::holds_alternative<double>(v)) {
        return type_problem(decl, v);
      }
      break;
    case param_kind::text:
      if (!text) return type_problem(decl, v);
      if (!decl.choices.empty()) {
        for (const auto& c : decl.choices)
          if (c == *text) return std::nullopt;
        std::string list;
        for (const auto& c : decl.choices) list += (list.empty() ? "" : ", ") + c;
        return "parameter '" + decl.name + "' must be one of " + list + ", not '" + *text + "'" +
               did_you_mean(*text, decl.choices);
      }
      if (decl.check) {
        std::string problem = decl.check(*text);
        if (!problem.empty()) return problem;
      }
      return std::nullopt;
  }
  const double number = std::holds_alternative<double>(v) ? std::get<double>(v)
                                                          : static_cast<double>(std::get<std::int64_t>(v));
  // No parameter means anything by NaN or infinity, and neither compares with a range.
  if (!std::isfinite(number)) return not_finite(decl, to_string(v));
  if (number < decl.min || number > decl.max) {
    std::string range;
    // An integer's bound as an integer; a value past a bound that is no limit (limits_param) is past the
    // largest or smallest int64.
    const bool integer = decl.kind != param_kind::real;
    const auto bound = [&](double b) {
      if (!integer) return to_string(param_value{b});
      if (!limits_param(decl, b))
        return to_string(param_value{b > 0 ? std::numeric_limits<std::int64_t>::max()
                                           : std::numeric_limits<std::int64_t>::min()});
      return to_string(param_value{static_cast<std::int64_t>(b)});
    };
    if (limits_param(decl, decl.min) && limits_param(decl, decl.max))
      range = "between " + bound(decl.min) + " and " + bound(decl.max);
    else if (number < decl.min)
      range = "at least " + bound(decl.min);
    else
      range = "at most " + bound(decl.max);
    return "parameter '" + decl.name + "' must be " + range + ", not " + to_string(v);
  }
  return std::nullopt;
}

}  // namespace

bool limits_param(const param_decl& p, double bound) {
  constexpr double two_to_63 = 9223372036854775808.0;
  return std::isfinite(bound) && (p.kind == param_kind::real || std::fabs(bound) < two_to_63);
}

std::vector<double> parse_real_list(const std::string& text, std::string& problem) {
  std::vector<double> values;
  std::size_t pos = 0;
  const auto separator = [](char c) {
    return c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c));
  };
  while (true) {
    while (pos < text.size() && separator(text[pos])) ++pos;
    if (pos == text.size()) break;
    std::size_t end = pos;
    while (end < text.size() && !separator(text[end])) ++end;
    const std::optional<double> v = parse_real(text.substr(pos, end - pos));
    if (!v || !std::isfinite(*v)) {
      problem = "'" + text.substr(pos, end - pos) + "' at character " + std::to_string(pos + 1) +
                " is not a finite number";
      return {};
    }
    values.push_back(*v);
    pos = end;
  }
  return values;
}

std::vector<param_problem> normalize_params(const operator_info& info,
                                            std::map<std::string, param_value>& params,
                                            const std::vector<datatype_spec>& datatypes) {
  std::vector<param_problem> problems;
  std::vector<std::string> known;
  for (const auto& p : info.params) known.push_back(p.name);
  for (auto& [key, value] : params) {
    const param_decl* decl = info.find_param(key);
    if (!decl) {
      std::string message = "unknown parameter '" + key + "' for operator class '" + info.class_name + "'";
      std::string hint = did_you_mean(key, known);
      if (!hint.empty())
        message += hint;
      else if (known.empty())
        message += " (it takes no parameters)";
      problems.push_back({key, message});
      continue;
    }
    if (auto problem = normalize_one(*decl, value, datatypes)) problems.push_back({key, *problem});
  }
  for (const auto& decl : info.params)
    if (!decl.default_value && !decl.optional && !params.contains(decl.name))
      problems.push_back({"", "operator class '" + info.class_name + "' needs parameter '" + decl.name +
                                  "' (" + decl.description + ")"});
  if (problems.empty() && info.check_values)
    if (std::string problem = info.check_values(params); !problem.empty()) problems.push_back({"", problem});
  return problems;
}

}  // namespace xf
