// Columnar frames: a frame of N rows as 4 KiB pages, each column's values in pages of their own, after a
// few index pages that describe every data page (its rows, min and max, and an optional bloom filter).
// A consumer that reads some columns under a predicate looks at the index pages first and then touches —
// or has the copy engines carry — only the data pages that may match: what it skips never crosses PCIe.
//
//   page 0 …            index pages: columnar_frame_header, then per column c and data page p a
//                       zone_entry (32 bytes) followed by the column's bloom filter (bloom_bits / 8)
//   first_page(c) + p   column c's data page p: values of rows [p·rows_per_page(c), …), packed
//
// The index is one contiguous prefix (a single copy), and a column's pages are adjacent (the pages kept of
// a column merge into runs). The geometry is fixed per topic and trivially copyable, so both executors and
// the kernel compute every offset from it without pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "framework/core/element_type.hpp"
#include "framework/core/exec_space.hpp"

namespace xf {

inline constexpr std::uint32_t columnar_page_bytes = 4096;
inline constexpr std::uint32_t columnar_max_columns = 32;
inline constexpr std::uint32_t columnar_magic = 0x31434658;  // "XFC1" in memory order
/// The widest fixed-width character column, char(256).
inline constexpr std::uint32_t columnar_max_chars = 256;
/// A page's bloom filter: a power of two of bits in this range (up to as large as the page it covers), and
/// at most this many hashes.
inline constexpr std::uint32_t columnar_min_bloom_bits = 64;
inline constexpr std::uint32_t columnar_max_bloom_bits = 32768;
inline constexpr std::uint32_t columnar_max_bloom_hashes = 16;

/// One column of a columnar topic, as the topology declares it.
struct column_layout {
  element_type element = element_type::u32;  ///< the values' type (u8 for a character column)
  std::uint32_t chars = 0;                   ///< N of char(N): fixed-width characters; 0: a scalar
  std::uint32_t bloom_bits = 0;              ///< bits of each data page's bloom filter; 0: none
  std::uint32_t bloom_hashes = 0;            ///< hash functions of the filter (k)
  XF_HOST_DEVICE constexpr std::uint32_t value_bytes() const {
    return chars != 0 ? chars : static_cast<std::uint32_t>(size_of(element));
  }
  friend constexpr bool operator==(const column_layout&, const column_layout&) = default;
};

/// Where one column lives in a frame.
struct column_geometry {
  column_layout layout;
  std::uint32_t value_bytes;    ///< bytes of one value
  std::uint32_t rows_per_page;  ///< values in one data page (a value never straddles two)
  std::uint32_t first_page;     ///< its first data page, counted from the frame's start
  std::uint32_t pages;          ///< data pages of a full frame
  std::uint32_t first_entry;    ///< byte offset in the frame of its first data page's zone_entry
  std::uint32_t entry_bytes;    ///< sizeof(zone_entry) + its bloom filter's bytes
};

/// The page map of a columnar topic's frames. Trivially copyable: the catalog carries it to the GPU.
struct columnar_geometry {
  std::uint32_t rows_per_frame;
  std::uint32_t column_count;
  std::uint32_t index_pages;
  std::uint32_t total_pages;
  column_geometry columns[columnar_max_columns];

  XF_HOST_DEVICE std::uint64_t frame_bytes() const {
    return std::uint64_t{total_pages} * columnar_page_bytes;
  }
  /// Byte offset in the frame of column c's data page p.
  XF_HOST_DEVICE std::uint64_t page_offset(std::uint32_t c, std::uint32_t p) const {
    return (std::uint64_t{columns[c].first_page} + p) * columnar_page_bytes;
  }
  /// The data page of column c that holds row r.
  XF_HOST_DEVICE std::uint32_t page_of_row(std::uint32_t c, std::uint32_t r) const {
    return r / columns[c].rows_per_page;
  }
  /// Byte offset in the frame of row r's value in column c.
  XF_HOST_DEVICE std::uint64_t value_offset(std::uint32_t c, std::uint32_t r) const {
    const column_geometry& g = columns[c];
    return page_offset(c, r / g.rows_per_page) + std::uint64_t{r % g.rows_per_page} * g.value_bytes;
  }
  /// Rows of a frame holding `rows` rows that column c's data page p holds (0 past the last).
  XF_HOST_DEVICE std::uint32_t rows_in_page(std::uint32_t c, std::uint32_t p, std::uint32_t rows) const {
    const std::uint64_t first = std::uint64_t{p} * columns[c].rows_per_page;
    if (first >= rows) return 0;
    const std::uint64_t left = rows - first;
    return static_cast<std::uint32_t>(left < columns[c].rows_per_page ? left : columns[c].rows_per_page);
  }
  /// Data pages of column c in a frame holding `rows` rows.
  XF_HOST_DEVICE std::uint32_t pages_for_rows(std::uint32_t c, std::uint32_t rows) const {
    return (rows + columns[c].rows_per_page - 1) / columns[c].rows_per_page;
  }
  /// Byte offset in the frame of the zone_entry of column c's data page p (its bloom filter follows).
  XF_HOST_DEVICE std::uint64_t entry_offset(std::uint32_t c, std::uint32_t p) const {
    return columns[c].first_entry + std::uint64_t{p} * columns[c].entry_bytes;
  }
};
static_assert(std::is_trivially_copyable_v<columnar_geometry>);

/// The first 64 bytes of a columnar frame.
struct alignas(64) columnar_frame_header {
  std::uint32_t magic;         ///< columnar_magic
  std::uint32_t column_count;  ///< the geometry's
  std::uint32_t rows;          ///< valid rows, at most rows_per_frame
  std::uint32_t flags;         ///< index_valid once the zone entries describe the pages
  std::uint64_t reserved[6];
  static constexpr std::uint32_t index_valid = 1;
};
static_assert(sizeof(columnar_frame_header) == 64);

/// One data page as the index describes it. min_bits / max_bits hold the page's least and greatest value
/// in the column's type (zone_map.hpp: ordered_bits), a character column's first 8 bytes big-endian.
struct zone_entry {
  std::uint64_t min_bits;
  std::uint64_t max_bits;
  std::uint32_t rows;   ///< valid rows in the page (0: the page holds none and is never read)
  std::uint32_t flags;  ///< has_nan: a float NaN is in the page (it matches no range, so never skip)
  std::uint64_t reserved;
  static constexpr std::uint32_t has_nan = 1;
};
static_assert(sizeof(zone_entry) == 32);

/// Builds the page map of frames of `rows_per_frame` rows over `columns` into `out`. Returns "" or why
/// there is none (no columns or too many, a value wider than a page, a bloom filter that cannot be), for
/// validation to report at the topic. Host code.
std::string make_columnar_geometry(std::span<const column_layout> columns, std::uint32_t rows_per_frame,
                                   columnar_geometry& out);

}  // namespace xf
