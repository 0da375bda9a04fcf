// The page map of a columnar topic's frames.
#include "topics/columnar_layout.hpp"

namespace xf {
namespace {

constexpr std::uint32_t min_bloom_bits = columnar_min_bloom_bits;
constexpr std::uint32_t max_bloom_bits = columnar_max_bloom_bits;
constexpr std::uint32_t max_bloom_hashes = columnar_max_bloom_hashes;
/// The largest columnar frame: the topic heap's frames are addressed in 32-bit pages of 4 KiB, and a frame
/// a stage works on should stay far below the GPU's memory.
constexpr std::uint64_t max_frame_bytes = std::uint64_t{1} << 30;

bool power_of_two(std::uint32_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

}  // namespace

std::string make_columnar_geometry(std::span<const column_layout> columns, std::uint32_t rows_per_frame,
                                   columnar_geometry& out) {
  out = columnar_geometry{};
  if (columns.empty()) return "a columnar topic needs at least one column";
  if (columns.size() > columnar_max_columns)
    return std::to_string(columns.size()) + " columns; a columnar topic has at most " +
           std::to_string(columnar_max_columns);
  if (rows_per_frame == 0) return "rows_per_frame must be at least 1";
  std::uint64_t index_bytes = sizeof(columnar_frame_header);
  std::uint64_t data_pages = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const column_layout& l = columns[c];
    const std::string which = "column " + std::to_string(c) + ": ";
    if (l.chars > columnar_max_chars)
      return which + "char(" + std::to_string(l.chars) + ") is wider than char(" +
             std::to_string(columnar_max_chars) + ")";
    if (l.bloom_bits != 0) {
      if (!power_of_two(l.bloom_bits) || l.bloom_bits < min_bloom_bits || l.bloom_bits > max_bloom_bits)
        return which + "bloom_bits " + std::to_string(l.bloom_bits) + " is not a power of two from " +
               std::to_string(min_bloom_bits) + " to " + std::to_string(max_bloom_bits);
      if (l.bloom_hashes == 0 || l.bloom_hashes > max_bloom_hashes)
        return which + "bloom_hashes " + std::to_string(l.bloom_hashes) + " is not from 1 to " +
               std::to_string(max_bloom_hashes);
    } else if (l.bloom_hashes != 0) {
      return which + "bloom_hashes without bloom_bits";
    }
    column_geometry& g = out.columns[c];
    g.layout = l;
    g.value_bytes = l.value_bytes();
    g.rows_per_page = columnar_page_bytes / g.value_bytes;
    g.pages =
        static_cast<std::uint32_t>((std::uint64_t{rows_per_frame} + g.rows_per_page - 1) / g.rows_per_page);
    g.entry_bytes = static_cast<std::uint32_t>(sizeof(zone_entry) + l.bloom_bits / 8);
    g.first_entry = static_cast<std::uint32_t>(index_bytes);
    index_bytes += std::uint64_t{g.pages} * g.entry_bytes;
    data_pages += g.pages;
  }
  const std::uint64_t index_pages = (index_bytes + columnar_page_bytes - 1) / columnar_page_bytes;
  const std::uint64_t total_pages = index_pages + data_pages;
  if (total_pages * columnar_page_bytes > max_frame_bytes)
    return "a frame of " + std::to_string(rows_per_frame) + " rows takes " + std::to_string(total_pages) +
           " pages of 4 KiB, more than the 1 GiB a frame may have";
  out.rows_per_frame = rows_per_frame;
  out.column_count = static_cast<std::uint32_t>(columns.size());
  out.index_pages = static_cast<std::uint32_t>(index_pages);
  out.total_pages = static_cast<std::uint32_t>(total_pages);
  std::uint32_t next = out.index_pages;
  for (std::uint32_t c = 0; c < out.column_count; ++c) {
    out.columns[c].first_page = next;
    next += out.columns[c].pages;
  }
  return "";
}

}  // namespace xf
