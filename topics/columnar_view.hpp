// A columnar frame as code reads and writes it: rows, a column's values by row, its data pages. The same
// view runs on the host (CPU operators, the host executor, a table writer) and in the kernel: a column is
// addressed by its index in the topic's columns, which operators find by name once, at start
// (column_names in topic_info).
#pragma once

#include <cstddef>
#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "topics/columnar_index.hpp"
#include "topics/columnar_layout.hpp"

namespace xf {

/// Reads a published columnar frame: `frame` holds geometry().frame_bytes() bytes.
class columnar_view {
 public:
  XF_HOST_DEVICE columnar_view(const columnar_geometry& g, const std::byte* frame) : g_(&g), frame_(frame) {}

  XF_HOST_DEVICE const columnar_geometry& geometry() const { return *g_; }
  XF_HOST_DEVICE const std::byte* data() const { return frame_; }
  XF_HOST_DEVICE const columnar_frame_header& header() const { return columnar_header(frame_); }
  /// Valid rows of the frame.
  XF_HOST_DEVICE std::uint32_t rows() const { return header().rows; }
  /// Whether the index pages describe the data pages (every published frame's are).
  XF_HOST_DEVICE bool indexed() const { return (header().flags & columnar_frame_header::index_valid) != 0; }

  /// Column c's value at row r, of the column's element type T (sizeof(T) must be its value size).
  template <class T>
  XF_HOST_DEVICE T value(std::uint32_t c, std::uint32_t r) const {
    return *reinterpret_cast<const T*>(frame_ + g_->value_offset(c, r));
  }
  /// Character column c's value at row r: geometry().columns[c].layout.chars bytes, zero-padded.
  XF_HOST_DEVICE const std::byte* chars(std::uint32_t c, std::uint32_t r) const {
    return frame_ + g_->value_offset(c, r);
  }
  /// Column c's data page p: rows_in_page(c, p) values packed from its first byte.
  XF_HOST_DEVICE const std::byte* page(std::uint32_t c, std::uint32_t p) const {
    return frame_ + g_->page_offset(c, p);
  }
  XF_HOST_DEVICE std::uint32_t pages(std::uint32_t c) const { return g_->pages_for_rows(c, rows()); }
  XF_HOST_DEVICE std::uint32_t rows_in_page(std::uint32_t c, std::uint32_t p) const {
    return g_->rows_in_page(c, p, rows());
  }
  /// The index's description of column c's data page p.
  XF_HOST_DEVICE const zone_entry& zone(std::uint32_t c, std::uint32_t p) const {
    return page_zone(*g_, frame_, c, p);
  }

 private:
  const columnar_geometry* g_;
  const std::byte* frame_;
};

/// Fills a columnar frame: set values row by row (or page by page), then `finish(rows)` writes the header
/// and the index pages from the data. Whoever publishes a frame without an index gets one built by the
/// framework the same way.
class columnar_writer {
 public:
  XF_HOST_DEVICE columnar_writer(const columnar_geometry& g, std::byte* frame) : g_(&g), frame_(frame) {}

  XF_HOST_DEVICE const columnar_geometry& geometry() const { return *g_; }
  /// Where column c's value at row r goes (value_bytes of the column).
  XF_HOST_DEVICE std::byte* value_at(std::uint32_t c, std::uint32_t r) const {
    return frame_ + g_->value_offset(c, r);
  }
  template <class T>
  XF_HOST_DEVICE void set(std::uint32_t c, std::uint32_t r, T value) const {
    *reinterpret_cast<T*>(value_at(c, r)) = value;
  }
  /// Column c's data page p, to fill with rows_in_page values packed.
  XF_HOST_DEVICE std::byte* page(std::uint32_t c, std::uint32_t p) const {
    return frame_ + g_->page_offset(c, p);
  }
  /// The frame holds `rows` rows (at most rows_per_frame): writes its header and index pages.
  XF_HOST_DEVICE void finish(std::uint32_t rows) const { build_columnar_index(*g_, frame_, rows); }

 private:
  const columnar_geometry* g_;
  std::byte* frame_;
};

}  // namespace xf
