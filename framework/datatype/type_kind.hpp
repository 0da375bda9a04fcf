// The kinds of datatype node — one per MPI constructor, and the primitive leaf — as the type tree and its
// serialized records (serialized_type.hpp) both name them.
#pragma once

#include <cstdint>
#include <string_view>

namespace xf::dt {

enum class type_kind : std::uint8_t {
  primitive,
  contiguous,
  vector,
  hvector,
  indexed,
  hindexed,
  indexed_block,
  hindexed_block,
  struct_type,
  subarray,
  resized,
};
inline constexpr int type_kind_count = 11;

/// The constructor's name as MPI spells it after MPI_Type_(create_): "vector", "struct", ...
constexpr std::string_view name_of(type_kind k) {
  constexpr std::string_view names[type_kind_count] = {
      "primitive",     "contiguous",     "vector", "hvector",  "indexed", "hindexed",
      "indexed_block", "hindexed_block", "struct", "subarray", "resized"};
  const auto i = static_cast<unsigned>(k);
  return i < type_kind_count ? names[i] : "?";
}

/// Whether the kind's stride or displacements count bytes (hvector, hindexed, hindexed_block, struct)
/// rather than extents of the child.
constexpr bool counts_bytes(type_kind k) {
  return k == type_kind::hvector || k == type_kind::hindexed || k == type_kind::hindexed_block ||
         k == type_kind::struct_type;
}

/// Subarray storage order: C (the last dimension varies fastest) or Fortran (the first does).
enum class array_order : std::uint8_t { c, fortran };

}  // namespace xf::dt
