// The committed form of a datatype (the paper's §3.1): fixed-length records in pre-order, then a lookaside
// area of the variable-length parameters, in one buffer that holds offsets and never pointers — so it can
// be copied anywhere (device memory once, a kernel's shared memory, a file) and read in place. This header
// is the layout and a view of it; DESIGN.md tabulates the fields.
//
//   [serialized_header][type_record × record_count][lookaside: int64 words]
//
// Record 0 is the root. A record's child follows it (pre-order), unless the child is a primitive: then the
// record is a leaf and names the primitive itself. A struct's members may be anything, so its lookaside
// holds each member's record index ("pointer jumping").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/datatype/primitive.hpp"
#include "framework/datatype/type_kind.hpp"

namespace xf::dt {

inline constexpr std::uint32_t serialized_magic = 0x54444658;  // "XFDT" in a little-endian dump
inline constexpr std::uint16_t serialized_version = 1;

struct serialized_header {
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t record_bytes;  ///< sizeof(type_record): a reader of another layout refuses the buffer
  std::uint32_t record_count;
  std::uint32_t depth;             ///< records on the longest path from the root to a leaf
  std::uint64_t records_offset;    ///< bytes from the buffer's start; a multiple of 8
  std::uint64_t lookaside_offset;  ///< bytes from the buffer's start; a multiple of 8
  std::uint64_t lookaside_bytes;
  std::uint64_t total_bytes;
};
static_assert(std::is_trivially_copyable_v<serialized_header> && sizeof(serialized_header) == 48);

// type_record::flags
inline constexpr std::uint8_t record_leaf = 1;   ///< the child is a primitive (struct: every member is)
inline constexpr std::uint8_t record_dense = 2;  ///< the type's data is one gapless run in type-map order
inline constexpr std::uint8_t record_tight = 4;  ///< dense, and extent == size: copies are one run
inline constexpr std::uint8_t record_child_tight =
    8;                                              ///< the child is tight: a block of its copies is one run
inline constexpr std::uint8_t record_markers = 16;  ///< lb and ub come from markers (resized, subarray)
inline constexpr std::uint8_t record_fortran = 32;  ///< subarray in Fortran order

/// One type's fixed-length parameters: the paper's Table 1, "Common" row and the constructor's own.
struct type_record {
  std::uint8_t kind;          ///< type_kind
  std::uint8_t flags;         ///< record_* bits
  std::uint8_t element;       ///< primitive: of a leaf's child, or of a primitive root
  std::uint8_t reserved;      ///< 0
  std::uint32_t child;        ///< the child's record (this one + 1) unless leaf, primitive or struct; else 0
  std::int64_t count;         ///< copies (contiguous), blocks, members (struct) or dimensions (subarray)
  std::int64_t blocklength;   ///< vector, hvector, indexed_block, hindexed_block
  std::int64_t stride;        ///< vector, hvector: as given (child extents or bytes)
  std::int64_t unit_bytes;    ///< bytes per unit of stride and displacements: child extent, or 1 (h-kinds)
  std::int64_t child_extent;  ///< of the child: bytes from one copy to the next inside a block
  std::int64_t child_elements;
  std::int64_t child_size;
  std::int64_t elements;  ///< primitives in one instance of this type
  std::int64_t size;
  std::int64_t lb;
  std::int64_t extent;
  std::int64_t true_lb;
  std::int64_t true_extent;
  std::uint64_t lookaside;  ///< bytes from the lookaside area's start to the variable-length parameters
};
static_assert(std::is_trivially_copyable_v<type_record> && sizeof(type_record) == 120);

/// A struct's member, in its lookaside after the two prefix arrays (int64 words, so the area stays one
/// array of words).
struct struct_member {
  std::int64_t displacement;  ///< bytes
  std::int64_t blocklength;
  std::int64_t extent;  ///< of the member's type
  std::int64_t elements;
  std::int64_t size;
  std::int64_t ref;    ///< >= 0: the member type's record; < 0: a primitive member, -1 - its primitive
  std::int64_t tight;  ///< 1 when the member's type is tight: a block of its copies is one run
};
static_assert(std::is_trivially_copyable_v<struct_member> && sizeof(struct_member) == 7 * 8);
inline constexpr std::int64_t struct_member_words = 7;

// The lookaside of each kind, in int64 words from the record's offset (n = count):
//   indexed, hindexed              displacements[n] (as given), block_prefix[n + 1] (copies before block j)
//   indexed_block, hindexed_block  displacements[n]
//   struct                         element_prefix[n + 1], byte_prefix[n + 1] (elements and packed bytes
//                                  before member j), struct_member[n]
//   subarray                       sizes[n], subsizes[n], starts[n]
//   others                         nothing

/// Words of lookaside a record of `kind` with `count` uses.
XF_HOST_DEVICE constexpr std::int64_t lookaside_words(type_kind kind, std::int64_t count) {
  switch (kind) {
    case type_kind::indexed:
    case type_kind::hindexed:
      return 2 * count + 1;
    case type_kind::indexed_block:
    case type_kind::hindexed_block:
      return count;
    case type_kind::struct_type:
      return 2 * (count + 1) + struct_member_words * count;
    case type_kind::subarray:
      return 3 * count;
    default:
      return 0;
  }
}

/// A committed type in memory the reader can address: the records (which a kernel may first copy into
/// shared memory) and the lookaside (which may stay in global memory). Trivially copyable; it owns
/// nothing, and the bytes must outlive it. Both pointers 8-byte aligned.
struct serialized_view {
  const std::byte* records;
  const std::byte* lookaside;
  std::uint32_t record_count;

  XF_HOST_DEVICE type_record record(std::uint32_t index) const {
    type_record r;
    memcpy(&r, records + static_cast<std::size_t>(index) * sizeof(type_record), sizeof r);
    return r;
  }
  /// The record's variable-length parameters.
  XF_HOST_DEVICE const std::int64_t* lookaside_of(const type_record& r) const {
    return reinterpret_cast<const std::int64_t*>(lookaside + r.lookaside);
  }
  /// Member j of a struct record whose lookaside is `words`.
  XF_HOST_DEVICE static struct_member member(const std::int64_t* words, std::int64_t count, std::int64_t j) {
    struct_member m;
    memcpy(&m, words + 2 * (count + 1) + struct_member_words * j, sizeof m);
    return m;
  }
};
static_assert(std::is_trivially_copyable_v<serialized_view>);

/// The view of a whole serialized buffer (header first), as commit() wrote it or a copy of it.
XF_HOST_DEVICE inline serialized_view view_of(const std::byte* buffer) {
  serialized_header h;
  memcpy(&h, buffer, sizeof h);
  return serialized_view{buffer + h.records_offset, buffer + h.lookaside_offset, h.record_count};
}

}  // namespace xf::dt
