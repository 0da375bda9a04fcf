// An operator's declared contract: role, description and parameters (name, description, type, default,
// range), declared once in the operator's `describe` and used for YAML validation, --list-operators and
// filling the operator's trivially copyable `params` struct.
//
//   struct scale_op {
//     struct params { double factor = 2.0; };
//     static void describe(xf::operator_schema<params>& s) {
//       s.describe("multiplies every element by a constant");
//       s.param(&params::factor, "factor", "multiplier applied to every element", 2.0);
//     }
//     ...
//   };
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "framework/model/operator.hpp"
#include "framework/model/topology_spec.hpp"

namespace xf {

enum class operator_role : std::uint8_t { source, map, sink };
constexpr std::string_view name_of(operator_role r) {
  return r == operator_role::source ? "source" : r == operator_role::map ? "map" : "sink";
}

enum class param_kind : std::uint8_t { boolean, integer, bytes, real, text, datatype };
constexpr std::string_view name_of(param_kind k) {
  switch (k) {
    case param_kind::boolean:
      return "bool";
    case param_kind::integer:
      return "integer";
    case param_kind::bytes:
      return "bytes";
    case param_kind::real:
      return "real";
    case param_kind::text:
      return "string";
    case param_kind::datatype:
      return "datatype";
  }
  return "?";
}

struct param_decl {
  std::string name;
  std::string description;
  param_kind kind = param_kind::text;
  std::optional<param_value> default_value;  ///< nullopt: required
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  ///< text parameters: the allowed values (empty: any)
  /// Text parameters: what is wrong with a value ("" when nothing), checked where the topology is loaded,
  /// so the error carries file:line:column (a field list's syntax, a list of numbers).
  std::function<std::string(const std::string&)> check;
  /// Datatype parameters: what is wrong with a type ("" when nothing), checked where the topology is
  /// loaded (a type too large for the operator's parameters, one without data).
  std::function<std::string(const dt::datatype&)> check_type;
  /// No default, yet the topology may leave it out (the operator then works without it).
  bool optional = false;
  /// Text parameters: a file the operator writes (its output); validation refuses two operators writing
  /// one file. Empty text: no file.
  bool writes_file = false;
};

/// Parses a list of reals separated by commas, semicolons or spaces ("0 0 0; 10 10 10"): the values, or
/// the problem (the first character that is not part of a number, the 1-based position) in `problem`.
std::vector<double> parse_real_list(const std::string& text, std::string& problem);

/// A shared object an operator takes (operator_schema::shared): the topology binds the slot to one of its
/// shared objects (operator_spec::shared). CPU operators reach it through operator_setup::objects, GPU
/// operators through item_context::object, in the order the slots are declared.
struct object_slot_decl {
  std::string name;
  std::string description;
  object_access access = object_access::read;
  /// The element types the object may hold (all unless the operator says).
  element_set elements = element_set::all();
  /// The topology may leave it unbound (the operator then works without: a parameter stands in for it).
  bool optional = false;
  /// What is wrong with binding an object of `bytes` to it given the operator's (normalized) parameters
  /// ("" when nothing); validation reports it at the binding. Empty: anything goes.
  std::function<std::string(const std::map<std::string, param_value>&, std::uint64_t bytes)> check;
};

struct operator_info {
  std::string class_name;
  std::string description;
  operator_role role = operator_role::map;
  bool gpu = false;  ///< has a __host__ __device__ compute: may be placed on the GPU
  /// The element types it accepts on its topics (accepted_elements, operator.hpp); validation refuses others.
  element_set elements = element_set::all();
  bool replayable = true;  ///< output is a pure function of (offset, input): a verify sink can replay it
  bool needs_reference = false;  ///< needs a replayable upstream chain (verify sinks)
  /// Sinks: a checkpointed run may restart it from a committed offset (xeflow-run --checkpoint and
  /// --resume) — what it does with a frame is idempotent and keeps no state across frames that a restart
  /// would lose: a replayed frame rewrites the same bytes at the same place (file_sink), is only checked
  /// (verify_sink) or only counted (null_sink). Sources and maps are functions of the offset and their
  /// input, so every one may be restarted; a sink that does not say so (an accumulator: word_count, the
  /// GPU sinks, a sum) is refused.
  bool resumable = false;
  /// GPU operators: computes over the whole frame (its layout spans it: field-by-field records), so the
  /// GPU executor never splits its frames into parts run by several blocks.
  bool whole_frames = false;
  /// GPU operators over whole frames that can split one frame's work: the kernel may give a frame to
  /// several items at once, each seeing the whole frame and doing its share (item_context::part of
  /// parts), so that every block has work while the topic holds fewer frames than the kernel has blocks.
  bool shares_frames = false;
  /// Reads files through the file cache (runtime.file_cache applies to it).
  bool reads_files = false;
  /// GPU maps: the share of the input frame's bytes an output frame gets for the given (normalized)
  /// parameters (operator.hpp: output_share); empty: all of them.
  std::function<output_fraction(const std::map<std::string, param_value>&)> output_share;
  output_fraction output_share_for(const std::map<std::string, param_value>& values) const {
    return output_share ? output_share(values) : output_fraction{};
  }
  std::vector<param_decl> params;
  /// The shared objects it takes, in declaration order (every slot but an optional one must be bound).
  std::vector<object_slot_decl> objects;
  const object_slot_decl* find_object(std::string_view name) const {
    for (const object_slot_decl& o : objects)
      if (o.name == name) return &o;
    return nullptr;
  }
  /// A check of the parameters together (a field list against the record size), run by normalize_params
  /// once each parameter is valid on its own: the problem, "" when none. Empty: nothing to check.
  std::function<std::string(const std::map<std::string, param_value>&)> check_values;
  /// Reads columnar frames (columnar_reader, operator.hpp): bind_check compiles the parameters against
  /// the input topic's columns and returns the problem, for validation to place at the parameter.
  bool reads_columnar = false;
  std::function<std::optional<param_problem>(const std::map<std::string, param_value>&, const topic_info&)>
      bind_check;
  /// Operators whose parameters must agree with their one input topic (input_binder, operator.hpp).
  std::function<std::optional<param_problem>(const std::map<std::string, param_value>&, const topic_info&)>
      input_check;
  /// GPU operators that declare `static const char* failure_reason(std::uint32_t code)`: what a code they
  /// fail frames with means, for the run's error ("" for an unknown code). Empty: they do not say.
  std::function<std::string(std::uint32_t)> failure_reason;

  /// failure_reason(code), or "" when the operator does not say.
  std::string failure_meaning(std::uint32_t code) const { return failure_reason ? failure_reason(code) : ""; }

  const param_decl* find_param(std::string_view name) const;
};

/// Marks a parameter without default: the topology must set it.
struct required_t {};
inline constexpr required_t required{};

/// Converts each value in `params` to its declared kind in place (YAML scalars arrive as text, builder
/// values typed): "64KiB" → 65536 for bytes, "2" → 2.0 for reals, "true" → true, and a datatype
/// parameter's name — a primitive's, or one of the topology's `datatypes` — to that type. Reports unknown
/// keys (with a suggestion), wrong types, values out of range or not among the choices, names no datatype
/// has, and required parameters that are missing. Defaults are not inserted: the spec keeps what was
/// written.
std::vector<param_problem> normalize_params(const operator_info& info,
                                            std::map<std::string, param_value>& params,
                                            const std::vector<datatype_spec>& datatypes = {});

/// Whether `bound` (`p`'s min or max) limits the parameter: it is finite and, for an integer parameter,
/// inside int64's range. An int64 parameter's range ends at 2^63 as a double by default: no limit, and
/// one past the largest int64, so no int64 can hold it.
bool limits_param(const param_decl& p, double bound);

/// A value as YAML would write it (for messages, --list-operators and JSON); a datatype as its constructor
/// calls (dt::describe).
std::string to_string(const param_value& value);

/// The datatype a datatype parameter's value holds once normalized (or a primitive's name, as a caller
/// that skipped normalization may give it); throws std::invalid_argument naming `param` for anything else.
dt::datatype datatype_value(const std::string& param, const param_value& value);

/// Declares an operator's parameters, bound to the members of its `Params` struct.
template <class Params>
class operator_schema {
 public:
  explicit operator_schema(operator_info& info) : info_(&info) {}

  operator_schema& describe(std::string text) {
    info_->description = std::move(text);
    return *this;
  }
  /// The operator's output depends on more than (offset, input): verify sinks cannot replay through it.
  operator_schema& not_replayable() {
    info_->replayable = false;
    return *this;
  }
  /// See operator_info::whole_frames.
  operator_schema& whole_frames() {
    info_->whole_frames = true;
    return *this;
  }
  /// See operator_info::shares_frames (implies whole_frames).
  operator_schema& shares_frames() {
    info_->whole_frames = true;
    info_->shares_frames = true;
    return *this;
  }
  /// See operator_info::reads_files.
  operator_schema& reads_files() {
    info_->reads_files = true;
    return *this;
  }
  /// A shared object the operator takes: slot `name`, read (CPU or GPU operators: the version their frame's
  /// offset asks for) or write (CPU operators: they publish its versions), holding one of `elements`.
  operator_schema& shared(std::string name, object_access access, std::string description,
                          element_set elements = element_set::all()) {
    info_->objects.push_back({std::move(name), std::move(description), access, elements, false, {}});
    return *this;
  }
  /// Marks the slot declared last optional (object_slot_decl::optional).
  operator_schema& optional() {
    info_->objects.back().optional = true;
    return *this;
  }
  /// A check of the slot declared last against the object bound to it (object_slot_decl::check):
  /// `fn(params, object bytes)` returns the problem, "" when none. The registry wires it up.
  operator_schema& check_object(std::function<std::string(const Params&, std::uint64_t)> fn) {
    object_checks_.emplace_back(info_->objects.size() - 1, std::move(fn));
    return *this;
  }
  /// The slots check_object declared checks for.
  std::vector<std::size_t> checked_objects() const {
    std::vector<std::size_t> slots;
    for (const auto& c : object_checks_) slots.push_back(c.first);
    return slots;
  }
  /// What the check of slot `slot` says of an object of `bytes` bound under parameters `values`.
  std::string object_problem(std::size_t slot, const std::map<std::string, param_value>& values,
                             std::uint64_t bytes) const {
    for (const auto& [checked, fn] : object_checks_)
      if (checked == slot) return fn(make(values), bytes);
    return {};
  }
  operator_schema& needs_reference() {
    info_->needs_reference = true;
    return *this;
  }
  /// See operator_info::resumable.
  operator_schema& resumable() {
    info_->resumable = true;
    return *this;
  }
  /// Marks the parameter declared last as a file the operator writes (param_decl::writes_file).
  operator_schema& writes_file() {
    info_->params.back().writes_file = true;
    return *this;
  }

  operator_schema& param(bool Params::*member, std::string name, std::string description, bool fallback) {
    return add(member, std::move(name), std::move(description), param_kind::boolean, fallback);
  }
  operator_schema& param(std::int64_t Params::*member, std::string name, std::string description,
                         std::int64_t fallback, double min = -std::numeric_limits<double>::infinity(),
                         double max = std::numeric_limits<double>::infinity()) {
    return add(member, std::move(name), std::move(description), param_kind::integer, fallback, min, max);
  }
  operator_schema& param(std::uint32_t Params::*member, std::string name, std::string description,
                         std::uint32_t fallback, double min = 0, double max = 4294967295.0) {
    return add(member, std::move(name), std::move(description), param_kind::integer, std::int64_t{fallback},
               min, max);
  }
  operator_schema& param(double Params::*member, std::string name, std::string description, double fallback,
                         double min = -std::numeric_limits<double>::infinity(),
                         double max = std::numeric_limits<double>::infinity()) {
    return add(member, std::move(name), std::move(description), param_kind::real, fallback, min, max);
  }
  operator_schema& param(float Params::*member, std::string name, std::string description, float fallback,
                         double min = -std::numeric_limits<double>::infinity(),
                         double max = std::numeric_limits<double>::infinity()) {
    return add(member, std::move(name), std::move(description), param_kind::real,
               static_cast<double>(fallback), min, max);
  }
  operator_schema& param(std::string Params::*member, std::string name, std::string description,
                         std::string fallback, std::vector<std::string> choices = {}) {
    add(member, std::move(name), std::move(description), param_kind::text, std::move(fallback));
    info_->params.back().choices = std::move(choices);
    return *this;
  }
  operator_schema& param(std::string Params::*member, std::string name, std::string description, required_t) {
    add(member, std::move(name), std::move(description), param_kind::text, no_default{});
    return *this;
  }
  /// A byte count ("64KiB" in YAML).
  operator_schema& bytes(std::uint64_t Params::*member, std::string name, std::string description,
                         std::uint64_t fallback, double min = 0,
                         double max = static_cast<double>(std::numeric_limits<std::int64_t>::max())) {
    return add(member, std::move(name), std::move(description), param_kind::bytes,
               static_cast<std::int64_t>(fallback), min, max);
  }

  /// A byte count the topology must set.
  operator_schema& bytes(std::uint64_t Params::*member, std::string name, std::string description, required_t,
                         double min = 0,
                         double max = static_cast<double>(std::numeric_limits<std::int64_t>::max())) {
    return add(member, std::move(name), std::move(description), param_kind::bytes, no_default{}, min, max);
  }

  /// A list of at most N reals written as text ("1.5, 2; 3"), stored into a fixed array and its length (GPU
  /// operators' params must be trivially copyable). The list's syntax and length (min_count…N, a multiple
  /// of multiple_of) are checked at load.
  template <std::size_t N>
  operator_schema& reals(float (Params::*values)[N], std::uint32_t Params::*count, std::string name,
                         std::string description, std::string fallback, std::size_t min_count = 0,
                         std::size_t multiple_of = 1) {
    param_decl decl;
    decl.name = name;
    decl.description = std::move(description);
    decl.kind = param_kind::text;
    decl.default_value = param_value{std::move(fallback)};
    decl.check = [name, min_count, multiple_of](const std::string& text) {
      std::string problem;
      const std::vector<double> v = parse_real_list(text, problem);
      if (!problem.empty()) return "parameter '" + name + "': " + problem;
      if (v.size() > N || v.size() < min_count)
        return "parameter '" + name + "' takes " + std::to_string(min_count) + " to " + std::to_string(N) +
               " numbers, not " + std::to_string(v.size());
      if (v.size() % multiple_of != 0)
        return "parameter '" + name + "' takes numbers in groups of " + std::to_string(multiple_of) +
               ", not " + std::to_string(v.size());
      return std::string();
    };
    info_->params.push_back(std::move(decl));
    setters_.emplace_back(std::move(name), [values, count](Params& p, const param_value& v) {
      std::string problem;
      const std::vector<double> parsed = parse_real_list(std::get<std::string>(v), problem);
      const std::size_t n = parsed.size() < N ? parsed.size() : N;  // checked at load; a builder may skip it
      for (std::size_t i = 0; i < n; ++i) (p.*values)[i] = static_cast<float>(parsed[i]);
      p.*count = static_cast<std::uint32_t>(n);
    });
    return *this;
  }

  /// Adds a check to the text parameter declared last (see param_decl::check).
  operator_schema& check(std::function<std::string(const std::string&)> fn) {
    info_->params.back().check = std::move(fn);
    return *this;
  }

  /// A text parameter parsed into a member that is not a string (GPU operators' params must be trivially
  /// copyable): `parse(text, value)` fills `value` and returns the problem ("" when none), which the
  /// loader reports at the parameter with file:line:column. The member may belong to a base of Params (a
  /// generator's params under prefetch_addresses_op's own).
  template <class M, class Owner, class Parse>
  operator_schema& parsed(M Owner::*member, std::string name, std::string description, std::string fallback,
                          Parse parse) {
    static_assert(std::is_base_of_v<Owner, Params>, "the member must belong to Params or a base of it");
    using member_of_params = M Params::*;
    const member_of_params own = member;
    param_decl decl;
    decl.name = name;
    decl.description = std::move(description);
    decl.kind = param_kind::text;
    decl.default_value = param_value{std::move(fallback)};
    decl.check = [parse](const std::string& text) {
      M scratch{};
      return std::string(parse(text, scratch));
    };
    info_->params.push_back(std::move(decl));
    setters_.emplace_back(std::move(name), [own, parse](Params& p, const param_value& v) {
      (void)parse(std::get<std::string>(v), p.*own);  // checked at load; a builder may skip it
    });
    return *this;
  }

  /// A datatype parameter (framework/model/datatype_yaml.hpp): YAML names one of the topology's datatypes
  /// or a primitive, or writes one inline; the builder gives a dt::datatype. `fill(type, member)` stores it
  /// in the member (a GPU operator's committed bytes, say) and returns the problem ("" when none), which
  /// the loader reports at the parameter. Required, or `optional` (left out: the member keeps its default).
  template <class M, class Fill>
  operator_schema& datatype(M Params::*member, std::string name, std::string description, Fill fill,
                            bool optional = false) {
    param_decl decl;
    decl.name = name;
    decl.description = std::move(description);
    decl.kind = param_kind::datatype;
    decl.optional = optional;
    decl.check_type = [fill](const dt::datatype& type) {
      auto scratch = std::make_unique<M>();  // the member may be the size of a committed type: off the stack
      return std::string(fill(type, *scratch));
    };
    info_->params.push_back(std::move(decl));
    auto set = [member, fill, key = name](Params& p, const param_value& v) {
      (void)fill(datatype_value(key, v), p.*member);  // checked at load; a builder may skip it
    };
    setters_.emplace_back(std::move(name), std::move(set));
    return *this;
  }

  /// A check of the parameters together, at load, once each is valid on its own (operator_info::
  /// check_values): `fn(params)` returns the problem, "" when none. The registry wires it up.
  operator_schema& check_params(std::function<std::string(const Params&)> fn) {
    params_check_ = std::move(fn);
    return *this;
  }
  bool checks_params() const { return static_cast<bool>(params_check_); }
  /// What check_params's function says of the Params `values` make.
  std::string params_problem(const std::map<std::string, param_value>& values) const {
    return params_check_ ? params_check_(make(values)) : std::string();
  }

  /// Fills a Params from normalized values, defaults for the rest.
  Params make(const std::map<std::string, param_value>& values) const {
    Params p{};
    for (const auto& [name, set] : setters_) {
      auto it = values.find(name);
      if (it != values.end()) {
        set(p, it->second);
      } else if (const param_decl* decl = info_->find_param(name); decl && decl->default_value) {
        set(p, *decl->default_value);
      }
    }
    return p;
  }

 private:
  /// Marks a parameter declared without a default (required) to add().
  struct no_default {};

  /// Declares a parameter. Its default is built in place in the declaration list: a param_value moved or
  /// copied on the way made GCC 12 (-O2, sanitizers) report false -Wmaybe-uninitialized warnings on the
  /// variant's string, which moved from one translation unit to another with every inlining change.
  template <class M, class Fallback>
  operator_schema& add(M Params::*member, std::string name, std::string description, param_kind kind,
                       Fallback&& fallback, double min = -std::numeric_limits<double>::infinity(),
                       double max = std::numeric_limits<double>::infinity()) {
    param_decl& decl = info_->params.emplace_back();
    decl.name = name;
    decl.description = std::move(description);
    decl.kind = kind;
    if constexpr (!std::is_same_v<std::decay_t<Fallback>, no_default>)
      decl.default_value.emplace(std::forward<Fallback>(fallback));
    decl.min = min;
    decl.max = max;
    setters_.emplace_back(std::move(name),
                          [member](Params& p, const param_value& v) { assign(p.*member, v); });
    return *this;
  }

  template <class M>
  static void assign(M& target, const param_value& v) {
    if constexpr (std::is_same_v<M, bool>) {
      target = std::get<bool>(v);
    } else if constexpr (std::is_same_v<M, std::string>) {
      target = std::get<std::string>(v);
    } else if constexpr (std::is_floating_point_v<M>) {
      target =
          static_cast<M>(std::holds_alternative<double>(v) ? std::get<double>(v)
                                                           : static_cast<double>(std::get<std::int64_t>(v)));
    } else {
      target = static_cast<M>(std::get<std::int64_t>(v));
    }
  }

  operator_info* info_;
  std::vector<std::pair<std::string, std::function<void(Params&, const param_value&)>>> setters_;
  std::function<std::string(const Params&)> params_check_;
  std::vector<std::pair<std::size_t, std::function<std::string(const Params&, std::uint64_t)>>>
      object_checks_;
};

}  // namespace xf
