// The primitive element types a datatype is built from: MPI's basic types (byte, char, the fixed-width
// integers, float, double) as one small enumeration that host and device code read alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "framework/core/element_type.hpp"
#include "framework/core/exec_space.hpp"

namespace xf::dt {

/// A primitive element. The first ten enumerators are `element_type`'s, in its order and with its values,
/// so that a topic's element type converts by a cast; `byte` and `character` are MPI_BYTE and MPI_CHAR.
enum class primitive : std::uint8_t { u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, byte, character };

inline constexpr int primitive_count = 12;

static_assert(static_cast<int>(primitive::f64) == static_cast<int>(element_type::f64) &&
                  static_cast<int>(primitive::u8) == static_cast<int>(element_type::u8),
              "primitive mirrors element_type's values");

constexpr primitive primitive_of(element_type t) {
  return static_cast<primitive>(static_cast<std::uint8_t>(t));
}

/// Bytes of one element. Host and device code (the traversal reads it for a leaf's element).
XF_HOST_DEVICE constexpr std::int64_t size_of(primitive p) {
  switch (p) {
    case primitive::u8:
    case primitive::i8:
    case primitive::byte:
    case primitive::character:
      return 1;
    case primitive::u16:
    case primitive::i16:
      return 2;
    case primitive::u32:
    case primitive::i32:
    case primitive::f32:
      return 4;
    case primitive::u64:
    case primitive::i64:
    case primitive::f64:
      return 8;
  }
  return 0;
}

/// The address alignment MPI's extent rounds to (the k_i of MPI-3.1 §4.1): natural alignment, as the
/// x86-64 and AArch64 ABIs give these types inside a C struct.
constexpr std::int64_t alignment_of(primitive p) {
  return size_of(p);
}

constexpr std::string_view name_of(primitive p) {
  if (static_cast<int>(p) < 10) return xf::name_of(static_cast<element_type>(static_cast<std::uint8_t>(p)));
  return p == primitive::byte ? "byte" : "char";
}

constexpr std::optional<primitive> primitive_from_name(std::string_view name) {
  for (int i = 0; i < primitive_count; ++i)
    if (name_of(static_cast<primitive>(i)) == name) return static_cast<primitive>(i);
  return std::nullopt;
}

}  // namespace xf::dt
