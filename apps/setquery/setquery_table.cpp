// The BENCH table's schema, its rows from the Park–Miller sequence, and its table file.
#include "apps/setquery/setquery_table.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace xf::apps::setquery {

bool has_bloom(std::uint32_t column) {
  return column >= 1 && column <= 5;  // K500K, K250K, K100K, K40K, K10K
}

std::uint32_t column_index(std::string_view name) {
  for (std::uint32_t c = 0; c < column_count; ++c)
    if (column_names[c] == name) return c;
  throw std::invalid_argument("the BENCH table has no column '" + std::string(name) + "'");
}

table_schema bench_schema(std::uint32_t rows_per_frame) {
  table_schema schema;
  schema.rows_per_frame = rows_per_frame;
  for (std::uint32_t c = 0; c < column_count; ++c) {
    column_layout layout;
    if (c < integer_column_count) {
      layout.element = element_type::i32;
      if (has_bloom(c)) {
        layout.bloom_bits = bloom_bits;
        layout.bloom_hashes = bloom_hashes;
      }
    } else {
      layout.element = element_type::u8;
      layout.chars = c == s1_column ? s1_chars : s_chars;
    }
    schema.columns.push_back({std::string(column_names[c]), layout});
  }
  return schema;
}

std::uint32_t park_miller_jump(std::uint32_t x, std::uint64_t n) noexcept {
  // Square-and-multiply on 16807^n; every factor is below 2^31, so products fit in 64 bits.
  std::uint64_t result = x % park_miller_modulus, base = park_miller_multiplier;
  while (n != 0) {
    if (n & 1) result = result * base % park_miller_modulus;
    base = base * base % park_miller_modulus;
    n >>= 1;
  }
  return static_cast<std::uint32_t>(result);
}

namespace {

void check_seed(std::uint32_t seed) {
  if (seed == 0 || seed >= park_miller_modulus)
    throw std::invalid_argument("seed " + std::to_string(seed) + ": give 1 … 2147483646");
}

/// Draws one row's 12 KN values from the generator state (x advanced by 12 steps).
inline void draw_row(std::uint32_t& x, std::int32_t* out) noexcept {
  for (std::uint32_t c = 1; c < integer_column_count; ++c) {
    x = park_miller_next(x);
    out[c - 1] = static_cast<std::int32_t>(x % cardinalities[c] + 1);
  }
}

}  // namespace

std::array<std::int32_t, integer_column_count> generate_row(std::uint64_t row, std::uint32_t seed) {
  check_seed(seed);
  std::array<std::int32_t, integer_column_count> values{};
  values[kseq_column] = static_cast<std::int32_t>(row + 1);
  std::uint32_t x = park_miller_jump(seed, row * random_column_count);
  draw_row(x, values.data() + 1);
  return values;
}

void write_digits(char* out, std::uint32_t width, std::uint64_t value) noexcept {
  std::memset(out, '0', width);
  for (std::uint32_t i = width; i > 0 && value != 0; value /= 10)
    out[--i] = static_cast<char>('0' + value % 10);
}

void fill_frame(std::uint64_t first_row, std::uint32_t rows, const columnar_writer& frame,
                std::uint32_t seed) {
  check_seed(seed);
  const columnar_geometry& g = frame.geometry();
  // The values column by column for the frame's rows, then copied page by page: the generator runs
  // row-major, pages are column-major.
  std::vector<std::int32_t> values(std::size_t{integer_column_count} * rows);
  auto column = [&](std::uint32_t c) { return values.data() + std::size_t{c} * rows; };
  std::uint32_t x = park_miller_jump(seed, first_row * random_column_count);
  std::int32_t row_values[random_column_count];
  for (std::uint32_t r = 0; r < rows; ++r) {
    column(kseq_column)[r] = static_cast<std::int32_t>(first_row + r + 1);
    draw_row(x, row_values);
    for (std::uint32_t c = 1; c < integer_column_count; ++c) column(c)[r] = row_values[c - 1];
  }
  for (std::uint32_t c = 0; c < integer_column_count; ++c) {
    const std::uint32_t per_page = g.columns[c].rows_per_page;
    for (std::uint32_t p = 0; p < g.pages_for_rows(c, rows); ++p)
      std::memcpy(frame.page(c, p), column(c) + std::size_t{p} * per_page,
                  std::size_t{g.rows_in_page(c, p, rows)} * sizeof(std::int32_t));
  }
  for (std::uint32_t s = s1_column; s < column_count; ++s) {
    const column_geometry& cg = g.columns[s];
    const std::int32_t* source = s == s1_column ? column(kseq_column) : column(s_sources[s - s1_column - 1]);
    for (std::uint32_t p = 0; p < g.pages_for_rows(s, rows); ++p) {
      char* page = reinterpret_cast<char*>(frame.page(s, p));
      const std::uint32_t first = p * cg.rows_per_page, n = g.rows_in_page(s, p, rows);
      for (std::uint32_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::uint64_t>(source[first + i]);
        write_digits(page + std::size_t{i} * cg.value_bytes, cg.value_bytes,
                     s == s1_column ? v % 100'000'000 : v);
      }
    }
  }
}

void write_setquery_table(const std::string& path, std::uint64_t rows, unsigned threads, std::uint32_t seed,
                          std::uint32_t rows_per_frame) {
  if (rows < 1 || rows > max_rows)
    throw std::invalid_argument("rows " + std::to_string(rows) + ": give 1 … " + std::to_string(max_rows) +
                                " (KSEQ is a 32-bit integer)");
  check_seed(seed);
  write_columnar_table(
      path, bench_schema(rows_per_frame), rows,
      [seed](std::uint64_t first_row, std::uint32_t n, const columnar_writer& frame) {
        fill_frame(first_row, n, frame, seed);
      },
      threads);
}

}  // namespace xf::apps::setquery
