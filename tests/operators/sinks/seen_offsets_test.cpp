// Tests of the seen-offsets bitmap: concurrent inserts, leaf and word boundaries, the overflow set.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "operators/sinks/seen_offsets.hpp"

using namespace xf;

TEST_CASE("operators.seen_offsets_concurrent_inserts") {
  seen_offsets seen;
  constexpr std::uint64_t count = 1 << 20;
  constexpr unsigned threads = 8;
  std::atomic<std::uint64_t> fresh{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    // Every thread inserts every offset: exactly one insert per offset may report it new.
    pool.emplace_back([&] {
      std::uint64_t mine = 0;
      for (std::uint64_t o = 0; o < count; ++o) mine += seen.insert(o) ? 1 : 0;
      fresh += mine;
    });
  }
  for (auto& th : pool) th.join();
  CHECK(fresh == count);
  CHECK(seen.missing_below(count).count == 0);
  CHECK(seen.missing_below(count + 5).count == 5);
  CHECK(seen.missing_below(count + 5).first == count);
}

TEST_CASE("operators.seen_offsets_missing_across_boundaries") {
  seen_offsets seen;
  const std::uint64_t leaf = seen_offsets::leaf_offsets;
  // Two leaves and a bit, with holes at a word edge, a leaf edge, and one leaf never touched.
  const std::uint64_t limit = 3 * leaf + 70;
  for (std::uint64_t o = 0; o < limit; ++o) {
    if (o == 63 || o == 64 || o == leaf - 1 || o == leaf || (o >= 2 * leaf && o < 3 * leaf)) continue;
    seen.insert(o);
  }
  const auto m = seen.missing_below(limit);
  CHECK(m.count == 4 + leaf);
  CHECK(m.first == 63);
  CHECK(seen.contains(62));
  CHECK_FALSE(seen.contains(63));
  CHECK_FALSE(seen.contains(2 * leaf + 5));
  CHECK(seen.missing_below(63).count == 0);
  CHECK_FALSE(seen.missing_below(63).first.has_value());
}

TEST_CASE("operators.seen_offsets_beyond_the_bitmap") {
  seen_offsets seen;
  const std::uint64_t far = seen_offsets::bitmap_offsets + 10;
  CHECK(seen.insert(far));
  CHECK_FALSE(seen.insert(far));
  CHECK(seen.contains(far));
  CHECK(seen.insert(~std::uint64_t{0}));
}

TEST_CASE("operators.seen_offsets_missing_from_a_resume_point") {
  // A resumed verify sink counts losses from its resume offset: offsets below it are not missing, however
  // the boundary falls on words, leaves and the overflow set.
  seen_offsets seen;
  const std::uint64_t leaf = seen_offsets::leaf_offsets;
  for (std::uint64_t o = 70; o < 3 * leaf; ++o)
    if (o != 100 && o != leaf + 5) seen.insert(o);
  CHECK(seen.missing_below(3 * leaf).count == 72);  // 0..69, 100 and leaf + 5
  auto m = seen.missing_in(70, 3 * leaf);
  CHECK(m.count == 2);
  CHECK(m.first == std::optional<std::uint64_t>(100));
  m = seen.missing_in(101, 3 * leaf);
  CHECK(m.count == 1);
  CHECK(m.first == std::optional<std::uint64_t>(leaf + 5));
  CHECK(seen.missing_in(leaf + 6, 3 * leaf).count == 0);
  CHECK(seen.missing_in(3 * leaf, 3 * leaf).count == 0);
  m = seen.missing_in(3 * leaf - 1, 3 * leaf + 10);  // an untouched leaf counts from the resume offset
  CHECK(m.count == 10);
  CHECK(m.first == std::optional<std::uint64_t>(3 * leaf));
  const std::uint64_t high = seen_offsets::bitmap_offsets + 7;
  seen.insert(high);
  m = seen.missing_in(high, high + 3);
  CHECK(m.count == 2);
  CHECK(m.first == std::optional<std::uint64_t>(high + 1));
}
