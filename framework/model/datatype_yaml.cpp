// Reading datatypes from YAML: the grammar of datatype_yaml.hpp over the datatype library's constructors,
// whose own refusals (invalid_datatype) are placed at the argument they name.
#include "framework/model/datatype_yaml.hpp"

#include <algorithm>
#include <charconv>

#include "framework/datatype/datatype.hpp"
#include "framework/model/suggest.hpp"

namespace xf {

namespace {

/// A constructor as YAML writes it: its key and its arguments' keys, in the order to_yaml writes them.
struct datatype_form {
  const char* name;
  std::vector<std::string> arguments;
};

const std::vector<datatype_form>& datatype_forms() {
  static const std::vector<datatype_form> forms{
      {"contiguous", {"count", "of"}},
      {"vector", {"count", "blocklength", "stride", "of"}},
      {"hvector", {"count", "blocklength", "stride", "of"}},
      {"indexed", {"blocklengths", "displacements", "of"}},
      {"hindexed", {"blocklengths", "displacements", "of"}},
      {"indexed_block", {"blocklength", "displacements", "of"}},
      {"hindexed_block", {"blocklength", "displacements", "of"}},
      {"struct", {"blocklengths", "displacements", "types"}},
      {"subarray", {"sizes", "subsizes", "starts", "order", "of"}},
      {"resized", {"lb", "extent", "of"}},
  };
  return forms;
}

std::vector<std::string> datatype_form_names() {
  std::vector<std::string> names;
  for (const datatype_form& f : datatype_forms()) names.emplace_back(f.name);
  return names;
}

std::vector<std::string> primitive_names() {
  std::vector<std::string> names;
  for (int i = 0; i < dt::primitive_count; ++i)
    names.emplace_back(dt::name_of(static_cast<dt::primitive>(i)));
  return names;
}

/// Where the argument an invalid_datatype names is written: "starts[2]" at the third start, "child" at
/// `of` (or a struct's `types`), an argument left to its default or not written at the constructor.
source_pos datatype_argument_pos(const yaml_entry& constructor, const std::string& argument) {
  std::string name = argument;
  std::size_t index = 0;
  bool indexed = false;
  if (const std::size_t open = argument.find('['); open != std::string::npos && argument.back() == ']') {
    name = argument.substr(0, open);
    const char* first = argument.data() + open + 1;
    const char* last = argument.data() + argument.size() - 1;
    indexed = std::from_chars(first, last, index).ptr == last;
  }
  const yaml_entry* entry = nullptr;
  for (const char* candidate : {name.c_str(), name == "child" ? "of" : "", name == "child" ? "types" : ""})
    if (entry == nullptr && *candidate != '\0') entry = constructor.value.find(candidate);
  if (entry == nullptr) return constructor.key_pos;
  if (indexed && entry->value.type == yaml_node::kind::list && index < entry->value.items.size())
    return entry->value.items[index].pos;
  return entry->value.pos;
}

}  // namespace

void datatype_reader::read_section(const yaml_entry& section, std::vector<datatype_spec>& out) {
  record("datatypes", section);
  if (section.value.type == yaml_node::kind::null) return;
  if (section.value.type != yaml_node::kind::map) {
    problem(section.value.pos,
            "datatypes must be a map from datatype name to datatype, not " + describe_node(section.value));
    return;
  }
  for (const yaml_entry& entry : section.value.entries) {
    if (const auto it = named_.find(entry.key); it != named_.end()) {
      problem(entry.key_pos, "duplicate datatype '" + entry.key + "' (first at " +
                                 first_at(it->second.entry->key_pos, entry.key_pos) + ")");
      continue;
    }
    named_[entry.key].entry = &entry;
    order_.push_back(entry.key);
    record("datatypes." + entry.key, entry);
  }
  for (const std::string& name : order_) {
    const yaml_entry& entry = *named_[name].entry;
    yaml_node reference;
    reference.pos = entry.key_pos;
    if (std::optional<dt::datatype> type = resolve(name, reference, "")) out.push_back({name, *type});
  }
}

std::optional<dt::datatype> datatype_reader::read(const yaml_node& node, const std::string& context) {
  return expression(node, context, 0);
}

std::optional<dt::datatype> datatype_reader::resolve(const std::string& name, const yaml_node& reference,
                                                     const std::string& context) {
  const auto it = named_.find(name);
  if (it == named_.end()) {
    std::vector<std::string> candidates = order_;
    for (const std::string& p : primitive_names()) candidates.push_back(p);
    std::string hint = did_you_mean(name, candidates);
    if (hint.empty())
      hint = order_.empty() ? " (declare it under datatypes:, or name a primitive: " +
                                  join_choices(primitive_names(), " or ") + ")"
                            : " (datatypes: " + join_choices(order_, " and ") + ")";
    problem(reference.pos, context + "no datatype is named '" + name + "'" + hint);
    return std::nullopt;
  }
  named_entry& named = it->second;
  switch (named.status) {
    case named_entry::state::read:
      return named.type;
    case named_entry::state::failed:
      return std::nullopt;  // its own problem was reported where it is written
    case named_entry::state::reading: {
      std::string path;
      for (auto at = std::find(reading_.begin(), reading_.end(), name); at != reading_.end(); ++at)
        path += "'" + *at + "' -> ";
      problem(reference.pos, context + path + "'" + name + "' is a cycle: a datatype cannot contain itself");
      return std::nullopt;
    }
    case named_entry::state::unread:
      break;
  }
  // Each name read inside another's reading is a level of recursion here: bounded as nesting in the file
  // is (expression), so that a long chain of datatypes each naming the next cannot exhaust the stack.
  if (reading_.size() >= 4 * dt::max_type_depth) {
    problem(reference.pos, context + "datatypes name one another more than " +
                               std::to_string(4 * dt::max_type_depth) + " deep ('" + reading_.front() +
                               "' -> … -> '" + name + "')");
    return std::nullopt;
  }
  named.status = named_entry::state::reading;
  reading_.push_back(name);
  std::optional<dt::datatype> type = expression(named.entry->value, "datatype '" + name + "': ", 0);
  reading_.pop_back();
  // `named` stays valid: the map gains no entries while reading.
  named.status = type ? named_entry::state::read : named_entry::state::failed;
  named.type = type;
  return type;
}

std::optional<dt::datatype> datatype_reader::expression(const yaml_node& node, const std::string& context,
                                                        int depth) {
  // The library refuses trees deeper than max_type_depth at the constructor that goes past it; this bound
  // only keeps a YAML file nested without end from exhausting the stack before that.
  if (depth > 4 * dt::max_type_depth) {
    problem(node.pos, context + "datatypes nested more than " + std::to_string(4 * dt::max_type_depth) +
                          " levels deep in the file");
    return std::nullopt;
  }
  const std::string expected = "a datatype (a primitive, a datatype's name, or a map of one constructor: " +
                               join_choices(datatype_form_names(), ", ") + ")";
  switch (node.type) {
    case yaml_node::kind::scalar:
      if (const std::optional<dt::primitive> p = dt::primitive_from_name(node.scalar))
        return dt::datatype(*p);
      return resolve(node.scalar, node, context);
    case yaml_node::kind::map: {
      if (node.entries.empty()) break;
      if (node.entries.size() > 1) {
        const yaml_entry& first = node.entries[0];
        const yaml_entry& second = node.entries[1];
        std::string hint;
        for (const datatype_form& f : datatype_forms())
          if (first.key == f.name &&
              std::find(f.arguments.begin(), f.arguments.end(), second.key) != f.arguments.end())
            hint = " (its arguments go inside it: " + first.key + ": {" + second.key + ": …})";
        problem(second.key_pos, context + "a datatype map holds one constructor, but '" + second.key +
                                    "' follows '" + first.key + "'" + hint);
        return std::nullopt;
      }
      return construct(node.entries[0], context, depth);
    }
    case yaml_node::kind::null:
    case yaml_node::kind::list:
      break;
  }
  problem(node.pos,
          context + "expected " + expected + ", not " +
              (node.type == yaml_node::kind::map ? std::string("an empty map") : describe_node(node)));
  return std::nullopt;
}

std::optional<dt::datatype> datatype_reader::construct(const yaml_entry& constructor,
                                                       const std::string& context, int depth) {
  const auto& forms = datatype_forms();
  const auto form = std::find_if(forms.begin(), forms.end(),
                                 [&](const datatype_form& f) { return constructor.key == f.name; });
  if (form == forms.end()) {
    std::string hint = did_you_mean(constructor.key, datatype_form_names());
    if (hint.empty()) hint = " (constructors: " + join_choices(datatype_form_names(), ", ") + ")";
    problem(constructor.key_pos, context + "unknown datatype constructor '" + constructor.key + "'" + hint);
    return std::nullopt;
  }
  const std::string at = context + constructor.key + ": ";
  if (constructor.value.type != yaml_node::kind::map) {
    problem(constructor.value.pos, at + "expected a map of its arguments (" +
                                       join_choices(form->arguments, ", ") + "), not " +
                                       describe_node(constructor.value));
    return std::nullopt;
  }
  const std::size_t problems_before = problems_.size();

  // The arguments, each read once; unknown and repeated keys are problems.
  entry_table arguments;
  for (const yaml_entry& e : constructor.value.entries) {
    if (std::find(form->arguments.begin(), form->arguments.end(), e.key) == form->arguments.end()) {
      std::string hint = did_you_mean(e.key, form->arguments);
      if (hint.empty())
        hint = " (" + constructor.key + " takes " + join_choices(form->arguments, " and ") + ")";
      problem(e.key_pos, at + "unknown argument '" + e.key + "'" + hint);
    } else if (const auto it = arguments.find(e.key); it != arguments.end()) {
      problem(e.key_pos, at + "duplicate argument '" + e.key + "' (first at " +
                             first_at(it->second->key_pos, e.key_pos) + ")");
    } else {
      arguments.emplace(e.key, &e);
    }
  }
  for (const std::string& name : form->arguments)
    if (name != "order" && arguments.find(name) == arguments.end())
      problem(constructor.key_pos, at + "missing argument '" + name + "'");

  const auto integer = [&](const char* name) -> std::int64_t {
    const auto it = arguments.find(name);
    if (it == arguments.end()) return 0;
    const yaml_entry& e = *it->second;
    std::int64_t value = 0;
    if (e.value.type != yaml_node::kind::scalar) {
      problem(e.value.pos, at + name + " must be an integer, not " + describe_node(e.value));
    } else if (const integer_parse parsed = parse_integer(e.value.scalar, value);
               parsed != integer_parse::ok) {
      problem(e.value.pos, at + name + " must be an integer" +
                               (parsed == integer_parse::too_large ? " of at most 64 bits" : "") + ", not '" +
                               e.value.scalar + "'");
    }
    return value;
  };
  const auto integers = [&](const char* name) -> std::vector<std::int64_t> {
    std::vector<std::int64_t> values;
    const auto it = arguments.find(name);
    if (it == arguments.end()) return values;
    const yaml_entry& e = *it->second;
    if (e.value.type != yaml_node::kind::list) {
      problem(e.value.pos, at + name + " must be a list of integers ([0, 8]), not " + describe_node(e.value));
      return values;
    }
    for (std::size_t i = 0; i < e.value.items.size(); ++i) {
      const yaml_node& item = e.value.items[i];
      std::int64_t value = 0;
      if (item.type != yaml_node::kind::scalar || parse_integer(item.scalar, value) != integer_parse::ok)
        problem(item.pos, at + name + "[" + std::to_string(i) +
                              "] must be an integer of at most 64 bits, not " + describe_node(item));
      values.push_back(value);
    }
    return values;
  };
  dt::array_order order = dt::array_order::c;
  if (const auto it = arguments.find("order"); it != arguments.end()) {
    if (auto i = choice(*it->second, at, "order", {"c", "fortran"}))
      order = *i == 0 ? dt::array_order::c : dt::array_order::fortran;
  }
  std::optional<dt::datatype> of;
  std::vector<dt::datatype> types;
  // A child that cannot be read may name a datatype whose problem is reported where it is written, adding
  // none here: either way this constructor is not called.
  bool children_read = true;
  if (form->name == std::string("struct")) {
    if (const auto it = arguments.find("types"); it != arguments.end()) {
      const yaml_entry& e = *it->second;
      if (e.value.type != yaml_node::kind::list) {
        problem(e.value.pos, at + "types must be a list of datatypes, not " + describe_node(e.value));
      } else {
        for (const yaml_node& item : e.value.items)
          if (std::optional<dt::datatype> member = expression(item, context, depth + 1))
            types.push_back(*member);
        children_read = types.size() == e.value.items.size();
      }
    }
  } else {
    if (const auto it = arguments.find("of"); it != arguments.end())
      of = expression(it->second->value, context, depth + 1);
    children_read = of.has_value();
  }
  const std::int64_t count = integer("count");
  const std::int64_t blocklength = integer("blocklength");
  const std::int64_t stride = integer("stride");
  const std::vector<std::int64_t> blocklengths = integers("blocklengths");
  const std::vector<std::int64_t> displacements = integers("displacements");
  const std::vector<std::int64_t> sizes = integers("sizes");
  const std::vector<std::int64_t> subsizes = integers("subsizes");
  const std::vector<std::int64_t> starts = integers("starts");
  const std::int64_t lb = integer("lb");
  const std::int64_t extent = integer("extent");
  if (problems_.size() != problems_before || !children_read) return std::nullopt;

  try {
    const std::string& k = constructor.key;
    if (k == "contiguous") return dt::contiguous(count, *of);
    if (k == "vector") return dt::vector(count, blocklength, stride, *of);
    if (k == "hvector") return dt::hvector(count, blocklength, stride, *of);
    if (k == "indexed") return dt::indexed(blocklengths, displacements, *of);
    if (k == "hindexed") return dt::hindexed(blocklengths, displacements, *of);
    if (k == "indexed_block") return dt::indexed_block(blocklength, displacements, *of);
    if (k == "hindexed_block") return dt::hindexed_block(blocklength, displacements, *of);
    if (k == "struct") return dt::struct_type(blocklengths, displacements, types);
    if (k == "subarray") return dt::subarray(sizes, subsizes, starts, order, *of);
    return dt::resized(*of, lb, extent);
  } catch (const dt::invalid_datatype& e) {
    problem(datatype_argument_pos(constructor, e.argument()), context + e.what());
  }
  return std::nullopt;
}

}  // namespace xf
