// Random datatype trees for property-based tests of the datatype engine (host packing, the GPU's plans and
// kernels, the MPI path): every constructor, negative strides and displacements, odd byte strides, and now
// and then parameters that make blocks follow on (dense records: the runs' and the strided plan's fast
// paths). Limits choose small trees (many of them, quickly) or large ones (several GPU blocks and tiles).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "framework/datatype/datatype.hpp"

namespace xf::dt::testing {

struct random_type_limits {
  int primitive_one_in;  ///< a child is a primitive with chance 1 in this
  int empty_one_in;      ///< a count or block length is 0 with chance 1 in this
  std::int64_t max_count, max_blocklength, max_stride, max_stride_bytes;
  std::int64_t max_blocks, max_block_length, max_displacement, max_displacement_bytes;  // (h)indexed
  std::int64_t max_member_length;                                                       ///< struct
  std::int64_t max_dims, max_dim_size;                                                  ///< subarray
  std::int64_t max_resized_extent;
  std::int64_t max_child_elements;          ///< a child with more is drawn again
  std::int64_t min_elements, max_elements;  ///< a root outside is drawn again
  std::int64_t max_extent;                  ///< bounds a root's extent (either sign) and true extent
};

/// Small trees: up to 400 elements within 16 KiB, for many types on the host.
inline constexpr random_type_limits small_random_types{.primitive_one_in = 4,
                                                       .empty_one_in = 16,
                                                       .max_count = 3,
                                                       .max_blocklength = 3,
                                                       .max_stride = 4,
                                                       .max_stride_bytes = 48,
                                                       .max_blocks = 4,
                                                       .max_block_length = 3,
                                                       .max_displacement = 6,
                                                       .max_displacement_bytes = 64,
                                                       .max_member_length = 2,
                                                       .max_dims = 3,
                                                       .max_dim_size = 4,
                                                       .max_resized_extent = 48,
                                                       .max_child_elements = 400,
                                                       .min_elements = 0,
                                                       .max_elements = 400,
                                                       .max_extent = 1 << 14};

/// Larger trees: up to 6000 elements within 256 KiB, so that the GPU's kernels run several blocks and tiles.
inline constexpr random_type_limits large_random_types{.primitive_one_in = 3,
                                                       .empty_one_in = 20,
                                                       .max_count = 12,
                                                       .max_blocklength = 6,
                                                       .max_stride = 9,
                                                       .max_stride_bytes = 200,
                                                       .max_blocks = 8,
                                                       .max_block_length = 5,
                                                       .max_displacement = 12,
                                                       .max_displacement_bytes = 300,
                                                       .max_member_length = 3,
                                                       .max_dims = 4,
                                                       .max_dim_size = 7,
                                                       .max_resized_extent = 96,
                                                       .max_child_elements = 2000,
                                                       .min_elements = 1,
                                                       .max_elements = 6000,
                                                       .max_extent = 1 << 18};

/// Draws type trees from a seed: the same seed gives the same tree under g++ and clang, since every random
/// draw is its own statement (the order in which a call's arguments are evaluated differs between them).
class random_types {
 public:
  random_types(std::uint64_t seed, const random_type_limits& limits) : limits_(limits), rng_(seed) {}

  /// A tree at most `depth` deep, derived at the root (a primitive root is tested on its own).
  datatype make(int depth) {
    for (;;) {
      const datatype t = attempt(depth, false);
      if (t.elements() >= limits_.min_elements && t.elements() <= limits_.max_elements &&
          t.true_extent() <= limits_.max_extent && t.extent() <= limits_.max_extent &&
          t.extent() >= -limits_.max_extent)
        return t;
    }
  }

  std::int64_t pick(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng_);
  }

 private:
  using i64 = std::int64_t;

  bool chance(int in) { return pick(1, in) == 1; }
  /// A count or block length: now and then 0 (an empty block or type), mostly 1 to `high`.
  i64 length(i64 high) { return chance(limits_.empty_one_in) ? 0 : pick(1, high); }
  std::vector<i64> several(std::size_t n, i64 low, i64 high) {
    std::vector<i64> v(n);
    for (i64& x : v) x = pick(low, high);
    return v;
  }

  datatype child_of(int depth) {
    for (;;) {
      const datatype t = attempt(depth, true);
      if (t.elements() <= limits_.max_child_elements) return t;
    }
  }

  datatype attempt(int depth, bool primitive_allowed) {
    const random_type_limits& l = limits_;
    if (depth == 0 || (primitive_allowed && chance(l.primitive_one_in)))
      return static_cast<primitive>(pick(0, primitive_count - 1));
    const datatype child = child_of(depth - 1);
    const bool follow_on = chance(3);
    const i64 count = length(l.max_count), blocklength = length(l.max_blocklength);
    const i64 stride = follow_on ? blocklength : pick(-l.max_stride, l.max_stride);
    const i64 stride_bytes =
        follow_on ? blocklength * child.size() : pick(-l.max_stride_bytes, l.max_stride_bytes);
    const auto n = static_cast<std::size_t>(length(l.max_blocks));
    // Half the indexed types have one block length (the strided plan's table), half several.
    const bool same_lengths = chance(2);
    const i64 one_length = length(l.max_block_length);
    std::vector<i64> blocklengths(n);
    for (i64& b : blocklengths) b = same_lengths ? one_length : length(l.max_block_length);
    const std::vector<i64> displacements = several(n, -l.max_displacement, l.max_displacement);
    const std::vector<i64> displacements_bytes =
        several(n, -l.max_displacement_bytes, l.max_displacement_bytes);
    switch (static_cast<type_kind>(pick(1, type_kind_count - 1))) {
      case type_kind::contiguous:
        return contiguous(count, child);
      case type_kind::vector:
        return vector(count, blocklength, stride, child);
      case type_kind::hvector:
        return hvector(count, blocklength, stride_bytes, child);
      case type_kind::indexed:
        return indexed(blocklengths, displacements, child);
      case type_kind::hindexed:
        return hindexed(blocklengths, displacements_bytes, child);
      case type_kind::indexed_block:
        return indexed_block(blocklength, displacements, child);
      case type_kind::hindexed_block:
        return hindexed_block(blocklength, displacements_bytes, child);
      case type_kind::struct_type: {
        const auto members = static_cast<std::size_t>(pick(1, 3));
        std::vector<datatype> types;
        std::vector<i64> member_displacements;
        i64 next = pick(-16, 16);
        for (std::size_t j = 0; j < members; ++j) {
          types.push_back(j == 0 ? child : child_of(depth - 1));
          const i64 gap = pick(-64, 64);
          member_displacements.push_back(follow_on ? next : gap);
          next += types.back().size();
        }
        std::vector<i64> member_lengths(members, 1);
        if (!follow_on)
          for (i64& b : member_lengths) b = length(l.max_member_length);
        return struct_type(member_lengths, member_displacements, types);
      }
      case type_kind::subarray: {
        const auto dims = static_cast<std::size_t>(pick(1, l.max_dims));
        std::vector<i64> sizes = several(dims, 1, l.max_dim_size), subsizes(dims), starts(dims);
        for (std::size_t d = 0; d < dims; ++d) {
          subsizes[d] = follow_on ? sizes[d] : pick(1, sizes[d]);
          starts[d] = pick(0, sizes[d] - subsizes[d]);
        }
        const array_order order = chance(2) ? array_order::c : array_order::fortran;
        return subarray(sizes, subsizes, starts, order, child);
      }
      case type_kind::resized: {
        const i64 lb = pick(-16, 16);
        const i64 extent = follow_on ? child.size() : pick(0, l.max_resized_extent);
        return resized(child, lb, extent);
      }
      default:
        return child;
    }
  }

  random_type_limits limits_;
  std::mt19937_64 rng_;
};

}  // namespace xf::dt::testing
