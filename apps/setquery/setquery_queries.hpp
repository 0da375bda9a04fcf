// The Set Query benchmark's queries Q1 … Q4B as data — every KN variant with its id, its WHERE and SELECT
// in the syntax of xeflow's `query` operator — and two CPU evaluators that answer them in the operator's
// result format (CSV), byte for byte: the reference, which reads a table file frame by frame, and the
// in-memory engine (the CPU baseline the GPU is timed against), which scans a table loaded once and may
// consult the frames' index pages to skip blocks. Both evaluate a frame with the same code.
//
// Definitions (O'Neil, "The Set Query Benchmark", The Benchmark Handbook, 2nd ed., 1993, §1.3; the XeFlow
// paper's §6.4 runs these seven):
//   Q1    SELECT COUNT(*) FROM BENCH WHERE KN = 2;                      KN: the 12 columns K500K … K2
//   Q2A   SELECT COUNT(*) FROM BENCH WHERE K2 = 2 AND KN = 3;           KN: K500K … K4 (11, not K2)
//   Q2B   SELECT COUNT(*) FROM BENCH WHERE K2 = 2 AND NOT KN = 3;       KN: as Q2A
//   Q3A   SELECT SUM(K1K) FROM BENCH WHERE KSEQ BETWEEN 400000 AND 500000 AND KN = 3;
//   Q3B   SELECT SUM(K1K) FROM BENCH WHERE (KSEQ BETWEEN 400000 AND 410000 OR KSEQ BETWEEN 420000 AND 430000
//           OR KSEQ BETWEEN 440000 AND 450000 OR KSEQ BETWEEN 460000 AND 470000
//           OR KSEQ BETWEEN 480000 AND 500000) AND KN = 3;
//         Q3A, Q3B KN: K100K, K10K, K100, K25, K10, K5, K4 (as recalled from O'Neil's chapter, whose text
//         was not reachable when this was written)
//   Q4A   SELECT KSEQ, K500K FROM BENCH WHERE <3 consecutive conditions of the list below>: 1–3, 2–4, … 8–10
//   Q4B   as Q4A with 5 consecutive conditions: 1–5, 2–6, … 6–10
//     the list: (1) K2 = 1  (2) K100 > 80  (3) K10K BETWEEN 2000 AND 3000  (4) K5 = 3  (5) K25 IN (11, 19)
//               (6) K4 = 3  (7) K100 < 41  (8) K1K BETWEEN 850 AND 950  (9) K10 = 7  (10) K25 IN (3, 4)
// The KSEQ constants are the published ones (written for 1 M rows: at 10 M rows Q3 reads 1 % of the table).
//
// Ids: "Q1_K500K", "Q2A_K100", "Q3B_K10", "Q4A_1" … "Q4A_8", "Q4B_1" … "Q4B_6" (the first condition's
// number).
//
// Result CSV (the `query` operator's format): the select items joined by ',' ("COUNT(*)", "SUM(K1K)",
// "KSEQ,K500K"), then one line per result row, each line ending in '\n', integers in decimal. Aggregates:
// one row; COUNT(*) of no rows is 0 and so is SUM over no rows (the operator's convention, where SQL would
// say NULL). A projection: the matching rows in table order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/dataset_support/parallel.hpp"
#include "operators/sources/columnar_table.hpp"

namespace xf::apps::setquery {

enum class compare_op : std::uint8_t { eq, ne, lt, le, gt, ge, between, in };

/// `column op constant(s)`, or NOT of it: between takes two constants (inclusive), in one or more, the
/// others one.
struct comparison {
  std::string column;
  compare_op op = compare_op::eq;
  std::vector<std::int64_t> values;
  bool negated = false;
  /// As the query operator's grammar writes it: "K2 = 2", "NOT K4 = 3", "K25 IN (11, 19)".
  std::string text() const;
  friend bool operator==(const comparison&, const comparison&) = default;
};

/// Comparisons OR'ed together.
struct any_of {
  std::vector<comparison> terms;
  friend bool operator==(const any_of&, const any_of&) = default;
};

enum class select_kind : std::uint8_t { count, sum, column };

struct select_item {
  select_kind kind = select_kind::count;
  std::string column;  ///< sum, column: the column
  /// "COUNT(*)", "SUM(K1K)", "KSEQ".
  std::string text() const;
  friend bool operator==(const select_item&, const select_item&) = default;
};

/// One variant of a query: its WHERE as a conjunction of disjunctions, its select items (all aggregates,
/// or all plain columns: a projection).
struct query_variant {
  std::string id;      ///< "Q2A_K100"
  std::string family;  ///< "Q2A"
  std::vector<any_of> where;
  std::vector<select_item> select;

  /// The `where:` parameter: clauses joined by " AND ", a clause of several terms in parentheses when
  /// there is more than one clause.
  std::string where_text() const;
  /// The `select:` parameter and the result's first line: items joined by ',' with no spaces.
  std::string select_text() const;
  bool projection() const { return !select.empty() && select.front().kind == select_kind::column; }
};

inline constexpr std::array<std::string_view, 7> query_families{"Q1",  "Q2A", "Q2B", "Q3A",
                                                                "Q3B", "Q4A", "Q4B"};

/// O'Neil's ten Q4 conditions, in order.
const std::vector<comparison>& q4_conditions();

/// Every variant of every family, families in query_families' order, KN variants from high to low
/// cardinality.
const std::vector<query_variant>& setquery_variants();

/// The variants named by `names`: each an id ("Q1_K500K") or a family ("Q1": all of its variants), case-
/// insensitive; in the list's order, each once. Empty `names`: all. Throws std::invalid_argument naming an
/// unknown name.
std::vector<const query_variant*> select_variants(std::span<const std::string> names);

// ---- the reference ---------------------------------------------------------------------------------------

/// One variant's answer, from the reference or the in-memory engine (they are equal).
struct reference_answer {
  std::string id;
  std::uint64_t matched_rows = 0;  ///< rows the WHERE selects
  std::string csv;                 ///< the result file's exact bytes
};

/// Answers `variants` over the table file in one pass: `threads` threads (at least 1) each read whole
/// frames and evaluate every variant on blocks of rows with branch-free loops. The columns the variants
/// name must be i32 columns of the table (1,024 values a data page, as the frame layout pages them).
/// Returns the answers in `variants`' order. Throws std::invalid_argument for a column the table lacks or
/// of another type, and what read_frame throws.
std::vector<reference_answer> evaluate_reference(const columnar_table_file& table,
                                                 std::span<const query_variant* const> variants,
                                                 unsigned threads);

// ---- the in-memory engine --------------------------------------------------------------------------------

/// Frees memory from std::aligned_alloc: the owner of the in-memory table's frames and of the reference's
/// frame buffers.
struct aligned_free {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};
using aligned_bytes = std::unique_ptr<std::byte[], aligned_free>;

/// A table file's frames in memory, byte for byte as the file holds them (index pages included), each
/// frame 64-byte aligned: loaded once, then scanned any number of times. Move-only; const access is
/// thread-safe.
class in_memory_table {
 public:
  /// Reads every frame of `file` on `threads` threads (at least 1); each frame's header is checked as
  /// read_frame checks it. Throws what read_frame throws, and std::bad_alloc.
  in_memory_table(const columnar_table_file& file, unsigned threads);

  const table_schema& schema() const noexcept { return schema_; }
  const columnar_geometry& geometry() const noexcept { return geometry_; }
  std::uint64_t rows() const noexcept { return rows_; }
  std::uint64_t frames() const noexcept { return frames_; }
  std::uint64_t frame_bytes() const noexcept { return geometry_.frame_bytes(); }
  /// Frame k (k < frames()): frame_bytes() bytes, 64-byte aligned.
  const std::byte* frame(std::uint64_t k) const noexcept { return data_.get() + k * frame_bytes(); }

 private:
  table_schema schema_;
  columnar_geometry geometry_{};
  std::uint64_t rows_ = 0;
  std::uint64_t frames_ = 0;
  aligned_bytes data_;
};

/// One pass of the in-memory engine.
struct engine_pass {
  std::vector<reference_answer> answers;  ///< in the variants' order, equal to evaluate_reference's
  /// Blocks of the table: one data page of each i32 column (1,024 rows), the unit a variant is evaluated
  /// on; every variant considers every block.
  std::uint64_t blocks = 0;
  /// Per variant, in the variants' order: the blocks its index test ruled out (none without the index).
  std::vector<std::uint64_t> blocks_skipped;
};

/// Answers `variants` over `table` in one pass, as evaluate_reference does: `team`'s threads take frames
/// one at a time and evaluate every variant on each block. With `use_index`, a variant's block is first
/// judged from the frame's index pages (the zone of each column's page, and its bloom filter for a point
/// term): when some clause of the WHERE has no term that may hold there, the block is skipped unread;
/// when a clause holds for every row of it (a NOT term whose value the page cannot hold, a range that
/// covers the page's), that clause's column is not read either. The answers do not depend on
/// `use_index`. Throws as evaluate_reference does. One pass at a time per team.
engine_pass evaluate_in_memory(const in_memory_table& table, std::span<const query_variant* const> variants,
                               worker_team& team, bool use_index);

}  // namespace xf::apps::setquery
