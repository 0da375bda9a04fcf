// Fuzz target: the datatypes' YAML grammar (framework/model/datatype_yaml.hpp) on a document's
// `datatypes:` section, as the loader reads it, then what a pack operator does with each type read: commit,
// the round trip through the serialized form, and pack / unpack of one and two instances where they are
// small (with and without the packing plan, which must agree).
#include <algorithm>
#include <cstring>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/pack.hpp"
#include "framework/datatype/pack_plan.hpp"
#include "framework/model/datatype_yaml.hpp"
#include "framework/model/yaml_loader.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace xf::fuzz {
namespace {

/// Packs `count` instances of `t` from a patterned buffer, unpacks them into a zeroed one and packs that
/// again: where no byte is named twice, the two packed forms are equal; the plan's packing equals the
/// traversal's. Skipped for types whose instances span more than a MiB.
void check_packing(const dt::datatype& t, const dt::committed_type& c, std::int64_t count) {
  constexpr std::int64_t limit = 1 << 20;
  if (t.size() > limit / 2 || t.true_extent() > limit / 2 || t.extent() > limit / 2 ||
      t.extent() < -limit / 2)
    return;
  // The bytes `count` instances touch, relative to the user pointer: [lo, hi).
  const std::int64_t last = (count - 1) * t.extent();
  const std::int64_t lo = std::min(t.true_lb(), t.true_lb() + last);
  const std::int64_t hi = std::max(t.true_ub(), t.true_ub() + last);
  const std::int64_t packed_size = dt::packed_bytes(c, count);
  std::vector<std::byte> user(static_cast<std::size_t>(hi - lo) + 1), again(user.size());
  for (std::size_t i = 0; i < user.size(); ++i) user[i] = static_cast<std::byte>(i * 131 + 7);
  std::vector<std::byte> packed(static_cast<std::size_t>(packed_size) + 1), repacked(packed.size());
  std::vector<std::byte> planned(packed.size());
  std::byte* base = user.data() - lo;  // MPI's buf: displacements count from it
  dt::pack(c, count, base, packed.data());
  dt::pack(c, dt::plan_packing(c), count, base, planned.data());
  fuzz_expect(packed == planned, "pack with the type's plan differs from the traversal's pack");
  if (dt::first_overlap(c, count)) return;  // unpack into such a type keeps the later element's bytes
  dt::unpack(c, count, packed.data(), again.data() - lo);
  dt::pack(c, count, again.data() - lo, repacked.data());
  fuzz_expect(packed == repacked, "unpack then pack does not give the packed bytes back");
}

}  // namespace
}  // namespace xf::fuzz

XF_FUZZ_TARGET(datatype_yaml) {
  yaml_node root;
  try {
    root = parse_yaml(as_text(data), "fuzz.yaml");
  } catch (const config_error&) {
    return 0;
  }
  if (root.type != yaml_node::kind::map) return 0;
  const yaml_entry* section = root.find("datatypes");
  if (section == nullptr) return 0;
  source_map positions;
  datatype_reader reader(positions);
  std::vector<datatype_spec> types;
  reader.read_section(*section, types);
  // Inline datatypes, as a parameter writes them: each entry of an `inline:` list.
  std::vector<dt::datatype> inline_types;
  if (const yaml_entry* listed = root.find("inline"); listed && listed->value.type == yaml_node::kind::list)
    for (const yaml_node& item : listed->value.items)
      if (auto t = reader.read(item, "parameter: ")) inline_types.push_back(*t);
  for (const datatype_spec& d : types) inline_types.push_back(d.type);
  for (const dt::datatype& t : inline_types) {
    const dt::committed_type c = dt::commit(t);
    fuzz_expect(dt::deserialize(c) == t, "deserialize(commit(t)) is not t: " + dt::describe(t));
    const dt::committed_type loaded = dt::committed_type::load(c.bytes());
    fuzz_expect(std::ranges::equal(loaded.bytes(), c.bytes()), "load(commit(t)) changed the bytes");
    check_packing(t, c, 1);
    check_packing(t, c, 2);
  }
  return 0;
}
