// A query over a columnar frame as trivially copyable data the kernel runs: the input topic's page map
// (copied when the operator binds to the topic), the columns it names, a predicate in postfix order, and
// what it selects. Two evaluations of the predicate share the program:
//  - per row: the row's values against the constants;
//  - per row range, from the index pages alone: whether some row in the range MAY match and whether every
//    row MUST. A range that may not match is skipped without reading a data page. "may" only grows as the
//    range grows (an atom may match where any of its pages may; NOT may where its operand not surely
//    holds), so a page the range-level test keeps covers every row range inside it that the kernel
//    reads: what the copy engines carry by pages always holds what the kernel touches by rows.
// Parsing and binding (text → program, names → columns) are host code: query_text.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "framework/core/element_type.hpp"
#include "framework/core/exec_space.hpp"
#include "topics/columnar_index.hpp"
#include "topics/columnar_layout.hpp"
#include "topics/page_bloom.hpp"
#include "topics/zone_map.hpp"

namespace xf::olap {

inline constexpr std::uint32_t max_slots = 16;     ///< distinct columns one query names
inline constexpr std::uint32_t max_nodes = 64;     ///< predicate nodes (atoms and connectives)
inline constexpr std::uint32_t max_literals = 64;  ///< constants in the predicate
inline constexpr std::uint32_t max_outputs = 8;    ///< select items
inline constexpr std::uint32_t name_bytes = 48;    ///< a column name, zero-padded
inline constexpr std::uint32_t text_pool_bytes = 1024;

/// A column the query names: its name as written, then (bound) its index in the topic's columns.
struct column_slot {
  char name[name_bytes];
  std::uint32_t column;
};

enum class node_kind : std::uint8_t { compare, between, in_list, op_and, op_or, op_not };
enum class compare_op : std::uint8_t { eq, ne, lt, le, gt, ge };

/// A constant as written (integer, real or 'text'), and once bound, in its column's type.
struct literal {
  enum class kind : std::uint8_t { integer, real, text };
  kind type;
  bool negative;          ///< integer: the value is −magnitude
  std::uint16_t text_at;  ///< text: offset in the pool; bound: the value padded to the column's width
  std::uint16_t text_bytes;
  std::uint64_t magnitude;  ///< integer
  double real;              ///< real
  std::uint64_t bits;       ///< bound scalar: zone_bits of the value in the column's type
};

/// One predicate node, in postfix order: an atom (compare, between, in_list) pushes its truth, a
/// connective pops its operands (two for AND/OR, one for NOT) and pushes the result.
struct node {
  node_kind kind;
  compare_op op;
  std::uint8_t slot;      ///< atoms: the column
  std::uint8_t literals;  ///< atoms: constants used (1, 2 for BETWEEN, n for IN)
  std::uint16_t first;    ///< atoms: the first constant's index
  std::uint16_t at;       ///< position in the text (for messages)
};

enum class output_kind : std::uint8_t { count_rows, sum, min, max, column };

/// What a query leaves unread, each level adding to the one before: the measure of what each part of skip
/// transfer is worth (the default, blooms, is everything the index can rule out).
enum class page_skip : std::uint8_t {
  none,     ///< the copy engines carry every page of the frame (what a row layout moves)
  columns,  ///< only the named columns' pages, all of them
  zones,    ///< and of those, only pages whose min/max zones say a row may match
  blooms,   ///< and of those, only pages whose bloom filters hold the constants of = and IN
};

struct output_item {
  output_kind kind;
  std::uint8_t slot;  ///< sum/min/max/column: the column
};

struct query_program {
  columnar_geometry frame;  ///< bound: the input topic's page map
  column_slot slots[max_slots];
  std::uint32_t slot_count;
  node nodes[max_nodes];
  std::uint32_t node_count;  ///< 0: every row matches
  literal literals[max_literals];
  std::uint32_t literal_count;
  char text_pool[text_pool_bytes];
  std::uint32_t text_used;
  output_item outputs[max_outputs];
  std::uint32_t output_count;
  bool has_group;
  std::uint8_t group_slot;
  bool bound;
  /// Bound: the named column whose pages hold the fewest rows (the kernel walks the frame by its pages).
  std::uint8_t driving_slot;
  /// Bound: every named column holds as many rows a page as the driving one, so each row range the kernel
  /// walks is one page of each of them.
  bool uniform_pages;
  page_skip skip;

  XF_HOST_DEVICE const column_geometry& column_of(std::uint32_t slot) const {
    return frame.columns[slots[slot].column];
  }
};
static_assert(std::is_trivially_copyable_v<query_program>);

namespace detail {

/// Whether `v` compares with the atom's constants as the atom says (scalar columns).
template <class T>
XF_HOST_DEVICE bool atom_holds(const query_program& q, const node& n, T v) {
  const auto c = [&](std::uint32_t i) { return zone_value<T>(q.literals[n.first + i].bits); };
  switch (n.kind) {
    case node_kind::compare:
      switch (n.op) {
        case compare_op::eq:
          return v == c(0);
        case compare_op::ne:
          return v != c(0);
        case compare_op::lt:
          return v < c(0);
        case compare_op::le:
          return v <= c(0);
        case compare_op::gt:
          return v > c(0);
        case compare_op::ge:
          return v >= c(0);
      }
      return false;
    case node_kind::between:
      return c(0) <= v && v <= c(1);
    case node_kind::in_list:
      for (std::uint32_t i = 0; i < n.literals; ++i)
        if (v == c(i)) return true;
      return false;
    default:
      return false;
  }
}

/// Byte-wise comparison of two character values of `width` bytes: <0, 0, >0.
XF_HOST_DEVICE inline int compare_chars(const std::byte* a, const std::byte* b, std::uint32_t width) {
  for (std::uint32_t i = 0; i < width; ++i)
    if (a[i] != b[i]) return static_cast<int>(a[i]) < static_cast<int>(b[i]) ? -1 : 1;
  return 0;
}

XF_HOST_DEVICE inline bool chars_atom_holds(const query_program& q, const node& n, const std::byte* v,
                                            std::uint32_t width) {
  const auto c = [&](std::uint32_t i) {
    return reinterpret_cast<const std::byte*>(q.text_pool + q.literals[n.first + i].text_at);
  };
  switch (n.kind) {
    case node_kind::compare: {
      const int d = compare_chars(v, c(0), width);
      switch (n.op) {
        case compare_op::eq:
          return d == 0;
        case compare_op::ne:
          return d != 0;
        case compare_op::lt:
          return d < 0;
        case compare_op::le:
          return d <= 0;
        case compare_op::gt:
          return d > 0;
        case compare_op::ge:
          return d >= 0;
      }
      return false;
    }
    case node_kind::between:
      return compare_chars(c(0), v, width) <= 0 && compare_chars(v, c(1), width) <= 0;
    case node_kind::in_list:
      for (std::uint32_t i = 0; i < n.literals; ++i)
        if (compare_chars(v, c(i), width) == 0) return true;
      return false;
    default:
      return false;
  }
}

/// What the index says of an atom over one page: some row may hold it, every row must.
struct truth {
  bool may;
  bool must;
};

template <class T>
XF_HOST_DEVICE truth atom_on_zone(const query_program& q, const node& n, const zone_entry& z,
                                  const std::uint64_t* bloom, const column_layout& l) {
  if (z.rows == 0) return {false, true};
  if (z.flags & zone_entry::has_nan) return {true, false};
  const T lo = zone_value<T>(z.min_bits), hi = zone_value<T>(z.max_bits);
  const auto c = [&](std::uint32_t i) { return zone_value<T>(q.literals[n.first + i].bits); };
  const auto bloom_may = [&](T v) {
    return bloom == nullptr || l.bloom_bits == 0 ||
           bloom_may_contain(bloom, l.bloom_bits, l.bloom_hashes, bloom_hash_of(v));
  };
  const bool single = !(lo < hi) && !(hi < lo);
  switch (n.kind) {
    case node_kind::compare: {
      const T v = c(0);
      switch (n.op) {
        case compare_op::eq:
          return {!(v < lo) && !(hi < v) && bloom_may(v), single && !(lo < v) && !(v < lo)};
        case compare_op::ne:
          return {!(single && !(lo < v) && !(v < lo)), v < lo || hi < v};
        case compare_op::lt:
          return {lo < v, hi < v};
        case compare_op::le:
          return {!(v < lo), !(v < hi)};
        case compare_op::gt:
          return {v < hi, v < lo};
        case compare_op::ge:
          return {!(hi < v), !(lo < v)};
      }
      return {true, false};
    }
    case node_kind::between: {
      const T a = c(0), b = c(1);
      return {!(b < lo) && !(hi < a) && !(b < a), !(lo < a) && !(b < hi)};
    }
    case node_kind::in_list: {
      bool may = false, must = false;
      for (std::uint32_t i = 0; i < n.literals; ++i) {
        const T v = c(i);
        if (!(v < lo) && !(hi < v) && bloom_may(v)) may = true;
        if (single && !(lo < v) && !(v < lo)) must = true;
      }
      return {may, must};
    }
    default:
      return {true, false};
  }
}

/// A character column's atom over a page: zones hold 8-byte prefixes, exact for char(8) and narrower.
XF_HOST_DEVICE inline truth chars_atom_on_zone(const query_program& q, const node& n, const zone_entry& z,
                                               const std::uint64_t* bloom, const column_layout& l) {
  if (z.rows == 0) return {false, true};
  const std::uint32_t width = l.chars;
  const bool exact = width <= 8;
  const auto prefix = [&](std::uint32_t i) {
    return chars_prefix(reinterpret_cast<const std::byte*>(q.text_pool + q.literals[n.first + i].text_at),
                        width);
  };
  const auto bloom_may = [&](std::uint32_t i) {
    const auto* v = reinterpret_cast<const std::byte*>(q.text_pool + q.literals[n.first + i].text_at);
    return bloom == nullptr || l.bloom_bits == 0 ||
           bloom_may_contain(bloom, l.bloom_bits, l.bloom_hashes, bloom_hash(v, width));
  };
  const std::uint64_t lo = z.min_bits, hi = z.max_bits;
  const bool single = lo == hi;
  switch (n.kind) {
    case node_kind::compare: {
      const std::uint64_t v = prefix(0);
      switch (n.op) {
        case compare_op::eq:
          return {lo <= v && v <= hi && bloom_may(0), exact && single && v == lo};
        case compare_op::ne:
          return {!(exact && single && v == lo), v < lo || hi < v};
        case compare_op::lt:
          return {exact ? lo < v : lo <= v, hi < v};
        case compare_op::le:
          return {lo <= v, exact ? hi <= v : hi < v};
        case compare_op::gt:
          return {exact ? v < hi : v <= hi, v < lo};
        case compare_op::ge:
          return {v <= hi, exact ? v <= lo : v < lo};
      }
      return {true, false};
    }
    case node_kind::between: {
      const std::uint64_t a = prefix(0), b = prefix(1);
      return {a <= hi && lo <= b && a <= b, exact ? a <= lo && hi <= b : a < lo && hi < b};
    }
    case node_kind::in_list: {
      bool may = false, must = false;
      for (std::uint32_t i = 0; i < n.literals; ++i) {
        const std::uint64_t v = prefix(i);
        if (lo <= v && v <= hi && bloom_may(i)) may = true;
        if (exact && single && v == lo) must = true;
      }
      return {may, must};
    }
    default:
      return {true, false};
  }
}

XF_HOST_DEVICE inline truth atom_on_page(const query_program& q, const node& n, const std::byte* frame,
                                         std::uint32_t page) {
  if (q.skip < page_skip::zones) return {true, false};
  const column_slot& s = q.slots[n.slot];
  const zone_entry& z = page_zone(q.frame, frame, s.column, page);
  const std::uint64_t* bloom =
      q.skip < page_skip::blooms ? nullptr : page_bloom(q.frame, frame, s.column, page);
  const column_layout& l = q.column_of(n.slot).layout;
  if (l.chars != 0) return chars_atom_on_zone(q, n, z, bloom, l);
  truth t{true, false};
  visit_element(l.element, [&](auto zero) { t = atom_on_zone<decltype(zero)>(q, n, z, bloom, l); });
  return t;
}

}  // namespace detail

/// Whether rows r + k·stride of `frame` (k < U, those below `end`) satisfy the predicate: bit k of the
/// result. The program is interpreted once for the U rows, so each atom's U loads are in flight together:
/// a lane's walk is bound by its loads (one a term a row, each waiting on the last, over PCIe where the
/// frame is mapped), not by the arithmetic. Rows at or past `end` are not read.
template <std::uint32_t U>
XF_HOST_DEVICE inline std::uint32_t rows_match(const query_program& q, const std::byte* frame,
                                               std::uint32_t r, std::uint32_t stride, std::uint32_t end) {
  static_assert(U >= 1 && U <= 32);
  std::uint32_t valid = 0;
  while (valid < U && r + valid * stride < end) ++valid;
  std::uint64_t stack[U];  // bit i of stack[k]: the truth of the i-th value on row k's stack
  for (std::uint32_t k = 0; k < U; ++k) stack[k] = 0;
  std::uint32_t depth = 0;
  for (std::uint32_t i = 0; i < q.node_count; ++i) {
    const node& n = q.nodes[i];
    bool value[U];
    switch (n.kind) {
      case node_kind::op_and:
      case node_kind::op_or:
        for (std::uint32_t k = 0; k < U; ++k) {
          const bool b = (stack[k] >> (depth - 1)) & 1u, a = (stack[k] >> (depth - 2)) & 1u;
          value[k] = n.kind == node_kind::op_and ? a && b : a || b;
        }
        depth -= 2;
        break;
      case node_kind::op_not:
        depth -= 1;
        for (std::uint32_t k = 0; k < U; ++k) value[k] = !((stack[k] >> depth) & 1u);
        break;
      default: {
        const std::uint32_t column = q.slots[n.slot].column;
        const column_layout& l = q.column_of(n.slot).layout;
        if (l.chars != 0) {
          for (std::uint32_t k = 0; k < U; ++k)
            value[k] = k < valid && detail::chars_atom_holds(
                                        q, n, frame + q.frame.value_offset(column, r + k * stride), l.chars);
        } else {
          visit_element(l.element, [&](auto zero) {
            using T = decltype(zero);
            T v[U];
            for (std::uint32_t k = 0; k < U; ++k) {  // the loads first, all of them
              v[k] = T{};
              if (k < valid)
                std::memcpy(&v[k], frame + q.frame.value_offset(column, r + k * stride), sizeof(T));
            }
            for (std::uint32_t k = 0; k < U; ++k) value[k] = k < valid && detail::atom_holds<T>(q, n, v[k]);
          });
        }
      }
    }
    for (std::uint32_t k = 0; k < U; ++k)
      stack[k] = (stack[k] & ~(std::uint64_t{1} << depth)) | (std::uint64_t{value[k]} << depth);
    ++depth;
  }
  std::uint32_t hits = 0;
  for (std::uint32_t k = 0; k < valid; ++k)
    if (q.node_count == 0 || (stack[k] & 1u) != 0) hits |= 1u << k;
  return hits;
}

/// Whether row r of `frame` satisfies the predicate.
XF_HOST_DEVICE inline bool row_matches(const query_program& q, const std::byte* frame, std::uint32_t r) {
  return rows_match<1>(q, frame, r, 1, r + 1) != 0;
}

/// Whether some row in [first, last) of an indexed frame may satisfy the predicate, from its index pages
/// alone (never reads a data page). False means no row there does.
XF_HOST_DEVICE inline bool rows_may_match(const query_program& q, const std::byte* frame, std::uint32_t first,
                                          std::uint32_t last) {
  if (first >= last) return false;
  std::uint64_t may = 0, must = 0;
  std::uint32_t depth = 0;
  for (std::uint32_t i = 0; i < q.node_count; ++i) {
    const node& n = q.nodes[i];
    detail::truth t;
    switch (n.kind) {
      case node_kind::op_and:
      case node_kind::op_or: {
        const detail::truth b{((may >> (depth - 1)) & 1u) != 0, ((must >> (depth - 1)) & 1u) != 0};
        const detail::truth a{((may >> (depth - 2)) & 1u) != 0, ((must >> (depth - 2)) & 1u) != 0};
        depth -= 2;
        t = n.kind == node_kind::op_and ? detail::truth{a.may && b.may, a.must && b.must}
                                        : detail::truth{a.may || b.may, a.must || b.must};
        break;
      }
      case node_kind::op_not: {
        depth -= 1;
        const bool child_may = ((may >> depth) & 1u) != 0, child_must = ((must >> depth) & 1u) != 0;
        t = {!child_must, !child_may};
        break;
      }
      default: {
        const column_geometry& cg = q.column_of(n.slot);
        const std::uint32_t p0 = first / cg.rows_per_page, p1 = (last - 1) / cg.rows_per_page;
        t = {false, true};
        for (std::uint32_t p = p0; p <= p1; ++p) {
          const detail::truth page = detail::atom_on_page(q, n, frame, p);
          t.may = t.may || page.may;
          t.must = t.must && page.must;
        }
      }
    }
    const std::uint64_t bit = std::uint64_t{1} << depth;
    may = (may & ~bit) | (t.may ? bit : 0);
    must = (must & ~bit) | (t.must ? bit : 0);
    ++depth;
  }
  return q.node_count == 0 || (may & 1u) != 0;
}

/// The first row past `r` where a page of any column the query names begins, capped at `end`: rows
/// [r, next_boundary) lie in one page of each of them.
XF_HOST_DEVICE inline std::uint32_t next_boundary(const query_program& q, std::uint32_t r,
                                                  std::uint32_t end) {
  std::uint32_t next = end;
  for (std::uint32_t s = 0; s < q.slot_count; ++s) {
    const std::uint32_t rpp = q.column_of(s).rows_per_page;
    const std::uint64_t b = (std::uint64_t{r} / rpp + 1) * rpp;
    if (b < next) next = static_cast<std::uint32_t>(b);
  }
  return next;
}

}  // namespace xf::olap
