// O'Neil's Set Query benchmark's BENCH table: its 21 columns as a columnar table (which columns carry a
// bloom filter, and why), the rows as a pure function of (seed, row), and the table file's writer.
//
// The published table (O'Neil, "The Set Query Benchmark", The Benchmark Handbook, 2nd ed., 1993; the XeFlow
// paper's §6.4 runs seven of its queries on 10 M rows):
//   KSEQ             1, 2, …, rows in load order
//   K500K … K2       12 columns, KN uniformly random in 1 … N, independent of each other
//   S1 char(8), S2 … S8 char(20): never used by a query; 13·4 + 8 + 7·20 = 200 bytes a row
//
// Values: the Park–Miller minimal standard generator x' = 16807·x mod (2^31 − 1) with x_0 = seed (1 by
// default), consumed row-major: row i (0-based) draws x_{12i+1} … x_{12i+12} for K500K, K250K, K100K, K40K,
// K10K, K1K, K100, K25, K10, K5, K4, K2 in that order, and KN = x mod N + 1. This is the sequence a
// sequential loader with that generator would produce; a frame jumps straight to its first draw
// (x_n = 16807^n · x_0 mod m), so frames are generated in parallel and any row count works. O'Neil's text
// (which was not reachable when this was written) describes the same kind of generator; whether its loader
// consumed the draws in this order is not known, so the values are this project's, not the published
// tables'. Two properties to know:
//   - the generator's period is 2^31 − 2, which 12 draws a row exhaust after 357,913,941 rows (the period
//     over gcd(12, 2^31 − 2) = 6): from there on, row i's K columns repeat those of row i − 357,913,941
//     (KSEQ and S1 still differ). Counts stay uniform; a 1000 M row table holds 2.79 copies of one pattern;
//   - x mod N favours the low residues by at most 1 part in (2^31 − 2) / N (4,295 for K500K).
//
// S columns (digits only, so every byte is used and a page's min/max orders like the number):
//   S1        KSEQ mod 10^8 as 8 decimal digits, zero-padded on the left ("00000001")
//   S2 … S8   K500K, K250K, K100K, K40K, K10K, K1K, K100 of the row as 20 zero-padded decimal digits
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "operators/sources/columnar_table.hpp"
#include "topics/columnar_view.hpp"

namespace xf::apps::setquery {

/// Columns in page order: KSEQ, the 12 KN columns, S1 … S8.
inline constexpr std::uint32_t column_count = 21;
inline constexpr std::uint32_t integer_column_count = 13;
inline constexpr std::uint32_t random_column_count = 12;
inline constexpr std::array<std::string_view, column_count> column_names{
    "KSEQ", "K500K", "K250K", "K100K", "K40K", "K10K", "K1K", "K100", "K25", "K10", "K5",
    "K4",   "K2",    "S1",    "S2",    "S3",   "S4",   "S5",  "S6",   "S7",  "S8"};
/// N of column KN, by column index 1 … 12 (index 0, KSEQ, has none).
inline constexpr std::array<std::uint32_t, integer_column_count> cardinalities{
    0, 500000, 250000, 100000, 40000, 10000, 1000, 100, 25, 10, 5, 4, 2};
inline constexpr std::uint32_t kseq_column = 0;
inline constexpr std::uint32_t s1_column = 13;
inline constexpr std::uint32_t s1_chars = 8;
inline constexpr std::uint32_t s_chars = 20;
/// S2 … S8 spell these integer columns (S2 = K500K … S8 = K100).
inline constexpr std::array<std::uint32_t, 7> s_sources{1, 2, 3, 4, 5, 6, 7};

/// 16,384 rows make a frame of about 3.2 MiB (824 pages): fine-grained enough to stream, and the index
/// prefix (17 pages) stays 2 % of it.
inline constexpr std::uint32_t default_rows_per_frame = 16384;
inline constexpr std::uint64_t default_rows = 10'000'000;
/// KSEQ is a 32-bit integer column.
inline constexpr std::uint64_t max_rows = 2'147'483'647;
inline constexpr std::uint32_t default_seed = 1;

/// Bloom filters on K500K, K250K, K100K, K40K and K10K only. A 4 KiB page holds 1,024 values; Q1's and
/// Q2's point predicates (KN = 2, KN = 3) find the value in a page of K500K with probability 0.2 %, of
/// K10K with 10 %: a bloom filter lets nearly every page be skipped. For K1K a page holds the value with
/// probability 64 %, for K100 and below always: a filter there would cost bytes and skip nothing. KSEQ
/// grows with the row, so its pages' min/max already answer Q3's ranges.
/// Size: the index pages are one contiguous prefix of the frame (columnar_layout.hpp), moved as one copy
/// whatever columns the query reads, so every filter costs every query; each is kept to an eighth of its
/// page: 4,096 bits with 3 hashes (the best k for 4 bits a value) give 15 % false positives
/// at 1,024 distinct values, i.e. 512 + 0.15·4096 ≈ 1.1 KiB moved a page of K500K instead of 4 KiB. Twice
/// the bits (2.4 % false positives) move about as much for Q1 and double the cost for every other query.
inline constexpr std::uint32_t bloom_bits = 4096;
inline constexpr std::uint32_t bloom_hashes = 3;
bool has_bloom(std::uint32_t column);

/// The column's index in page order; throws std::invalid_argument for a name not in the table.
std::uint32_t column_index(std::string_view name);

/// The BENCH table's schema: the columns above (i32 and char(N)), blooms as has_bloom says.
table_schema bench_schema(std::uint32_t rows_per_frame = default_rows_per_frame);

// ---- the generator ------------------------------------------------------------------------------------

inline constexpr std::uint32_t park_miller_modulus = 2147483647;  // 2^31 − 1
inline constexpr std::uint32_t park_miller_multiplier = 16807;

/// One step: 16807·x mod (2^31 − 1), for x in 1 … 2^31 − 2.
constexpr std::uint32_t park_miller_next(std::uint32_t x) noexcept {
  const std::uint64_t t = std::uint64_t{x} * park_miller_multiplier;
  // 2^31 ≡ 1 (mod 2^31 − 1): fold the high bits onto the low ones instead of dividing.
  std::uint64_t r = (t & park_miller_modulus) + (t >> 31);
  if (r >= park_miller_modulus) r -= park_miller_modulus;
  return static_cast<std::uint32_t>(r);
}

/// x_n from x_0 = x: 16807^n · x mod (2^31 − 1), in O(log n) steps.
std::uint32_t park_miller_jump(std::uint32_t x, std::uint64_t n) noexcept;

/// Row `row`'s (0-based) 13 integer values in column order; KSEQ = row + 1.
std::array<std::int32_t, integer_column_count> generate_row(std::uint64_t row,
                                                            std::uint32_t seed = default_seed);

/// Writes `value` as `width` decimal digits, zero-padded on the left (the low digits if it has more).
void write_digits(char* out, std::uint32_t width, std::uint64_t value) noexcept;

/// Fills table rows [first_row, first_row + rows) into a frame of the BENCH schema (the columnar_writer's
/// geometry must be geometry_of(bench_schema(…))): every column, not the index. Thread-safe for distinct
/// frames.
void fill_frame(std::uint64_t first_row, std::uint32_t rows, const columnar_writer& frame,
                std::uint32_t seed = default_seed);

/// Writes the BENCH table of `rows` rows (1 … max_rows) to `path` as a table file, frames generated on
/// `threads` threads. Throws std::invalid_argument for rows or seed out of range (seed: 1 … 2^31 − 2), and
/// what write_columnar_table throws.
void write_setquery_table(const std::string& path, std::uint64_t rows, unsigned threads,
                          std::uint32_t seed = default_seed,
                          std::uint32_t rows_per_frame = default_rows_per_frame);

}  // namespace xf::apps::setquery
