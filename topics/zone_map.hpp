// A data page's zone (its least and greatest value) and the test that lets a range predicate skip it:
// a page whose [min, max] does not meet the predicate's range holds no row that matches. Values compare in
// their column's type; a character column compares by its first 8 bytes, which never skips a page that may
// hold a match (values sharing the prefix keep the page).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "topics/columnar_layout.hpp"

namespace xf {

/// A value's bits in a zone_entry's min_bits / max_bits (the value's bytes, zero-extended).
template <class T>
XF_HOST_DEVICE std::uint64_t zone_bits(T value) {
  static_assert(std::is_arithmetic_v<T> && sizeof(T) <= 8);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

/// The value whose zone_bits are `bits`.
template <class T>
XF_HOST_DEVICE T zone_value(std::uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

/// A fixed-width character value's first 8 bytes as a big-endian number (shorter values padded with
/// zeros): its order is the values' byte-wise order, as far as 8 bytes tell.
XF_HOST_DEVICE inline std::uint64_t chars_prefix(const std::byte* value, std::uint32_t width) {
  std::uint64_t prefix = 0;
  for (std::uint32_t i = 0; i < 8; ++i)
    prefix = (prefix << 8) | (i < width ? static_cast<std::uint64_t>(value[i]) : 0u);
  return prefix;
}

/// The zone of `n` values of type T: min, max, rows, and has_nan when a float NaN is among them (NaN is
/// left out of min and max). n == 0 gives an entry of no rows.
template <class T>
XF_HOST_DEVICE zone_entry zone_of(const T* values, std::uint32_t n) {
  zone_entry e{};
  e.rows = n;
  bool any = false;
  T lo{}, hi{};
  for (std::uint32_t i = 0; i < n; ++i) {
    const T v = values[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (v != v) {
        e.flags |= zone_entry::has_nan;
        continue;
      }
    }
    if (!any || v < lo) lo = v;
    if (!any || hi < v) hi = v;
    any = true;
  }
  if (any) {
    e.min_bits = zone_bits(lo);
    e.max_bits = zone_bits(hi);
  }
  return e;
}

/// The zone of `n` character values of `width` bytes each, packed: min and max of their prefixes.
XF_HOST_DEVICE inline zone_entry chars_zone_of(const std::byte* values, std::uint32_t width,
                                               std::uint32_t n) {
  zone_entry e{};
  e.rows = n;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint64_t p = chars_prefix(values + std::uint64_t{i} * width, width);
    if (i == 0 || p < e.min_bits) e.min_bits = p;
    if (i == 0 || p > e.max_bits) e.max_bits = p;
  }
  return e;
}

/// Whether a page with zone `e` may hold a value in [lo, hi] (inclusive; lo > hi matches nothing). A page
/// of no rows holds none; a page with a NaN is kept whole (the entry's min and max leave NaN out).
template <class T>
XF_HOST_DEVICE bool zone_may_match(const zone_entry& e, T lo, T hi) {
  if (e.rows == 0) return false;
  if (e.flags & zone_entry::has_nan) return true;
  if (hi < lo) return false;
  return !(hi < zone_value<T>(e.min_bits)) && !(zone_value<T>(e.max_bits) < lo);
}

/// Whether a character page with zone `e` may hold a value in [lo, hi], both `width` bytes.
XF_HOST_DEVICE inline bool chars_zone_may_match(const zone_entry& e, const std::byte* lo, const std::byte* hi,
                                                std::uint32_t width) {
  if (e.rows == 0) return false;
  return chars_prefix(lo, width) <= e.max_bits && chars_prefix(hi, width) >= e.min_bits;
}

}  // namespace xf
