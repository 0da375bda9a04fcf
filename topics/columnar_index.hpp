// A columnar frame's index pages, written from its data pages when the frame is published (by whoever
// publishes it, on either side), and read by a consumer deciding which pages to touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "framework/core/exec_space.hpp"
#include "topics/columnar_layout.hpp"
#include "topics/page_bloom.hpp"
#include "topics/zone_map.hpp"

namespace xf {

namespace columnar_detail {

template <class T>
XF_HOST_DEVICE void index_scalar_page(const std::byte* page, std::uint32_t n, zone_entry& entry,
                                      std::uint64_t* bloom, const column_layout& l) {
  const T* values = reinterpret_cast<const T*>(page);
  entry = zone_of(values, n);
  if (l.bloom_bits != 0)
    for (std::uint32_t i = 0; i < n; ++i)
      bloom_add(bloom, l.bloom_bits, l.bloom_hashes, bloom_hash_of(values[i]));
}

XF_HOST_DEVICE inline void index_page(const column_geometry& g, const std::byte* page, std::uint32_t n,
                                      zone_entry& entry, std::uint64_t* bloom) {
  const column_layout& l = g.layout;
  if (l.chars != 0) {
    entry = chars_zone_of(page, l.chars, n);
    if (l.bloom_bits != 0)
      for (std::uint32_t i = 0; i < n; ++i)
        bloom_add(bloom, l.bloom_bits, l.bloom_hashes,
                  bloom_hash(page + std::uint64_t{i} * l.chars, l.chars));
    return;
  }
  switch (l.element) {
    case element_type::u8:
      return index_scalar_page<std::uint8_t>(page, n, entry, bloom, l);
    case element_type::i8:
      return index_scalar_page<std::int8_t>(page, n, entry, bloom, l);
    case element_type::u16:
      return index_scalar_page<std::uint16_t>(page, n, entry, bloom, l);
    case element_type::i16:
      return index_scalar_page<std::int16_t>(page, n, entry, bloom, l);
    case element_type::u32:
      return index_scalar_page<std::uint32_t>(page, n, entry, bloom, l);
    case element_type::i32:
      return index_scalar_page<std::int32_t>(page, n, entry, bloom, l);
    case element_type::u64:
      return index_scalar_page<std::uint64_t>(page, n, entry, bloom, l);
    case element_type::i64:
      return index_scalar_page<std::int64_t>(page, n, entry, bloom, l);
    case element_type::f32:
      return index_scalar_page<float>(page, n, entry, bloom, l);
    case element_type::f64:
      return index_scalar_page<double>(page, n, entry, bloom, l);
  }
}

}  // namespace columnar_detail

/// The frame's header.
XF_HOST_DEVICE inline columnar_frame_header& columnar_header(std::byte* frame) {
  return *reinterpret_cast<columnar_frame_header*>(frame);
}
XF_HOST_DEVICE inline const columnar_frame_header& columnar_header(const std::byte* frame) {
  return *reinterpret_cast<const columnar_frame_header*>(frame);
}

/// Column c's data page p's zone entry and bloom filter words in the frame.
XF_HOST_DEVICE inline const zone_entry& page_zone(const columnar_geometry& g, const std::byte* frame,
                                                  std::uint32_t c, std::uint32_t p) {
  return *reinterpret_cast<const zone_entry*>(frame + g.entry_offset(c, p));
}
XF_HOST_DEVICE inline const std::uint64_t* page_bloom(const columnar_geometry& g, const std::byte* frame,
                                                      std::uint32_t c, std::uint32_t p) {
  return reinterpret_cast<const std::uint64_t*>(frame + g.entry_offset(c, p) + sizeof(zone_entry));
}

/// Writes the header and every index entry of `frame` (geometry g), whose data pages hold `rows` rows:
/// each data page's zone and bloom filter, and entries of no rows for the pages past them. One writer,
/// before the frame is published.
XF_HOST_DEVICE inline void build_columnar_index(const columnar_geometry& g, std::byte* frame,
                                                std::uint32_t rows) {
  columnar_frame_header& h = columnar_header(frame);
  h = columnar_frame_header{};
  h.magic = columnar_magic;
  h.column_count = g.column_count;
  h.rows = rows;
  for (std::uint32_t c = 0; c < g.column_count; ++c) {
    const column_geometry& col = g.columns[c];
    for (std::uint32_t p = 0; p < col.pages; ++p) {
      std::byte* at = frame + g.entry_offset(c, p);
      zone_entry& entry = *reinterpret_cast<zone_entry*>(at);
      auto* bloom = reinterpret_cast<std::uint64_t*>(at + sizeof(zone_entry));
      if (col.layout.bloom_bits != 0) std::memset(bloom, 0, col.layout.bloom_bits / 8);
      columnar_detail::index_page(col, frame + g.page_offset(c, p), g.rows_in_page(c, p, rows), entry, bloom);
    }
  }
  h.flags = columnar_frame_header::index_valid;
}

/// Whether column c's page p of an indexed frame may hold a value in [lo, hi] (a range predicate).
template <class T>
XF_HOST_DEVICE bool page_may_match_range(const columnar_geometry& g, const std::byte* frame, std::uint32_t c,
                                         std::uint32_t p, T lo, T hi) {
  return zone_may_match(page_zone(g, frame, c, p), lo, hi);
}

/// Whether column c's page p of an indexed frame may hold `value` (a point predicate): its zone, then its
/// bloom filter when the column has one.
template <class T>
XF_HOST_DEVICE bool page_may_hold(const columnar_geometry& g, const std::byte* frame, std::uint32_t c,
                                  std::uint32_t p, T value) {
  if (!zone_may_match(page_zone(g, frame, c, p), value, value)) return false;
  const column_layout& l = g.columns[c].layout;
  return l.bloom_bits == 0 ||
         bloom_may_contain(page_bloom(g, frame, c, p), l.bloom_bits, l.bloom_hashes, bloom_hash_of(value));
}

}  // namespace xf
