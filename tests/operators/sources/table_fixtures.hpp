// Fixtures of the table file tests: page-aligned frame buffers, a schema with every column type, and
// values that are a function of (row, column) so any test can recompute what a table holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "framework/core/frame.hpp"
#include "operators/sources/columnar_table.hpp"

namespace xf::testing {

/// A frame buffer aligned to a page, as the topic heap hands them out (columnar_frame_header is 64-byte
/// aligned). Zeroed.
class page_frame {
 public:
  explicit page_frame(std::uint64_t bytes)
      : data_(static_cast<std::byte*>(std::aligned_alloc(columnar_page_bytes, round_up(bytes)))),
        bytes_(bytes) {
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), 0, round_up(bytes));
  }
  std::byte* data() const { return data_.get(); }
  std::uint64_t bytes() const { return bytes_; }
  frame_out out(std::uint32_t frame_index = ~std::uint32_t{0}) const {
    frame_out o{data_.get(), bytes_, 0, element_type::u8};
    o.frame_index = frame_index;
    return o;
  }

 private:
  static std::uint64_t round_up(std::uint64_t b) {
    return (b + columnar_page_bytes - 1) / columnar_page_bytes * columnar_page_bytes;
  }
  struct free_bytes {
    void operator()(std::byte* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<std::byte, free_bytes> data_;
  std::uint64_t bytes_;
};

/// Every element type and two character widths; bloom filters on a few columns.
inline table_schema every_type_schema(std::uint32_t rows_per_frame) {
  table_schema s;
  s.rows_per_frame = rows_per_frame;
  for (element_type t : all_element_types)
    s.columns.push_back({"c_" + std::string(name_of(t)), {t, 0, 0, 0}});
  s.columns.push_back({"s5", {element_type::u8, 5, 0, 0}});
  s.columns.push_back({"s13", {element_type::u8, 13, 1024, 3}});
  s.columns[4].layout.bloom_bits = 4096;  // c_u32
  s.columns[4].layout.bloom_hashes = 6;
  s.columns[9].layout.bloom_bits = 64;  // c_f64
  s.columns[9].layout.bloom_hashes = 1;
  return s;
}

/// splitmix64 of (row, column, salt): the bits of a table's value.
inline std::uint64_t value_bits(std::uint64_t row, std::uint32_t column, std::uint64_t salt = 0) {
  std::uint64_t z = row * 0x9e3779b97f4a7c15ull + column * 0xbf58476d1ce4e5b9ull + salt + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Writes row `row`'s value of `column` (value_bytes of it) into `dest`: random bits for a scalar (floats
/// may be NaN: the table stores bits), 0 … N characters of [a-z,"] for char(N) (zero-padded).
inline void sample_value(std::uint64_t row, std::uint32_t column, const column_layout& l, std::byte* dest,
                         std::uint64_t salt = 0) {
  const std::uint64_t bits = value_bits(row, column, salt);
  if (l.chars == 0) {
    std::memcpy(dest, &bits, l.value_bytes());
    return;
  }
  std::memset(dest, 0, l.chars);
  const std::uint32_t n = static_cast<std::uint32_t>(bits % (l.chars + 1));
  const char alphabet[] = "abcdefghijklmnopqrstuvwxyz,\" ";
  for (std::uint32_t i = 0; i < n; ++i)
    dest[i] = static_cast<std::byte>(
        alphabet[value_bits(row, column + 100 * (i + 1), salt) % (sizeof alphabet - 1)]);
}

/// Writes a table of `rows` sample rows at `path`.
inline void write_sample_table(const std::string& path, const table_schema& schema, std::uint64_t rows,
                               unsigned threads = 1, std::uint64_t salt = 0) {
  write_columnar_table(
      path, schema, rows,
      [&](std::uint64_t first_row, std::uint32_t n, const columnar_writer& w) {
        for (std::uint32_t r = 0; r < n; ++r)
          for (std::uint32_t c = 0; c < schema.columns.size(); ++c)
            sample_value(first_row + r, c, schema.columns[c].layout, w.value_at(c, r), salt);
      },
      threads);
}

/// True when `text` (an error message) contains `part`.
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace xf::testing
