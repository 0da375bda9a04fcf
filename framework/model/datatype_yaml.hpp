// The YAML grammar of datatypes (framework/datatype): a topology's `datatypes:` section and datatype
// parameters written inline, read into dt::datatype trees with every problem at the node that causes it.
// to_yaml (spec_yaml.hpp) writes the same grammar back.
//
// clang-format off
//
//   datatypes:                # map: name -> datatype; names may refer to each other in any order
//     face: {subarray: {sizes: [32, 32, 32], subsizes: [32, 32, 1], starts: [0, 0, 7], order: c, of: f64}}
//     faces: {vector: {count: 4, blocklength: 2, stride: 8, of: face}}
//     cell: {struct: {blocklengths: [1, 2], displacements: [0, 8], types: [i32, {contiguous: {count: 3, of: f32}}]}}
//     plane: face             # another name for the same type
//   operators:
//     pack: {class: pack, inputs: [arrays], outputs: [faces], params: {type: face}}
//     column: {class: pack, inputs: [rows], outputs: [cols], params: {type: {vector: {count: 64, blocklength: 1, stride: 16, of: f32}}}}
//
// A datatype is one of
//   - a primitive: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 byte char;
//   - the name of a datatype of the section;
//   - a map of one key, the constructor, whose value maps its arguments (MPI's names; `of` is the child):
//       contiguous      count, of
//       vector          count, blocklength, stride (in extents of the child), of
//       hvector         count, blocklength, stride (in bytes), of
//       indexed         blocklengths, displacements (in extents of the child), of
//       hindexed        blocklengths, displacements (in bytes), of
//       indexed_block   blocklength, displacements (in extents of the child), of
//       hindexed_block  blocklength, displacements (in bytes), of
//       struct          blocklengths, displacements (in bytes), types (a list of datatypes)
//       subarray        sizes, subsizes, starts, order (c | fortran; default c), of
//       resized         lb, extent, of
//     Every argument but `order` must be given; numbers are integers (negative strides, displacements and
//     bounds are allowed), lists are lists of integers.
//
// clang-format on
//
// Problems name the node: an unknown constructor or argument (with a suggestion), a missing argument (at
// the constructor), a value of the wrong kind, a name no datatype has, names that refer to each other in
// a cycle, a map of more than one constructor, and what the datatype library refuses (invalid_datatype),
// placed at the argument it names ("starts[2]" at the third start).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/model/yaml_fields.hpp"

namespace xf {

/// Reads datatypes from parsed YAML and collects the problems. One reader serves a topology: first its
/// section (read_section), then the inline datatypes of its parameters (read), which may name the section's.
class datatype_reader : yaml_field_reader {
 public:
  explicit datatype_reader(source_map& positions) : yaml_field_reader(positions) {}

  /// The `datatypes:` section (its entry in the top-level map) into `out`, in declaration order, a
  /// datatype that names another sharing its node. A datatype that cannot be read is left out of `out`.
  void read_section(const yaml_entry& section, std::vector<datatype_spec>& out);

  /// One datatype written at `node` (a parameter's value); `context` starts its problems ("operator 'p':
  /// parameter 'type': "). nullopt when it cannot be read (the problems say why).
  std::optional<dt::datatype> read(const yaml_node& node, const std::string& context);

  /// The problems found so far, in the order found.
  std::vector<diagnostic> take_problems() { return std::move(problems_); }

 private:
  /// A name of the section: where it is written and, once read, its type.
  struct named_entry {
    const yaml_entry* entry = nullptr;
    enum class state : std::uint8_t { unread, reading, read, failed } status = state::unread;
    std::optional<dt::datatype> type;
  };

  std::optional<dt::datatype> resolve(const std::string& name, const yaml_node& reference,
                                      const std::string& context);
  std::optional<dt::datatype> expression(const yaml_node& node, const std::string& context, int depth);
  std::optional<dt::datatype> construct(const yaml_entry& constructor, const std::string& context, int depth);

  std::map<std::string, named_entry, std::less<>> named_;
  std::vector<std::string> order_;    // the section's names, as declared
  std::vector<std::string> reading_;  // the names being read, outermost first: a cycle's path
};

}  // namespace xf
