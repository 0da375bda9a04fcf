// Set Query benchmark (apps/setquery): the generator's sequence and its independence of frames and threads,
// the columns' ranges and uniformity, the query list, the reference against a plain row-by-row evaluation,
// the in-memory engine against the reference with and without the index, the committed topologies against
// their generator, and the tools' exit codes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "apps/setquery/setquery_queries.hpp"
#include "apps/setquery/setquery_table.hpp"
#include "apps/setquery/setquery_topology.hpp"
#include "framework/model/registry.hpp"
#include "framework/model/yaml_loader.hpp"
#include "tests/apps/dataset_fixture.hpp"

using namespace xf::apps::setquery;
using xf::test::read_file;
using xf::test::scratch_dir;

namespace {

using row_values = std::array<std::int32_t, integer_column_count>;

/// A table file's rows as written: integer columns and the S columns' text.
struct table_rows {
  std::vector<row_values> ints;
  std::vector<std::array<std::string, 8>> strings;
};

table_rows read_rows(const std::string& path) {
  const xf::columnar_table_file table(path);
  table_rows out;
  std::vector<std::byte> frame(table.frame_bytes() + 64);
  auto* data = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(frame.data()) + 63) &
                                            ~std::uintptr_t{63});
  for (std::uint64_t k = 0; k < table.frames(); ++k) {
    table.read_frame(k, data);
    const xf::columnar_view view(table.geometry(), data);
    for (std::uint32_t r = 0; r < view.rows(); ++r) {
      row_values v{};
      for (std::uint32_t c = 0; c < integer_column_count; ++c) v[c] = view.value<std::int32_t>(c, r);
      out.ints.push_back(v);
      std::array<std::string, 8> s;
      for (std::uint32_t c = s1_column; c < column_count; ++c)
        s[c - s1_column].assign(reinterpret_cast<const char*>(view.chars(c, r)),
                                table.geometry().columns[c].layout.chars);
      out.strings.push_back(s);
    }
  }
  return out;
}

std::uint32_t col(std::string_view name) {
  return column_index(name);
}

std::string digits(std::uint64_t v, std::size_t width) {
  std::string s = std::to_string(v);
  return std::string(width - s.size(), '0') + s;
}

/// The rows' values written plainly: one sequential Park–Miller stream, 12 draws a row.
std::vector<row_values> sequential_rows(std::uint64_t rows) {
  std::vector<row_values> out(rows);
  std::uint64_t x = 1;
  for (std::uint64_t i = 0; i < rows; ++i) {
    out[i][0] = static_cast<std::int32_t>(i + 1);
    for (std::uint32_t c = 1; c < integer_column_count; ++c) {
      x = x * 16807 % 2147483647;
      out[i][c] = static_cast<std::int32_t>(x % cardinalities[c] + 1);
    }
  }
  return out;
}

// ---- the queries evaluated row by row, from O'Neil's definitions (not from the query list) ----------

using row_test = std::function<bool(const row_values&)>;

const std::vector<row_test>& q4_list() {
  static const std::vector<row_test> list{
      [](const row_values& r) { return r[col("K2")] == 1; },
      [](const row_values& r) { return r[col("K100")] > 80; },
      [](const row_values& r) { return r[col("K10K")] >= 2000 && r[col("K10K")] <= 3000; },
      [](const row_values& r) { return r[col("K5")] == 3; },
      [](const row_values& r) { return r[col("K25")] == 11 || r[col("K25")] == 19; },
      [](const row_values& r) { return r[col("K4")] == 3; },
      [](const row_values& r) { return r[col("K100")] < 41; },
      [](const row_values& r) { return r[col("K1K")] >= 850 && r[col("K1K")] <= 950; },
      [](const row_values& r) { return r[col("K10")] == 7; },
      [](const row_values& r) { return r[col("K25")] == 3 || r[col("K25")] == 4; }};
  return list;
}

/// The answer of variant `id` as CSV; Q3's KSEQ constants divided by `kseq_divisor` (scaled variants).
std::string naive_csv(const std::string& id, const std::vector<row_values>& rows,
                      std::int64_t kseq_divisor = 1) {
  const std::string family = id.substr(0, id.find('_')), suffix = id.substr(id.find('_') + 1);
  auto count_where = [&](const row_test& test) {
    std::uint64_t n = 0;
    for (const auto& r : rows) n += test(r) ? 1 : 0;
    return "COUNT(*)\n" + std::to_string(n) + "\n";
  };
  auto sum_where = [&](const row_test& test) {
    std::int64_t s = 0;
    for (const auto& r : rows)
      if (test(r)) s += r[col("K1K")];
    return "SUM(K1K)\n" + std::to_string(s) + "\n";
  };
  const std::int64_t d = kseq_divisor;
  auto in_range = [d](std::int32_t kseq, std::int64_t lo, std::int64_t hi) {
    return kseq >= lo / d && kseq <= hi / d;
  };
  if (family == "Q1") return count_where([&](const row_values& r) { return r[col(suffix)] == 2; });
  if (family == "Q2A")
    return count_where([&](const row_values& r) { return r[col("K2")] == 2 && r[col(suffix)] == 3; });
  if (family == "Q2B")
    return count_where([&](const row_values& r) { return r[col("K2")] == 2 && !(r[col(suffix)] == 3); });
  if (family == "Q3A")
    return sum_where(
        [&](const row_values& r) { return in_range(r[0], 400000, 500000) && r[col(suffix)] == 3; });
  if (family == "Q3B")
    return sum_where([&](const row_values& r) {
      const bool ranges = in_range(r[0], 400000, 410000) || in_range(r[0], 420000, 430000) ||
                          in_range(r[0], 440000, 450000) || in_range(r[0], 460000, 470000) ||
                          in_range(r[0], 480000, 500000);
      return ranges && r[col(suffix)] == 3;
    });
  const std::size_t first = std::stoul(suffix) - 1, n = family == "Q4A" ? 3 : 5;
  std::string csv = "KSEQ,K500K\n";
  for (const auto& r : rows) {
    bool all = true;
    for (std::size_t i = first; i < first + n; ++i) all = all && q4_list()[i](r);
    if (all) csv += std::to_string(r[0]) + "," + std::to_string(r[col("K500K")]) + "\n";
  }
  return csv;
}

/// Q3A and Q3B with their KSEQ constants divided by `d`, so that a small table has rows in the ranges.
std::vector<query_variant> scaled_q3(std::int64_t d) {
  std::vector<query_variant> out;
  for (const query_variant& q : setquery_variants()) {
    if (q.family != "Q3A" && q.family != "Q3B") continue;
    query_variant s = q;
    for (auto& t : s.where[0].terms)
      for (auto& v : t.values) v /= d;
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, std::string> answers_by_id(const std::vector<reference_answer>& answers) {
  std::map<std::string, std::string> m;
  for (const auto& a : answers) m[a.id] = a.csv;
  return m;
}

std::vector<const query_variant*> pointers_to(const std::vector<query_variant>& variants) {
  std::vector<const query_variant*> out;
  for (const auto& q : variants) out.push_back(&q);
  return out;
}

/// Every variant, then Q3's scaled by `kseq_divisor` (their ids repeat: answers compare by position).
std::vector<const query_variant*> every_variant_and(const std::vector<query_variant>& scaled) {
  std::vector<const query_variant*> out = pointers_to(setquery_variants());
  for (const auto& q : scaled) out.push_back(&q);
  return out;
}

/// The engine's answers equal the reference's, variant by variant.
void check_same_answers(const std::vector<reference_answer>& expected, const engine_pass& pass) {
  REQUIRE(pass.answers.size() == expected.size());
  REQUIRE(pass.blocks_skipped.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(expected[i].id);
    CAPTURE(i);
    CHECK(pass.answers[i].id == expected[i].id);
    CHECK(pass.answers[i].csv == expected[i].csv);
    CHECK(pass.answers[i].matched_rows == expected[i].matched_rows);
  }
}

/// Blocks (one data page of each i32 column) of a table of `rows` rows in frames of `rows_per_frame`.
std::uint64_t blocks_of(std::uint64_t rows, std::uint32_t rows_per_frame) {
  const std::uint64_t page_rows = xf::columnar_page_bytes / sizeof(std::int32_t);
  const std::uint64_t per_frame = (rows_per_frame + page_rows - 1) / page_rows;
  return rows / rows_per_frame * per_frame + (rows % rows_per_frame + page_rows - 1) / page_rows;
}

std::size_t position_of(const std::vector<const query_variant*>& variants, const query_variant* q) {
  return static_cast<std::size_t>(std::find(variants.begin(), variants.end(), q) - variants.begin());
}

std::string source_root() {
  const char* root = std::getenv("XF_SOURCE_ROOT");
  REQUIRE_MESSAGE(root != nullptr, "XF_SOURCE_ROOT is not set; run through meson test");
  return root;
}

}  // namespace

TEST_CASE("setquery.park_miller_is_the_minimal_standard") {
  CHECK(park_miller_next(1) == 16807u);
  CHECK(park_miller_next(16807) == 282475249u);
  CHECK(park_miller_next(282475249) == 1622650073u);
  CHECK(park_miller_next(park_miller_modulus - 1) == park_miller_modulus - 16807);
  // Park and Miller's check: x_10000 from x_0 = 1.
  std::uint32_t x = 1;
  for (int i = 0; i < 10000; ++i) x = park_miller_next(x);
  CHECK(x == 1043618065u);
  CHECK(park_miller_jump(1, 10000) == 1043618065u);
  CHECK(park_miller_jump(7, 0) == 7u);
  CHECK(park_miller_jump(1, 2147483646ull) == 1u);  // the period
}

TEST_CASE("setquery.rows_follow_one_sequential_stream") {
  const std::vector<row_values> expected = sequential_rows(3000);
  CHECK(expected[0][col("K500K")] == 16808);   // 16807 mod 500000 + 1
  CHECK(expected[0][col("K250K")] == 225250);  // 282475249 mod 250000 + 1
  for (std::uint64_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    REQUIRE(generate_row(i) == expected[i]);
  }
  // A row far in is the same draws, reached by the jump.
  std::uint32_t x = park_miller_jump(1, 12ull * 123456789);
  const row_values far = generate_row(123456789);
  CHECK(far[0] == 123456790);
  for (std::uint32_t c = 1; c < integer_column_count; ++c) {
    x = park_miller_next(x);
    CHECK(far[c] == static_cast<std::int32_t>(x % cardinalities[c] + 1));
  }
  // 12 draws a row exhaust the period (2^31 − 2) after (2^31 − 2) / 6 rows: the K columns repeat from there.
  const row_values again = generate_row(357913941);
  CHECK(again[0] == 357913942);
  CHECK(std::equal(again.begin() + 1, again.end(), expected[0].begin() + 1));
  CHECK(generate_row(357913940)[1] != expected[0][1]);
  CHECK_THROWS_AS(generate_row(0, 0), std::invalid_argument);
}

TEST_CASE("setquery.schema_declares_the_bench_table") {
  const xf::table_schema s = bench_schema();
  REQUIRE(s.columns.size() == column_count);
  CHECK(s.rows_per_frame == default_rows_per_frame);
  std::uint32_t row_bytes = 0;
  for (std::uint32_t c = 0; c < column_count; ++c) {
    CAPTURE(c);
    CHECK(s.columns[c].name == column_names[c]);
    row_bytes += s.columns[c].layout.value_bytes();
    CHECK((s.columns[c].layout.bloom_bits != 0) == has_bloom(c));
  }
  CHECK(row_bytes == 200);  // O'Neil's 200-byte row
  const xf::columnar_geometry g = xf::geometry_of(s);
  // The index prefix stays a small part of a frame (it is copied whatever the query reads).
  CHECK(g.index_pages * 40 < g.total_pages);
  CHECK_THROWS_AS(column_index("K3"), std::invalid_argument);
}

TEST_CASE("setquery.generator_is_independent_of_frames_and_threads") {
  scratch_dir dir;
  const std::uint64_t rows = 7000;
  write_setquery_table(dir.file("a.xft"), rows, 1, default_seed, 3000);  // frames not page-aligned
  write_setquery_table(dir.file("b.xft"), rows, 3, default_seed, 1024);
  const table_rows a = read_rows(dir.file("a.xft")), b = read_rows(dir.file("b.xft"));
  REQUIRE(a.ints.size() == rows);
  CHECK(a.ints == b.ints);
  CHECK(a.strings == b.strings);
  CHECK(a.ints == sequential_rows(rows));
  for (std::uint64_t i = 0; i < rows; i += 997) {
    CAPTURE(i);
    CHECK(a.strings[i][0] == digits(i + 1, 8));
    for (std::size_t s = 1; s < 8; ++s) CHECK(a.strings[i][s] == digits(a.ints[i][s_sources[s - 1]], 20));
  }
  std::string low(8, ' ');
  write_digits(low.data(), 8, 123456789);  // the low 8 digits of a longer KSEQ
  CHECK(low == "23456789");
  // Another seed is another table.
  write_setquery_table(dir.file("c.xft"), 100, 2, 12345, 64);
  CHECK(read_rows(dir.file("c.xft")).ints[5] == generate_row(5, 12345));
  CHECK_THROWS_AS(write_setquery_table(dir.file("d.xft"), 0, 1), std::invalid_argument);
}

TEST_CASE("setquery.columns_are_in_range_and_roughly_uniform") {
  const std::uint64_t rows = 200000;
  std::vector<std::vector<std::uint32_t>> counts(integer_column_count);
  std::uint64_t out_of_range = 0;
  for (std::uint32_t c = 1; c < integer_column_count; ++c) counts[c].assign(cardinalities[c] + 1, 0);
  for (std::uint64_t i = 0; i < rows; ++i) {
    const row_values r = generate_row(i);
    for (std::uint32_t c = 1; c < integer_column_count; ++c) {
      if (r[c] < 1 || static_cast<std::uint32_t>(r[c]) > cardinalities[c]) {
        ++out_of_range;
        continue;
      }
      ++counts[c][static_cast<std::uint32_t>(r[c])];
    }
  }
  CHECK(out_of_range == 0);
  for (std::uint32_t c = 1; c < integer_column_count; ++c) {
    CAPTURE(column_names[c]);
    const double n = cardinalities[c], expected = rows / n;
    // Pearson's chi-square over the N values: mean N − 1, standard deviation sqrt(2(N − 1)); 6 of them
    // allow for chance and still catch a skewed or missing range.
    double chi2 = 0;
    for (std::uint32_t v = 1; v <= cardinalities[c]; ++v)
      chi2 += (counts[c][v] - expected) * (counts[c][v] - expected) / expected;
    CHECK(std::abs(chi2 - (n - 1)) < 6 * std::sqrt(2 * (n - 1)));
  }
}

TEST_CASE("setquery.query_list_is_complete") {
  const std::map<std::string, std::size_t> expected{{"Q1", 12}, {"Q2A", 11}, {"Q2B", 11}, {"Q3A", 7},
                                                    {"Q3B", 7}, {"Q4A", 8},  {"Q4B", 6}};
  std::map<std::string, std::size_t> per_family;
  std::set<std::string> ids;
  for (const auto& q : setquery_variants()) {
    ++per_family[q.family];
    CHECK(ids.insert(q.id).second);
    CHECK(q.id.rfind(q.family + "_", 0) == 0);
  }
  CHECK(per_family == expected);
  for (const auto& kn :
       {"K500K", "K250K", "K100K", "K40K", "K10K", "K1K", "K100", "K25", "K10", "K5", "K4", "K2"})
    CHECK(ids.count(std::string("Q1_") + kn) == 1);
  CHECK(q4_conditions().size() == 10);

  auto find = [](const std::string& id) {
    const std::vector<std::string> names{id};
    const auto v = select_variants(names);
    REQUIRE(v.size() == 1);
    return *v[0];
  };
  CHECK(find("Q1_K500K").where_text() == "K500K = 2");
  CHECK(find("Q1_K500K").select_text() == "COUNT(*)");
  CHECK(find("Q2A_K100").where_text() == "K2 = 2 AND K100 = 3");
  CHECK(find("Q2B_K4").where_text() == "K2 = 2 AND NOT K4 = 3");
  CHECK(find("Q3A_K100K").where_text() == "KSEQ BETWEEN 400000 AND 500000 AND K100K = 3");
  CHECK(find("Q3A_K100K").select_text() == "SUM(K1K)");
  CHECK(find("q3b_k10").where_text() ==
        "(KSEQ BETWEEN 400000 AND 410000 OR KSEQ BETWEEN 420000 AND 430000 OR KSEQ BETWEEN 440000 AND 450000 "
        "OR "
        "KSEQ BETWEEN 460000 AND 470000 OR KSEQ BETWEEN 480000 AND 500000) AND K10 = 3");
  CHECK(find("Q4A_1").where_text() == "K2 = 1 AND K100 > 80 AND K10K BETWEEN 2000 AND 3000");
  CHECK(find("Q4A_8").where_text() == "K1K BETWEEN 850 AND 950 AND K10 = 7 AND K25 IN (3, 4)");
  CHECK(find("Q4B_1").where_text() ==
        "K2 = 1 AND K100 > 80 AND K10K BETWEEN 2000 AND 3000 AND K5 = 3 AND K25 IN (11, 19)");
  CHECK(find("Q4B_6").where_text() ==
        "K4 = 3 AND K100 < 41 AND K1K BETWEEN 850 AND 950 AND K10 = 7 AND K25 IN (3, 4)");
  CHECK(find("Q4B_6").select_text() == "KSEQ,K500K");
  CHECK(find("Q4B_6").projection());

  const std::vector<std::string> families{"q4a", "Q1", "Q4A_2"};
  CHECK(select_variants(families).size() == 8 + 12);
  CHECK(select_variants({}).size() == setquery_variants().size());
  const std::vector<std::string> unknown{"Q5"};
  CHECK_THROWS_AS(select_variants(unknown), std::invalid_argument);
}

TEST_CASE("setquery.reference_equals_a_row_by_row_evaluation") {
  scratch_dir dir;
  const std::uint64_t rows = 60000;
  write_setquery_table(dir.file("bench.xft"), rows, 2, default_seed, 4096);
  const xf::columnar_table_file table(dir.file("bench.xft"));
  const std::vector<row_values> values = sequential_rows(rows);

  std::vector<const query_variant*> all;
  for (const auto& q : setquery_variants()) all.push_back(&q);
  const std::vector<reference_answer> one = evaluate_reference(table, all, 1);
  const std::vector<reference_answer> four = evaluate_reference(table, all, 4);
  REQUIRE(one.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    CAPTURE(all[i]->id);
    CHECK(one[i].id == all[i]->id);
    CHECK(one[i].csv == naive_csv(all[i]->id, values));
    CHECK(four[i].csv == one[i].csv);
    CHECK(four[i].matched_rows == one[i].matched_rows);
  }
  // On 60,000 rows Q3's published KSEQ ranges select nothing: the same variants with the ranges divided
  // by 10 check the range and OR paths, with sums that are not zero.
  const std::vector<query_variant> scaled = scaled_q3(10);
  std::vector<const query_variant*> scaled_ptrs;
  for (const auto& q : scaled) scaled_ptrs.push_back(&q);
  const auto scaled_answers = answers_by_id(evaluate_reference(table, scaled_ptrs, 3));
  for (const auto& q : scaled) {
    CAPTURE(q.id);
    CHECK(scaled_answers.at(q.id) == naive_csv(q.id, values, 10));
  }
  CHECK(scaled_answers.at("Q3A_K4") != "SUM(K1K)\n0\n");
  // Spot checks of the format: a count, and a projection in table order.
  const auto by_id = answers_by_id(one);
  CHECK(by_id.at("Q1_K2").rfind("COUNT(*)\n", 0) == 0);
  const std::string& q4 = by_id.at("Q4A_1");
  CHECK(q4.rfind("KSEQ,K500K\n", 0) == 0);
  CHECK(std::count(q4.begin(), q4.end(), '\n') > 100);
}

TEST_CASE("setquery.reference_rejects_columns_the_table_lacks") {
  scratch_dir dir;
  xf::table_schema s;
  s.rows_per_frame = 1024;
  s.columns.push_back({"KSEQ", {xf::element_type::i32}});
  s.columns.push_back({"K2", {xf::element_type::i64}});
  xf::write_columnar_table(dir.file("t.xft"), s, 10,
                           [](std::uint64_t, std::uint32_t, const xf::columnar_writer&) {});
  const xf::columnar_table_file table(dir.file("t.xft"));
  const std::vector<std::string> q1{"Q1_K500K"}, q2{"Q1_K2"};
  CHECK_THROWS_WITH_AS(evaluate_reference(table, select_variants(q1), 1),
                       "Q1_K500K: the table has no column K500K", std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate_reference(table, select_variants(q2), 1),
                       "Q1_K2: column K2 is not an i32 column of the table", std::invalid_argument);
}

TEST_CASE("setquery.engine_answers_as_the_reference_with_and_without_the_index") {
  scratch_dir dir;
  const std::uint64_t rows = 60000;
  const std::uint32_t rows_per_frame = 4096;
  write_setquery_table(dir.file("bench.xft"), rows, 2, default_seed, rows_per_frame);
  const xf::columnar_table_file file(dir.file("bench.xft"));
  const in_memory_table table(file, 2);
  CHECK(table.rows() == rows);
  CHECK(table.frames() == file.frames());
  CHECK(reinterpret_cast<std::uintptr_t>(table.frame(1)) % 64 == 0);

  const std::vector<query_variant> scaled = scaled_q3(10);
  const std::vector<const query_variant*> variants = every_variant_and(scaled);
  const std::vector<reference_answer> expected = evaluate_reference(file, variants, 2);
  xf::apps::worker_team team(3);
  const engine_pass off = evaluate_in_memory(table, variants, team, false);
  const engine_pass on = evaluate_in_memory(table, variants, team, true);
  check_same_answers(expected, off);
  check_same_answers(expected, on);
  CHECK(off.blocks == blocks_of(rows, rows_per_frame));
  CHECK(on.blocks == off.blocks);
  CHECK(std::all_of(off.blocks_skipped.begin(), off.blocks_skipped.end(), [](auto n) { return n == 0; }));

  // Q3A with KSEQ BETWEEN 40000 AND 50000: KSEQ's zones rule out every block but the ten or so that meet
  // the range, and the answer (equal to the reference's, not zero) shows none of them held a match.
  const std::size_t q3a = setquery_variants().size() + 6;
  REQUIRE(variants[q3a]->id == "Q3A_K4");
  CHECK(expected[q3a].matched_rows > 0);
  CHECK(on.blocks_skipped[q3a] >= on.blocks - 11);
  // K500K = 2 is in a page with probability 0.2 %: its bloom filters rule out most pages.
  const std::size_t q1 = position_of(variants, select_variants(std::vector<std::string>{"Q1_K500K"})[0]);
  CHECK(on.blocks_skipped[q1] > on.blocks / 2);
  // K2 = 2 holds in every page: nothing to skip for Q1_K2.
  const std::size_t q1_k2 = position_of(variants, select_variants(std::vector<std::string>{"Q1_K2"})[0]);
  CHECK(on.blocks_skipped[q1_k2] == 0);
}

TEST_CASE("setquery.engine_with_the_index_answers_as_the_reference_on_random_tables") {
  // Tables of other seeds and sizes, frames of whole and partial pages, last frames short: single rows and
  // short last pages (whose zones are narrow) are where a wrong index test would skip a match.
  struct shape {
    std::uint64_t rows;
    std::uint32_t rows_per_frame;
  };
  std::mt19937_64 random(12345);
  std::vector<shape> shapes{{1, 1024}, {1025, 1024}, {5000, 3000}, {9000, 4096}, {4096, 2048}};
  for (int i = 0; i < 3; ++i)
    shapes.push_back({1 + random() % 30000, static_cast<std::uint32_t>(512 + random() % 8000)});
  xf::apps::worker_team team(2);
  for (const shape& s : shapes) {
    const auto seed = static_cast<std::uint32_t>(1 + random() % (park_miller_modulus - 2));
    CAPTURE(s.rows);
    CAPTURE(s.rows_per_frame);
    CAPTURE(seed);
    scratch_dir dir;
    write_setquery_table(dir.file("t.xft"), s.rows, 2, seed, s.rows_per_frame);
    const xf::columnar_table_file file(dir.file("t.xft"));
    const in_memory_table table(file, 2);
    // Q3's ranges scaled into the table's KSEQ range, so they select rows.
    const std::vector<query_variant> scaled =
        scaled_q3(static_cast<std::int64_t>((500000 + s.rows - 1) / s.rows));
    const std::vector<const query_variant*> variants = every_variant_and(scaled);
    const std::vector<reference_answer> expected = evaluate_reference(file, variants, 2);
    const engine_pass on = evaluate_in_memory(table, variants, team, true);
    check_same_answers(expected, on);
    CHECK(on.blocks == blocks_of(s.rows, s.rows_per_frame));
  }
}

TEST_CASE("setquery.index_skips_a_not_term_only_where_every_value_is_its_constant") {
  // Three pages of K2 = 2 throughout and K4 all 3 (page 0), 3 and 1 alternating (page 1), all 1 (page 2).
  scratch_dir dir;
  xf::table_schema schema;
  schema.rows_per_frame = 4096;
  schema.columns.push_back({"K2", {xf::element_type::i32}});
  schema.columns.push_back({"K4", {xf::element_type::i32}});
  const std::uint32_t page_rows = xf::columnar_page_bytes / sizeof(std::int32_t);
  xf::write_columnar_table(dir.file("t.xft"), schema, 3 * page_rows,
                           [&](std::uint64_t first, std::uint32_t rows, const xf::columnar_writer& frame) {
                             for (std::uint32_t r = 0; r < rows; ++r) {
                               const std::uint64_t row = first + r, page = row / page_rows;
                               frame.set<std::int32_t>(0, r, 2);
                               frame.set<std::int32_t>(1, r,
                                                       (page == 0 || (page == 1 && row % 2 == 0)) ? 3 : 1);
                             }
                           });
  const xf::columnar_table_file file(dir.file("t.xft"));
  const in_memory_table table(file, 1);
  xf::apps::worker_team team(2);
  // Q2B_K4: K2 = 2 AND NOT K4 = 3. Page 0 cannot match; page 1 can (its values differ); page 2 matches
  // throughout.
  const auto q2b = select_variants(std::vector<std::string>{"Q2B_K4", "Q2A_K4"});
  REQUIRE(q2b.size() == 2);
  REQUIRE(q2b[0]->id == "Q2A_K4");
  const engine_pass on = evaluate_in_memory(table, q2b, team, true);
  const engine_pass off = evaluate_in_memory(table, q2b, team, false);
  const std::vector<reference_answer> expected = evaluate_reference(file, q2b, 1);
  check_same_answers(expected, on);
  check_same_answers(expected, off);
  CHECK(on.blocks == 3);
  CHECK(expected[1].csv == "COUNT(*)\n" + std::to_string(page_rows + page_rows / 2) + "\n");
  CHECK(on.blocks_skipped[1] == 1);
  // Q2A_K4: K2 = 2 AND K4 = 3. Page 2's zone (1 … 1) rules it out.
  CHECK(expected[0].csv == "COUNT(*)\n" + std::to_string(page_rows + page_rows / 2) + "\n");
  CHECK(on.blocks_skipped[0] == 1);
  CHECK(off.blocks_skipped == std::vector<std::uint64_t>{0, 0});
}

TEST_CASE("setquery.topologies_equal_the_generated_text") {
  const xf::table_schema schema = bench_schema();
  xf::operator_registry no_operators;
  for (std::string_view family : query_families) {
    CAPTURE(family);
    const std::string path = source_root() + "/topologies/" + topology_file_name(family);
    REQUIRE(std::filesystem::exists(path));
    const std::string text = read_file(path);
    CHECK_MESSAGE(text == topology_yaml(family),
                  path << " differs from what xeflow-setquery-yaml writes: run it (--out-dir topologies)");

    xf::topology_spec spec;
    const auto problems = xf::read_topology(xf::parse_yaml(text, path), path, no_operators, spec);
    CHECK(problems.empty());
    REQUIRE(spec.topics.size() == 1);
    const xf::topic_spec& bench = spec.topics[0];
    CHECK(bench.name == "bench");
    CHECK(bench.layout == xf::frame_layout::columnar);
    CHECK(bench.rows_per_frame == schema.rows_per_frame);
    REQUIRE(bench.columns.size() == schema.columns.size());
    for (std::size_t c = 0; c < schema.columns.size(); ++c) {
      CHECK(bench.columns[c].name == schema.columns[c].name);
      CHECK(bench.columns[c].layout == schema.columns[c].layout);
    }
    REQUIRE(!spec.operators.empty());
    const xf::operator_spec& source = spec.operators[0];
    CHECK(source.class_name == "table_source");
    CHECK(source.on == xf::placement::cpu);
    CHECK(source.outputs == std::vector<std::string>{"bench"});
    CHECK(std::get<std::string>(source.params.at("path")) == "bench.xft");

    std::vector<const query_variant*> expected;
    for (const auto& q : setquery_variants())
      if (q.family == family) expected.push_back(&q);
    REQUIRE(spec.operators.size() == expected.size() + 1);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const xf::operator_spec& op = spec.operators[i + 1];
      CAPTURE(op.name);
      CHECK(op.class_name == "query");
      CHECK(op.on == xf::placement::gpu);
      CHECK(op.inputs == std::vector<std::string>{"bench"});
      CHECK(op.outputs.empty());
      CHECK(std::get<std::string>(op.params.at("where")) == expected[i]->where_text());
      CHECK(std::get<std::string>(op.params.at("select")) == expected[i]->select_text());
      CHECK(std::get<std::string>(op.params.at("result")) == "results/" + expected[i]->id + ".csv");
    }
  }
  CHECK_THROWS_AS(topology_yaml("Q5"), std::invalid_argument);
}

TEST_CASE("setquery.tools_write_the_table_and_the_answers") {
  scratch_dir dir;
  const std::string table = dir.file("bench.xft"), out = dir.file("expected");
  auto gen = xf::test::run_tool("XF_SETQUERY_GEN", {"--rows", "5k", "--out", table, "--threads", "2"});
  CHECK_MESSAGE(gen.exit_code == 0, gen.err);
  auto ref =
      xf::test::run_tool("XF_SETQUERY_REF", {table, "--query", "Q1", "--query", "Q4B_2", "--out-dir", out});
  CHECK_MESSAGE(ref.exit_code == 0, ref.err);
  CHECK(ref.out.find("Q1_K500K") != std::string::npos);
  const std::vector<row_values> values = sequential_rows(5000);
  for (const std::string id : {"Q1_K500K", "Q1_K2", "Q4B_2"}) {
    CAPTURE(id);
    CHECK(read_file(out + "/" + id + ".csv") == naive_csv(id, values));
  }
  CHECK(!std::filesystem::exists(out + "/Q2A_K4.csv"));

  CHECK(xf::test::run_tool("XF_SETQUERY_REF", {table, "--query", "Q9"}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_SETQUERY_REF", {dir.file("missing.xft")}).exit_code == 1);
  CHECK(xf::test::run_tool("XF_SETQUERY_GEN", {"--rows", "0", "--out", table}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_SETQUERY_GEN", {"--out", table, "--seed", "0"}).exit_code == 2);
}

TEST_CASE("setquery.cpu_tool_times_every_family_and_checks_the_answers") {
  if (std::getenv("XF_SETQUERY_CPU") == nullptr) {
    MESSAGE("skipped: XF_SETQUERY_CPU (xeflow-setquery-cpu's path) is not set by tests/apps/meson.build");
    return;
  }
  scratch_dir dir;
  const std::string table = dir.file("bench.xft"), expected = dir.file("expected"),
                    json = dir.file("cpu.json");
  auto gen = xf::test::run_tool("XF_SETQUERY_GEN", {"--rows", "5k", "--out", table, "--threads", "2"});
  REQUIRE_MESSAGE(gen.exit_code == 0, gen.err);
  auto ref = xf::test::run_tool("XF_SETQUERY_REF", {table, "--out-dir", expected});
  REQUIRE_MESSAGE(ref.exit_code == 0, ref.err);
  auto cpu = xf::test::run_tool(
      "XF_SETQUERY_CPU", {table, "--threads", "2", "--reps", "2", "--expected", expected, "--json", json});
  REQUIRE_MESSAGE(cpu.exit_code == 0, cpu.err);
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  CHECK(j.at("benchmark") == "setquery-cpu");
  CHECK(j.at("rows") == 5000);
  CHECK(j.at("threads") == 2);
  REQUIRE(j.at("families").size() == 2 * query_families.size());
  for (const auto& f : j.at("families")) {
    CAPTURE(f.dump());
    CHECK(f.at("answers") == "equal to the reference");
    CHECK(f.at("min_ms").get<double>() <= f.at("median_ms").get<double>());
    CHECK(f.at("blocks_skipped").get<std::uint64_t>() <= f.at("blocks").get<std::uint64_t>());
    if (f.at("index") == "off") CHECK(f.at("blocks_skipped") == 0);
  }

  // A wrong expected answer is named, and fails the run.
  xf::test::write_file(expected + "/Q1_K10.csv", "COUNT(*)\n1\n");
  auto wrong =
      xf::test::run_tool("XF_SETQUERY_CPU", {table, "--query", "Q1", "--reps", "1", "--expected", expected});
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("Q1_K10") != std::string::npos);
  CHECK(xf::test::run_tool("XF_SETQUERY_CPU", {table, "--index", "maybe"}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_SETQUERY_CPU", {table, "--query", "Q9"}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_SETQUERY_CPU", {dir.file("missing.xft")}).exit_code == 1);
}

/// A table of three frames, the last one short, its reference answers, and each family's committed
/// topology (but for the table's and results' paths) in a scratch directory.
struct host_run_fixture {
  scratch_dir dir;
  std::string table = dir.file("bench.xft"), expected = dir.file("expected"), results = dir.file("results");
  topology_options options;

  host_run_fixture() {
    auto gen = xf::test::run_tool("XF_SETQUERY_GEN", {"--rows", "40000", "--out", table, "--threads", "2"});
    REQUIRE_MESSAGE(gen.exit_code == 0, gen.err);
    auto ref = xf::test::run_tool("XF_SETQUERY_REF", {table, "--out-dir", expected});
    REQUIRE_MESSAGE(ref.exit_code == 0, ref.err);
    std::filesystem::create_directories(results);
    options.table_path = table;
    options.results_dir = results;
    options.source_threads = 2;
  }
  /// The family's topology file.
  std::string topology(std::string_view family) {
    const std::string path = dir.file(topology_file_name(family));
    std::ofstream out(path);
    out << topology_yaml(family, options);
    return path;
  }
  /// xeflow-run of the family's topology with `args` after it.
  xf::test::process_result run(std::string_view family, std::vector<std::string> args) {
    args.insert(args.begin(), topology(family));
    return xf::test::run_tool("XF_RUN", args);
  }
  /// Compares the family's (every family's: "") result files with the reference's; how many.
  std::size_t compare(std::string_view family = "") const {
    std::size_t compared = 0;
    for (const query_variant& q : setquery_variants()) {
      if (!family.empty() && q.family != family) continue;
      CAPTURE(q.id);
      CHECK(read_file(results + "/" + q.id + ".csv") == read_file(expected + "/" + q.id + ".csv"));
      ++compared;
    }
    return compared;
  }
};

TEST_CASE("setquery.every_topology_answers_as_the_reference_on_the_host_executor") {
  // The committed topologies through xeflow-run's host executor: every variant's result equals the
  // reference's.
  host_run_fixture f;
  for (const std::string_view family : query_families) {
    CAPTURE(family);
    auto run = f.run(family, {"--set", "runtime.executor=host", "-q"});
    CHECK_MESSAGE(run.exit_code == 0, run.err);
  }
  CHECK(f.compare() == 62);
}

TEST_CASE("setquery.sinks_finish_at_once_and_the_first_failed_finish_is_reported") {
  // Q1's 12 sinks finish on threads of their own. Two of them cannot write their result: the run fails
  // and names the first of them in operator order, whichever finished first; the other ten wrote theirs.
  host_run_fixture f;
  const std::string nowhere = f.dir.file("no_such_dir");
  auto run = f.run("Q1", {"--set", "runtime.executor=host", "-q", "--set",
                          "operators.q1_k100k.params.result=" + nowhere + "/a.csv", "--set",
                          "operators.q1_k1k.params.result=" + nowhere + "/b.csv"});
  CHECK(run.exit_code != 0);
  CHECK_MESSAGE(run.err.find("operator 'q1_k100k'") != std::string::npos, run.err);
  CHECK_MESSAGE(run.err.find(nowhere + "/a.csv") != std::string::npos, run.err);
  CHECK(run.err.find("operator 'q1_k1k'") == std::string::npos);
  std::size_t written = 0;
  for (const query_variant& q : setquery_variants()) {
    if (q.family != "Q1" || q.id == "Q1_K100K" || q.id == "Q1_K1K") continue;
    CAPTURE(q.id);
    CHECK(read_file(f.results + "/" + q.id + ".csv") == read_file(f.expected + "/" + q.id + ".csv"));
    ++written;
  }
  CHECK(written == 10);
}

TEST_CASE("setquery.frames_shared_by_several_blocks_answer_as_the_reference") {
  // 7 blocks and a topic of 2 frames: each frame is shared by 4 items, each walking a share of its pages
  // (on the device, this keeps every block busy when the topic holds fewer frames than there are blocks).
  host_run_fixture f;
  const std::vector<std::string> shared = {"--set", "runtime.executor=host",  "--set", "runtime.blocks=7",
                                           "--set", "topics.bench.capacity=2"};
  for (const std::string_view family : query_families) {
    CAPTURE(family);
    std::vector<std::string> plan_args = shared;
    plan_args.push_back("--plan");
    auto plan = f.run(family, plan_args);
    REQUIRE_MESSAGE(plan.exit_code == 0, plan.err);
    CHECK_MESSAGE(plan.out.find("each frame shared by 4 items") != std::string::npos, plan.out);
    std::vector<std::string> run_args = shared;
    run_args.push_back("-q");
    auto run = f.run(family, run_args);
    CHECK_MESSAGE(run.exit_code == 0, run.err);
    CHECK(f.compare(family) > 0);
    // Spreading a round's idle warps over the items that compute: a frame's parts then run on thread counts
    // that differ from item to item and round to round; the answers stay the reference's.
    std::filesystem::remove_all(f.results);
    std::filesystem::create_directories(f.results);
    run_args.insert(run_args.end(), {"--set", "runtime.spread_warps=on"});
    auto spread = f.run(family, run_args);
    CHECK_MESSAGE(spread.exit_code == 0, spread.err);
    CHECK(f.compare(family) > 0);
  }
}
