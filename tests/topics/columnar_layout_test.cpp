// Columnar frames: the page map, the index pages (zones and bloom filters) and the skip decisions made
// from them. A skipped page never changes an answer: the predicates' results over the pages kept equal
// those over every row.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "framework/core/frame.hpp"
#include "framework/core/part_stacks.hpp"
#include "topics/columnar_index.hpp"
#include "topics/columnar_layout.hpp"

namespace {

using namespace xf;

columnar_geometry geometry_of(std::vector<column_layout> columns, std::uint32_t rows) {
  columnar_geometry g{};
  const std::string problem = make_columnar_geometry(columns, rows, g);
  REQUIRE_MESSAGE(problem.empty(), problem);
  return g;
}

std::string problem_of(std::vector<column_layout> columns, std::uint32_t rows) {
  columnar_geometry g{};
  return make_columnar_geometry(columns, rows, g);
}

/// A frame buffer for geometry g, aligned as a topic's frames are, filled with `fill` (what a page holds
/// past its valid rows must not count).
std::vector<std::uint64_t> frame_for(const columnar_geometry& g, std::uint8_t fill = 0xab) {
  std::vector<std::uint64_t> words(g.frame_bytes() / 8);
  std::memset(words.data(), fill, g.frame_bytes());
  return words;
}

std::byte* bytes(std::vector<std::uint64_t>& words) {
  return reinterpret_cast<std::byte*>(words.data());
}

template <class T>
void put(const columnar_geometry& g, std::byte* frame, std::uint32_t c, std::uint32_t row, T value) {
  std::memcpy(frame + g.value_offset(c, row), &value, sizeof(T));
}

}  // namespace

TEST_CASE("columnar.page_map_of_set_query_like_columns") {
  // 13 u32 columns of 8192 rows: 8 pages each; 64 + 104 · 32 bytes of index fit one page.
  const columnar_geometry g = geometry_of(std::vector<column_layout>(13), 8192);
  CHECK(g.column_count == 13);
  CHECK(g.index_pages == 1);
  CHECK(g.total_pages == 1 + 13 * 8);
  CHECK(g.frame_bytes() == std::uint64_t{105} * 4096);
  for (std::uint32_t c = 0; c < 13; ++c) {
    CHECK(g.columns[c].rows_per_page == 1024);
    CHECK(g.columns[c].pages == 8);
    CHECK(g.columns[c].first_page == 1 + 8 * c);
    for (std::uint32_t p = 0; p < 8; ++p) CHECK(g.page_offset(c, p) % 4096 == 0);
    CHECK(g.entry_offset(c, 0) == 64 + std::uint64_t{c} * 8 * 32);
  }
  CHECK(g.value_offset(2, 1500) == (1 + 16 + 1) * 4096 + 476 * 4);
  CHECK(g.page_of_row(2, 1500) == 1);
  CHECK(g.rows_in_page(0, 7, 8192) == 1024);
  CHECK(g.rows_in_page(0, 7, 8000) == 8000 - 7 * 1024);
  CHECK(g.rows_in_page(0, 7, 7168) == 0);
  CHECK(g.pages_for_rows(0, 7169) == 8);
}

TEST_CASE("columnar.character_and_mixed_columns") {
  column_layout chars20;
  chars20.element = element_type::u8;
  chars20.chars = 20;
  column_layout f64;
  f64.element = element_type::f64;
  const columnar_geometry g = geometry_of({chars20, f64}, 1000);
  CHECK(g.columns[0].value_bytes == 20);
  CHECK(g.columns[0].rows_per_page == 204);  // a value never straddles two pages
  CHECK(g.columns[0].pages == 5);
  CHECK(g.rows_in_page(0, 4, 1000) == 1000 - 4 * 204);
  CHECK(g.rows_in_page(0, 5, 1000) == 0);
  CHECK(g.columns[1].rows_per_page == 512);
  CHECK(g.columns[1].pages == 2);
  CHECK(g.columns[1].first_page == g.index_pages + 5);
  CHECK(g.value_offset(0, 204) == g.page_offset(0, 1));
}

TEST_CASE("columnar.index_pages_round_up_exactly") {
  // 126 pages of entries (32 bytes each) after the 64-byte header fill one page exactly; one more page of
  // rows needs a second index page.
  CHECK(geometry_of({column_layout{}}, 126 * 1024).index_pages == 1);
  CHECK(geometry_of({column_layout{}}, 126 * 1024 + 1).index_pages == 2);
  column_layout bloomed;
  bloomed.bloom_bits = 8192;  // a 1 KiB filter after each 32-byte entry
  bloomed.bloom_hashes = 6;
  const columnar_geometry g = geometry_of({bloomed}, 4 * 1024);
  CHECK(g.columns[0].entry_bytes == 32 + 1024);
  CHECK(g.index_pages == 2);  // 64 + 4 · 1056 = 4288 bytes
}

TEST_CASE("columnar.impossible_layouts_say_why") {
  CHECK(problem_of({}, 8) == "a columnar topic needs at least one column");
  CHECK(problem_of(std::vector<column_layout>(33), 8).find("at most 32") != std::string::npos);
  CHECK(problem_of({column_layout{}}, 0) == "rows_per_frame must be at least 1");
  column_layout wide;
  wide.element = element_type::u8;
  wide.chars = 257;
  CHECK(problem_of({wide}, 8).find("char(257) is wider than char(256)") != std::string::npos);
  column_layout odd_bloom;
  odd_bloom.bloom_bits = 100;
  odd_bloom.bloom_hashes = 3;
  CHECK(problem_of({odd_bloom}, 8).find("bloom_bits 100 is not a power of two") != std::string::npos);
  column_layout no_hashes;
  no_hashes.bloom_bits = 1024;
  CHECK(problem_of({no_hashes}, 8).find("bloom_hashes 0") != std::string::npos);
  column_layout hashes_only;
  hashes_only.bloom_hashes = 4;
  CHECK(problem_of({hashes_only}, 8).find("bloom_hashes without bloom_bits") != std::string::npos);
  CHECK(problem_of({column_layout{}}, 1u << 30).find("more than the 1 GiB") != std::string::npos);
}

TEST_CASE("columnar.zones_count_valid_rows_in_their_own_type") {
  column_layout i32;
  i32.element = element_type::i32;
  column_layout u32;
  u32.element = element_type::u32;
  const columnar_geometry g = geometry_of({i32, u32}, 2048);
  auto words = frame_for(g);  // rows past 1500 hold 0xabab…: they must not count
  std::byte* frame = bytes(words);
  for (std::uint32_t r = 0; r < 1500; ++r) {
    put<std::int32_t>(g, frame, 0, r, static_cast<std::int32_t>(r) - 700);
    put<std::uint32_t>(g, frame, 1, r, r == 3 ? 0xffffffffu : r);
  }
  build_columnar_index(g, frame, 1500);
  CHECK(columnar_header(frame).magic == columnar_magic);
  CHECK(columnar_header(frame).rows == 1500);
  CHECK(columnar_header(frame).flags == columnar_frame_header::index_valid);
  const zone_entry& first = page_zone(g, frame, 0, 0);
  CHECK(first.rows == 1024);
  CHECK(zone_value<std::int32_t>(first.min_bits) == -700);  // signed order, not the bits'
  CHECK(zone_value<std::int32_t>(first.max_bits) == 323);
  const zone_entry& last = page_zone(g, frame, 0, 1);
  CHECK(last.rows == 476);
  CHECK(zone_value<std::int32_t>(last.max_bits) == 799);
  CHECK(zone_value<std::uint32_t>(page_zone(g, frame, 1, 0).max_bits) == 0xffffffffu);
  CHECK(zone_value<std::uint32_t>(page_zone(g, frame, 1, 0).min_bits) == 0);
  CHECK(zone_value<std::uint32_t>(page_zone(g, frame, 1, 1).min_bits) == 1024);
  // A frame of fewer rows leaves later pages empty: never read.
  build_columnar_index(g, frame, 1000);
  CHECK(page_zone(g, frame, 0, 1).rows == 0);
  CHECK_FALSE(page_may_match_range<std::int32_t>(g, frame, 0, 1, -1000, 1000));
}

TEST_CASE("columnar.zones_of_every_element_type") {
  std::mt19937_64 rng(5);
  for (element_type e : all_element_types) {
    CAPTURE(name_of(e));
    column_layout l;
    l.element = e;
    l.bloom_bits = 2048;
    l.bloom_hashes = 3;
    const columnar_geometry g = geometry_of({l}, 3 * (4096 / static_cast<std::uint32_t>(size_of(e))) - 5);
    auto words = frame_for(g);
    std::byte* frame = bytes(words);
    visit_element(e, [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> values(g.rows_per_frame);
      for (std::uint32_t r = 0; r < g.rows_per_frame; ++r) {
        const std::uint64_t bits = rng();
        std::memcpy(&values[r], &bits, sizeof(T));
        if constexpr (std::is_floating_point_v<T>)
          if (values[r] != values[r]) values[r] = T(r);  // NaN has its own case
        put(g, frame, 0, r, values[r]);
      }
      build_columnar_index(g, frame, g.rows_per_frame);
      const std::uint32_t rpp = g.columns[0].rows_per_page;
      for (std::uint32_t p = 0; p < g.columns[0].pages; ++p) {
        const auto first = values.begin() + p * rpp;
        const auto last = values.begin() + std::min<std::uint32_t>((p + 1) * rpp, g.rows_per_frame);
        const zone_entry& z = page_zone(g, frame, 0, p);
        CHECK(z.rows == static_cast<std::uint32_t>(last - first));
        CHECK(zone_value<T>(z.min_bits) == *std::min_element(first, last));
        CHECK(zone_value<T>(z.max_bits) == *std::max_element(first, last));
        for (auto i = 0; i < last - first; i += 97) CHECK(page_may_hold(g, frame, 0, p, first[i]));
      }
    });
  }
}

TEST_CASE("columnar.floats_nan_and_signed_zero") {
  column_layout f32;
  f32.element = element_type::f32;
  f32.bloom_bits = 1024;
  f32.bloom_hashes = 4;
  const columnar_geometry g = geometry_of({f32}, 4096);
  auto words = frame_for(g, 0);
  std::byte* frame = bytes(words);
  for (std::uint32_t r = 0; r < 4096; ++r) put<float>(g, frame, 0, r, 10.0f + static_cast<float>(r % 1024));
  put<float>(g, frame, 0, 5, std::numeric_limits<float>::quiet_NaN());  // page 0
  put<float>(g, frame, 0, 1024 + 9, -0.0f);                             // page 1
  build_columnar_index(g, frame, 4096);
  CHECK((page_zone(g, frame, 0, 0).flags & zone_entry::has_nan) != 0);
  CHECK(page_may_match_range(g, frame, 0, 0, -5.0f, -1.0f));  // a page with NaN is never skipped
  CHECK_FALSE(page_may_match_range(g, frame, 0, 2, -5.0f, -1.0f));
  CHECK(page_may_hold(g, frame, 0, 1, 0.0f));  // +0.0 finds −0.0: zone and bloom alike
  CHECK(page_may_hold(g, frame, 0, 1, -0.0f));
  CHECK_FALSE(page_may_hold(g, frame, 0, 2, 0.0f));
}

TEST_CASE("columnar.range_skips_exactly_the_pages_whose_zone_misses") {
  std::mt19937_64 rng(7);
  column_layout i64;
  i64.element = element_type::i64;
  const columnar_geometry g = geometry_of({i64}, 64 * 512);
  auto words = frame_for(g);
  std::byte* frame = bytes(words);
  std::vector<std::int64_t> values(g.rows_per_frame);
  for (std::uint32_t r = 0; r < g.rows_per_frame; ++r) {
    // Sorted-ish runs (as KSEQ is) with noise, so some pages are disjoint from a range and some are not.
    values[r] = static_cast<std::int64_t>(r) * 10 - 100'000 + static_cast<std::int64_t>(rng() % 4000);
    put(g, frame, 0, r, values[r]);
  }
  build_columnar_index(g, frame, g.rows_per_frame);
  for (int trial = 0; trial < 300; ++trial) {
    std::int64_t lo = static_cast<std::int64_t>(rng() % 400'000) - 150'000;
    std::int64_t hi = lo + static_cast<std::int64_t>(rng() % 20'000);
    if (trial % 17 == 0) std::swap(lo, hi);  // an empty range matches nothing
    std::int64_t all = 0, kept = 0;
    std::uint32_t skipped = 0;
    for (std::uint32_t p = 0; p < g.columns[0].pages; ++p) {
      const bool keep = page_may_match_range(g, frame, 0, p, lo, hi);
      std::int64_t lo_page = std::numeric_limits<std::int64_t>::max(),
                   hi_page = std::numeric_limits<std::int64_t>::min();
      for (std::uint32_t i = 0; i < 512; ++i) {
        const std::int64_t v = values[p * 512 + i];
        lo_page = std::min(lo_page, v);
        hi_page = std::max(hi_page, v);
        if (lo <= v && v <= hi) {
          all += v;
          if (keep) kept += v;
        }
      }
      CHECK(keep == (lo <= hi && lo <= hi_page && lo_page <= hi));  // the zone test is exact on its zone
      skipped += keep ? 0 : 1;
    }
    CHECK(kept == all);  // skipping never changes the answer
    if (trial == 0) CHECK(skipped > 0);
  }
}

TEST_CASE("columnar.character_prefixes_keep_every_page_that_may_match") {
  column_layout chars12;
  chars12.element = element_type::u8;
  chars12.chars = 12;
  const columnar_geometry g = geometry_of({chars12}, 2 * 341);
  auto words = frame_for(g, 0);
  std::byte* frame = bytes(words);
  auto set = [&](std::uint32_t r, const char* text) {
    std::byte value[12] = {};
    std::memcpy(value, text, std::min<std::size_t>(std::strlen(text), 12));
    std::memcpy(frame + g.value_offset(0, r), value, 12);
  };
  for (std::uint32_t r = 0; r < 341; ++r) set(r, "ABCDEFGHxxxx");  // page 0: one 8-byte prefix
  for (std::uint32_t r = 341; r < 682; ++r) set(r, "ZZZZZZZZ0000");
  build_columnar_index(g, frame, 682);
  std::byte lo[12] = {}, hi[12] = {};
  std::memcpy(lo, "ABCDEFGHzzzz", 12);  // greater than every value of page 0, same prefix: kept
  std::memcpy(hi, "ABCDEFGHzzzz", 12);
  CHECK(chars_zone_may_match(page_zone(g, frame, 0, 0), lo, hi, 12));
  CHECK_FALSE(chars_zone_may_match(page_zone(g, frame, 0, 1), lo, hi, 12));
  std::memcpy(lo, "M", 1);
  std::memcpy(hi, "N", 1);
  CHECK_FALSE(chars_zone_may_match(page_zone(g, frame, 0, 0), lo, hi, 12));
  CHECK_FALSE(chars_zone_may_match(page_zone(g, frame, 0, 1), lo, hi, 12));
}

TEST_CASE("columnar.bloom_has_no_false_negatives_and_its_theoretical_false_positive_rate") {
  // 1024 keys in 8192 bits with 6 hashes: (1 − e^(−6·1024/8192))^6 ≈ 2.16 %.
  const std::uint32_t bits = 8192, k = 6, n = 1024;
  const double theory = std::pow(1.0 - std::exp(-double(k) * n / bits), double(k));
  std::mt19937_64 rng(11);
  std::uint64_t false_positives = 0, probes = 0;
  for (int filter = 0; filter < 40; ++filter) {
    std::vector<std::uint64_t> words(bits / 64, 0);
    std::vector<std::uint32_t> keys(n);
    for (auto& key : keys) {
      key = static_cast<std::uint32_t>(rng() >> 33) * 2;  // even keys in; odd keys never are
      bloom_add(words.data(), bits, k, bloom_hash_of(key));
    }
    for (std::uint32_t key : keys) CHECK(bloom_may_contain(words.data(), bits, k, bloom_hash_of(key)));
    for (int i = 0; i < 5000; ++i) {
      const auto absent = static_cast<std::uint32_t>(rng() >> 33) * 2 + 1;
      false_positives += bloom_may_contain(words.data(), bits, k, bloom_hash_of(absent)) ? 1 : 0;
      ++probes;
    }
  }
  const double rate = double(false_positives) / double(probes);
  INFO("false-positive rate " << rate << ", theory " << theory);
  CHECK(rate <= 2 * theory);
  CHECK(rate >= theory / 2);  // the filter is doing its job, not all zeros or all ones
}

TEST_CASE("columnar.point_predicates_skip_with_the_bloom_and_keep_every_match") {
  column_layout u64;
  u64.element = element_type::u64;
  u64.bloom_bits = 4096;
  u64.bloom_hashes = 5;
  const columnar_geometry g = geometry_of({u64}, 16 * 512);
  auto words = frame_for(g);
  std::byte* frame = bytes(words);
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> values(g.rows_per_frame);
  for (std::uint32_t r = 0; r < g.rows_per_frame; ++r) {
    values[r] = rng() % 50'000;  // every page spans nearly the whole range: only the bloom can skip
    put(g, frame, 0, r, values[r]);
  }
  build_columnar_index(g, frame, g.rows_per_frame);
  std::uint32_t skipped = 0;
  for (std::uint64_t value = 0; value < 2000; ++value) {
    for (std::uint32_t p = 0; p < g.columns[0].pages; ++p) {
      const bool holds = std::find(values.begin() + p * 512, values.begin() + (p + 1) * 512, value) !=
                         values.begin() + (p + 1) * 512;
      const bool keep = page_may_hold(g, frame, 0, p, value);
      if (holds) CHECK(keep);
      skipped += keep ? 0 : 1;
    }
  }
  CHECK(skipped > 2000 * 16 / 2);  // most pages lack most values
}

TEST_CASE("columnar.parts_join_when_they_overlap_touch_or_lie_within_the_gap") {
  using parts = std::vector<xf::frame_range>;
  const auto joined = [](parts in, std::size_t first, std::uint64_t gap) {
    xf::join_ranges(in, first, gap);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (const xf::frame_range& r : in) out.emplace_back(r.offset, r.bytes);
    return out;
  };
  using pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  // Unsorted input: a touch, a contained range, gaps of 4096 bytes (twice) and one of 4097.
  const parts in = {{20480, 4096}, {0, 4096}, {4096, 4096}, {6000, 100}, {12288, 4096}, {28673, 10}};
  CHECK(joined(in, 0, 0) == pairs{{0, 8192}, {12288, 4096}, {20480, 4096}, {28673, 10}});
  CHECK(joined(in, 0, 4095) == joined(in, 0, 0));
  CHECK(joined(in, 0, 4096) == pairs{{0, 24576}, {28673, 10}});
  CHECK(joined(in, 0, 4097) == pairs{{0, 28683}});
  // Ranges before `first` are left as they are.
  parts with_head = {{100, 1}, {50, 1}};
  with_head.insert(with_head.end(), in.begin(), in.end());
  xf::join_ranges(with_head, 2, 0);
  REQUIRE(with_head.size() == 6);
  CHECK(with_head[0].offset == 100);
  CHECK(with_head[1].offset == 50);
  CHECK(with_head[2].offset == 0);
  CHECK(with_head[2].bytes == 8192);
  parts none;
  xf::join_ranges(none, 0, 0);
  CHECK(none.empty());
}

TEST_CASE("columnar.clip_ranges_cuts_at_the_published_end") {
  std::vector<xf::frame_range> in = {{0, 4096}, {8192, 8192}, {16384, 4096}, {20480, 10}};
  xf::clip_ranges(in, 12288);
  REQUIRE(in.size() == 2);
  CHECK(in[0].bytes == 4096);
  CHECK(in[1].offset == 8192);
  CHECK(in[1].bytes == 4096);
}

namespace {

using frame_parts = std::vector<std::vector<xf::frame_range>>;

/// The bytes of each frame a split covers, as (frame, offset, bytes) of its joined ranges, sorted; the
/// parts given to it the same way. Equal when the split kept every byte once.
std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> covered(
    const std::vector<xf::part_stack>& stacks, const frame_parts& rest, std::uint64_t count) {
  frame_parts frames(count);
  for (const xf::part_stack& s : stacks)
    for (std::uint64_t k = s.first; k < s.first + s.frames; ++k) frames[k].push_back(s.part);
  for (std::uint64_t k = 0; k < count; ++k) frames[k].insert(frames[k].end(), rest[k].begin(), rest[k].end());
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> out;
  for (std::uint64_t k = 0; k < count; ++k) {
    std::uint64_t bytes = 0, joined = 0;
    for (const xf::frame_range& r : frames[k]) bytes += r.bytes;
    xf::join_ranges(frames[k], 0, 0);
    for (const xf::frame_range& r : frames[k]) {
      out.emplace_back(k, r.offset, r.bytes);
      joined += r.bytes;
    }
    CHECK(bytes == joined);  // no byte twice
  }
  return out;
}

std::vector<xf::part_stack> by_offset(std::vector<xf::part_stack> stacks) {
  std::sort(stacks.begin(), stacks.end(),
            [](const auto& a, const auto& b) { return a.part.offset < b.part.offset; });
  return stacks;
}

}  // namespace

TEST_CASE("columnar.bytes_kept_down_a_run_stack_into_2d_copies") {
  const frame_parts parts = {{{0, 4096}, {8192, 65536}, {100000, 4096}},
                             {{0, 4096}, {8192, 65536}},
                             {{0, 4096}, {8192, 65536}, {200000, 4096}},
                             {{0, 4096}, {8192, 32768}}};
  xf::part_stacker stacker;
  std::vector<xf::part_stack> stacks;
  frame_parts rest;
  stacker.split(parts, 4, 2, stacks, rest);
  // The first 32 KiB of the column are in all four frames, the rest in three: two stacks.
  std::vector<xf::part_stack> s = by_offset(stacks);
  REQUIRE(s.size() == 3);
  CHECK(s[0].first == 0);
  CHECK(s[0].frames == 4);
  CHECK(s[0].part.bytes == 4096);
  CHECK(s[1].frames == 4);
  CHECK(s[1].part.offset == 8192);
  CHECK(s[1].part.bytes == 32768);
  CHECK(s[2].first == 0);
  CHECK(s[2].frames == 3);
  CHECK(s[2].part.offset == 40960);
  CHECK(s[2].part.bytes == 32768);
  REQUIRE(rest.size() >= 4);
  REQUIRE(rest[0].size() == 1);
  CHECK(rest[0][0].offset == 100000);
  CHECK(rest[1].empty());
  REQUIRE(rest[2].size() == 1);
  CHECK(rest[2][0].offset == 200000);
  CHECK(rest[3].empty());
  // Stacks of at least 4 frames: the three-frame piece stays with its frames.
  stacker.split(parts, 4, 4, stacks, rest);
  CHECK(by_offset(stacks).size() == 2);
  CHECK(rest[1].size() == 1);
  CHECK(rest[1][0].offset == 40960);
  // A minimum above the run's length: nothing stacks, every byte stays with its frame.
  stacker.split(parts, 4, 5, stacks, rest);
  CHECK(stacks.empty());
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> expected;
  for (std::uint64_t k = 0; k < 4; ++k)
    for (const xf::frame_range& r : parts[k]) expected.emplace_back(k, r.offset, r.bytes);
  std::sort(expected.begin(), expected.end());
  CHECK(covered(stacks, rest, 4) == expected);
}

TEST_CASE("columnar.a_split_keeps_every_byte_once_on_random_runs") {
  std::mt19937_64 rng(20261127);
  xf::part_stacker stacker;
  std::vector<xf::part_stack> stacks;
  frame_parts rest;
  std::uint64_t stacked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // Up to 150 frames: windows of 64 and a last short one.
    const std::uint64_t count = 1 + rng() % (trial % 10 == 0 ? 150 : 12), pages = 1 + rng() % 24;
    // Parts from a few patterns, so that frames often repeat each other's bytes; never touching.
    frame_parts parts(count);
    std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> expected;
    for (std::uint64_t k = 0; k < count; ++k) {
      std::mt19937_64 pattern(rng() % 4);
      std::uint64_t p = 0;
      while (p < pages) {
        const std::uint64_t len = 1 + pattern() % 3, bytes = std::min(len, pages - p) * 4096 - pattern() % 2;
        if (pattern() % 2) {
          parts[k].push_back({p * 4096, bytes});
          expected.emplace_back(k, p * 4096, bytes);
        }
        p += len + 1;
      }
    }
    std::sort(expected.begin(), expected.end());
    const std::uint64_t min_frames = 1 + rng() % 4;
    stacker.split(parts, count, min_frames, stacks, rest);
    CAPTURE(trial);
    CHECK(covered(stacks, rest, count) == expected);
    for (const xf::part_stack& st : stacks) {
      CHECK(st.frames >= min_frames);
      CHECK(st.first + st.frames <= count);
      CHECK(st.first / 64 == (st.first + st.frames - 1) / 64);  // inside one window
      stacked += st.frames > 1 ? 1 : 0;
    }
  }
  CHECK(stacked > 100);
}
