// Table files: a columnar table on disk as the frames a columnar topic holds, byte for byte, so a source
// streams it with one pread a frame and no conversion (table_source.hpp), and a writer fills it frame by
// frame through a columnar_writer. docs/table-format.md describes the format for other programs.
//
// Format, version 1 (all numbers little-endian):
//
//   bytes 0 … 4095      the file header
//     0   magic         8 bytes "XFTABLE1"
//     8   version       u32, 1
//     12  rows_per_frame u32: rows a full frame holds
//     16  column_count  u32: 1 … 32
//     20  (zero)        u32
//     24  row_count     u64: rows of the table
//     32  frame_count   u64: ceil(row_count / rows_per_frame)
//     40  frame_bytes   u64: bytes of every frame (the geometry's frame_bytes)
//     48  column_count column descriptors of 64 bytes each, in page order:
//           +0  name        char[48], zero-padded (at most 47 bytes: a name always ends in a zero)
//           +48 element     u8, element_type's value (u8 for a character column)
//           +49 (zero)      3 bytes
//           +52 chars       u32: N of char(N); 0 for a scalar column
//           +56 bloom_bits  u32: bits of each data page's bloom filter; 0: none
//           +60 bloom_hashes u32
//     the rest of the page is zero
//   then frame_count frames of exactly frame_bytes bytes each: frame k holds table rows
//   [k·rows_per_frame, …) in the columnar frame format (topics/columnar_layout.hpp) with the index pages
//   built (header flag index_valid); the last frame may hold fewer rows. Bytes a frame does not use (past
//   its last row in a page, past the last entry in the index pages) are zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "framework/core/frame.hpp"
#include "topics/columnar_layout.hpp"
#include "topics/columnar_view.hpp"

namespace xf {

inline constexpr char table_magic[8] = {'X', 'F', 'T', 'A', 'B', 'L', 'E', '1'};
inline constexpr std::uint32_t table_version = 1;
/// The file header's size: frames start page-aligned after it.
inline constexpr std::uint64_t table_header_bytes = 4096;
/// A column descriptor's name field; a name has at most table_name_bytes − 1 bytes.
inline constexpr std::uint32_t table_name_bytes = 48;
inline constexpr std::uint32_t table_descriptor_bytes = 64;
inline constexpr std::uint32_t table_descriptors_at = 48;

struct table_column {
  std::string name;
  column_layout layout;
  friend bool operator==(const table_column&, const table_column&) = default;
};

/// A table's columns in page order and the rows a frame holds: what a columnar topic declares.
struct table_schema {
  std::vector<table_column> columns;
  std::uint32_t rows_per_frame = 0;
  friend bool operator==(const table_schema&, const table_schema&) = default;
};

/// A column's type as a topology writes it: "u32", "char(8)".
std::string column_type_name(const column_layout& layout);
/// A column as messages show it: "'S1' char(8)", with ", bloom 1024 bits 3 hashes" when it has a filter.
std::string column_text(const table_column& column);

/// The page map of the schema's frames. Throws config_error with the reason when it makes none (no
/// columns or too many, a bloom filter that cannot be, a frame too large) or when a column's name is not
/// a valid topic column name (letters, digits, '_' and '-'; at most 47 bytes) or is a duplicate.
columnar_geometry geometry_of(const table_schema& schema);

/// Writes a table file of `rows` rows at `path` (replacing it). fill(first_row, rows_in_frame, writer) sets
/// the values of table rows [first_row, first_row + rows_in_frame) at frame rows 0 … rows_in_frame − 1
/// through `writer` (topics/columnar_view.hpp), in a frame that starts zeroed; the writer's finish (the
/// index) is called for it afterwards. With threads ≤ 1, fill is called on the calling thread for frames
/// in order; with threads > 1, it runs concurrently on that many threads for different frames, each frame
/// written at its own place, so the file is the same whatever the threads. The file appears at `path` only
/// once complete: it is written under `path` + ".partial" and renamed. Throws config_error for a schema that
/// makes no frame, run_error naming the path on I/O errors, and whatever fill throws (the partial file is
/// removed).
void write_columnar_table(const std::string& path, const table_schema& schema, std::uint64_t rows,
                          const std::function<void(std::uint64_t first_row, std::uint32_t rows,
                                                   const columnar_writer& frame)>& fill,
                          unsigned threads = 1);

/// An open table file, read side. Move-only (it owns the file descriptor); read_frame is thread-safe
/// (pread), so any number of threads read frames at once.
class columnar_table_file {
 public:
  /// Opens `path` and checks its header: magic, version, descriptors, a schema that makes a geometry, sizes
  /// that agree with it and with the file's length. Throws run_error naming the path and what is wrong.
  explicit columnar_table_file(const std::string& path);
  ~columnar_table_file();
  columnar_table_file(columnar_table_file&& other) noexcept;
  columnar_table_file& operator=(columnar_table_file&& other) noexcept;
  columnar_table_file(const columnar_table_file&) = delete;
  columnar_table_file& operator=(const columnar_table_file&) = delete;

  const std::string& path() const noexcept { return path_; }
  const table_schema& schema() const noexcept { return schema_; }
  const columnar_geometry& geometry() const noexcept { return geometry_; }
  std::uint64_t rows() const noexcept { return rows_; }
  std::uint64_t frames() const noexcept { return frames_; }
  std::uint64_t frame_bytes() const noexcept { return geometry_.frame_bytes(); }
  /// Rows frame k holds: rows_per_frame, fewer in the last frame.
  std::uint32_t rows_in_frame(std::uint64_t k) const;

  /// Reads frame k (k < frames()) into `frame` (frame_bytes() bytes, 64-byte aligned) and checks its
  /// header (magic, column count, rows, index_valid). Throws run_error naming the path and the frame when
  /// the read fails, comes up short (the file shrank since it was opened) or the header is wrong.
  void read_frame(std::uint64_t k, std::byte* frame) const;
  /// Reads frame k's index pages, checks its header as read_frame does, then reads only the parts
  /// `select` picks from them (frame_out::parts), joined across gaps of at most part_read_gap_bytes;
  /// the rest of `frame` is left as it was. `parts` is scratch. Returns the bytes read.
  std::uint64_t read_frame_parts(std::uint64_t k, std::byte* frame, const frame_selector& select,
                                 std::vector<frame_range>& parts) const;
  /// Two parts closer than this are read as one: a read costs about as much as copying that many bytes
  /// more from the page cache.
  static constexpr std::uint64_t part_read_gap_bytes = 64 * 1024;

 private:
  void read_span(std::uint64_t k, std::byte* frame, frame_range span) const;
  void check_frame(std::uint64_t k, const std::byte* frame) const;

  std::string path_;
  int fd_ = -1;
  table_schema schema_;
  columnar_geometry geometry_{};
  std::uint64_t rows_ = 0;
  std::uint64_t frames_ = 0;
};

}  // namespace xf
