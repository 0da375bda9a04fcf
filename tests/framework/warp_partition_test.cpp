// Warp partitioning from cost models: eq. (3), rounding, warp moves and every degenerate case.
#include <doctest/doctest.h>

#include "framework/kernel/kernel_catalog.hpp"
#include "framework/kernel/round_steps.hpp"
#include "framework/plan/warp_partition.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

using namespace xf;

TEST_CASE("warp_partition.warps_for_cost_takes_the_first_crossing_of_the_target") {
  SUBCASE("convex, falling then rising: the falling root") {
    // (N − 20)² + 10 = 74 at N = 12 and N = 28.
    CHECK(warps_for_cost({1, -40, 410}, 74, 1, 31) == doctest::Approx(12));
  }
  SUBCASE("already at or below the target at the lower bound") {
    CHECK(warps_for_cost({1, -40, 410}, 500, 1, 31) == 1);
  }
  SUBCASE("never down to the target (minimum 10 at N = 20): the upper bound") {
    CHECK(warps_for_cost({1, -40, 410}, 5, 1, 31) == 31);
  }
  SUBCASE("theta2 = 0: the line's root") {
    CHECK(warps_for_cost({0, -2, 100}, 60, 1, 31) == doctest::Approx(20));
  }
  SUBCASE("theta2 < 0, concave and falling: its positive root") {
    // −N² − N + 100 = 50 at N = (−1 + √201) / 2.
    CHECK(warps_for_cost({-1, -1, 100}, 50, 1, 31) == doctest::Approx((-1 + std::sqrt(201.0)) / 2));
  }
  SUBCASE("no real root: the upper bound") {
    CHECK(warps_for_cost({1, 0, 100}, 50, 1, 31) == 31);
  }
  SUBCASE("rising cost above the target from the start: the upper bound") {
    CHECK(warps_for_cost({0.1, 3, 200}, 50, 1, 31) == 31);
  }
  SUBCASE("a root beyond the upper bound: the upper bound") {
    CHECK(warps_for_cost({0, -1, 100}, 50, 1, 31) == 31);
  }
  SUBCASE("non-finite coefficients: the upper bound") {
    CHECK(warps_for_cost({std::numeric_limits<double>::quiet_NaN(), 0, 0}, 50, 2, 30) == 30);
  }
}

TEST_CASE("warp_partition.eq3_shares_and_rounding_by_hand") {
  // f_a = 200 − 5N reaches 60 at 28 warps, f_b = 100 − 2N at 20: shares 28/48 and 20/48 of 32.
  const std::vector<partition_operator> ops{{{0, -5, 200}, 1}, {{0, -2, 100}, 1}};
  const std::vector<double> shares = equal_cost_shares(ops, 60, 32);
  REQUIRE(shares.size() == 2);
  CHECK(shares[0] == doctest::Approx(32.0 * 28 / 48));
  CHECK(shares[1] == doctest::Approx(32.0 * 20 / 48));
  // 18.67 and 13.33: the larger remainder gets the 32nd warp.
  CHECK(round_partition(shares, ops, 32) == std::vector<std::uint32_t>{19, 13});
}

TEST_CASE("warp_partition.rounding_keeps_the_sum_and_every_minimum") {
  const std::vector<partition_operator> two{{{}, 1}, {{}, 1}};
  CHECK(round_partition(std::vector<double>{0.2, 31.8}, two, 32) == std::vector<std::uint32_t>{1, 31});
  CHECK(round_partition(std::vector<double>{0.0, 32.0}, two, 32) == std::vector<std::uint32_t>{1, 31});
  const std::vector<partition_operator> three{{{}, 1}, {{}, 1}, {{}, 1}};
  CHECK(round_partition(std::vector<double>{10.5, 10.5, 11}, three, 32) ==
        std::vector<std::uint32_t>{11, 10, 11});
  const std::vector<partition_operator> minimums{{{}, 4}, {{}, 1}};
  CHECK(round_partition(std::vector<double>{1, 31}, minimums, 32) == std::vector<std::uint32_t>{4, 28});
  CHECK(round_partition(std::vector<double>{std::nan(""), 8}, two, 8) == std::vector<std::uint32_t>{1, 7});
  const std::vector<partition_operator> too_many{{{}, 12}, {{}, 12}, {{}, 12}};
  CHECK_THROWS_AS(round_partition(std::vector<double>{10, 11, 11}, too_many, 32), std::invalid_argument);
}

TEST_CASE("warp_partition.one_operator_gets_every_warp") {
  const std::vector<partition_operator> one{{{0.5, -30, 600}, 2}};
  const partition_choice c = choose_partition(one, 300, 16);
  CHECK(c.warps == std::vector<std::uint32_t>{16});
  CHECK(c.note.find("one GPU operator") != std::string::npos);
}

TEST_CASE("warp_partition.more_operators_than_warps_is_refused") {
  const std::vector<partition_operator> five(5, partition_operator{{0, -1, 100}, 1});
  CHECK_THROWS_AS(choose_partition(five, 50, 4), std::invalid_argument);
  CHECK_THROWS_AS(choose_partition({}, 50, 4), std::invalid_argument);
}

TEST_CASE("warp_partition.choice_is_the_models_best_split_of_two_operators") {
  // Convex falling costs (a data-intensive and a compute-intensive operator, the paper's FMA-x/FMA-y):
  // the model's minimax split of 32 warps, found by trying all 31, is what choose_partition returns.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> base(1000, 50000), curve(0.0, 40.0);
  for (int trial = 0; trial < 200; ++trial) {
    auto model = [&] {
      const double b0 = base(rng), c2 = curve(rng);
      return cost_model{c2, -2 * c2 * 40 - b0 / 40, b0 + 1600 * c2};  // falls until N = 40 + b0/(80·c2)
    };
    const std::vector<partition_operator> ops{{model(), 1}, {model(), 1}};
    const double f0 = (ops[0].model.at(16) + ops[1].model.at(16)) / 2;
    const partition_choice c = choose_partition(ops, f0, 32);
    double best = HUGE_VAL;
    for (std::uint32_t a = 1; a < 32; ++a) {
      const std::vector<std::uint32_t> w{a, 32 - a};
      best = std::min(best, predicted_round(ops, w));
    }
    CAPTURE(trial);
    CHECK(c.warps[0] + c.warps[1] == 32);
    CHECK(c.predicted == doctest::Approx(best));
    CHECK(c.predicted <= c.eq3_predicted);
  }
}

TEST_CASE("warp_partition.three_operators_never_worse_than_eq3") {
  const std::vector<partition_operator> ops{{{2, -150, 3000}, 2}, {{0, -10, 900}, 1}, {{-1, -20, 2500}, 1}};
  const partition_choice c = choose_partition(ops, 800, 32);
  CHECK(std::accumulate(c.warps.begin(), c.warps.end(), 0u) == 32);
  CHECK(c.warps[0] >= 2);
  CHECK(c.warps[1] >= 1);
  CHECK(c.warps[2] >= 1);
  CHECK(c.predicted <= c.eq3_predicted);
}

TEST_CASE("warp_partition.degenerate_models_are_named_and_still_partitioned") {
  // The first never comes down to f0; the second has no finite model.
  const std::vector<partition_operator> ops{{{1, 0, 5000}, 1},
                                            {{std::numeric_limits<double>::infinity(), 0, 0}, 1}};
  const partition_choice c = choose_partition(ops, 100, 8);
  CHECK(c.warps[0] + c.warps[1] == 8);
  CHECK(c.note.find("operator 0 stays above f0") != std::string::npos);
  CHECK(c.note.find("operator 1 has no finite model") != std::string::npos);
}

TEST_CASE("warp_partition.item_warp_ranges_tile_any_partition") {
  // What the kernel gives each work item when a partition changes: contiguous, disjoint ranges that
  // cover the operator's warps exactly, every item at least one warp, the first ones one more.
  for (std::uint32_t items = 1; items <= 8; ++items)
    for (std::uint32_t warps = items; warps <= 32; ++warps) {
      CAPTURE(items);
      CAPTURE(warps);
      std::uint32_t next = 5;  // the operator's first warp
      std::uint32_t largest = 0, smallest = 32;
      for (std::uint32_t j = 0; j < items; ++j) {
        std::uint32_t begin = 0, count = 0;
        item_warp_range(5, warps, items, j, &begin, &count);
        CHECK(begin == next);
        CHECK(count >= 1);
        next += count;
        largest = std::max(largest, count);
        smallest = std::min(smallest, count);
      }
      CHECK(next == 5 + warps);
      CHECK(largest - smallest <= 1);
    }
}

TEST_CASE("warp_partition.a_spread_round_gives_every_warp_to_the_items_that_compute") {
  // place_round_warps: without spreading an item runs on its own warps; spreading, a round whose computing
  // items leave warps idle hands all of the block's warps to them — contiguous ranges from warp 0 in lane
  // order, never fewer than an item's own, in proportion to them (within one warp).
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::uint32_t block_warps = 1 + rng() % 32;
    const std::uint32_t items = 1 + rng() % std::min<std::uint32_t>(block_warps, 12);
    std::vector<lane_state> lanes(items);
    // A partition: each item its own contiguous warps, together at most the block's.
    std::vector<std::uint32_t> own(items, 1);
    for (std::uint32_t spare = block_warps - items, i = 0; spare > 0 && i < 64; ++i) {
      const std::uint32_t more = rng() % (spare + 1);
      own[rng() % items] += more;
      spare -= more;
    }
    for (std::uint32_t s = 0, next = 0; s < items; ++s) {
      lanes[s].first_warp = next;
      lanes[s].item_warps = own[s];
      lanes[s].round_first_warp = lanes[s].round_warps = 999;  // untouched unless it computes
      next += own[s];
    }
    const std::uint32_t computing = static_cast<std::uint32_t>(rng()) & ((1u << items) - 1);
    CAPTURE(block_warps);
    CAPTURE(items);
    CAPTURE(computing);
    for (const bool spread : {false, true}) {
      std::vector<lane_state> placed = lanes;
      place_round_warps(placed.data(), computing, block_warps, spread);
      std::uint32_t own_sum = 0;
      for (std::uint32_t s = 0; s < items; ++s)
        if ((computing >> s) & 1u) own_sum += own[s];
      const bool spreads = spread && own_sum != 0 && own_sum < block_warps;
      std::uint32_t next = 0;
      for (std::uint32_t s = 0; s < items; ++s) {
        const lane_state& l = placed[s];
        if (((computing >> s) & 1u) == 0) {
          CHECK(l.round_warps == 999);
          continue;
        }
        if (!spreads) {
          CHECK(l.round_first_warp == l.first_warp);
          CHECK(l.round_warps == l.item_warps);
          continue;
        }
        CHECK(l.round_first_warp == next);
        CHECK(l.round_warps >= l.item_warps);
        const std::uint32_t fair = block_warps * l.item_warps / own_sum;
        CHECK(l.round_warps >= fair);
        CHECK(l.round_warps <= fair + 1);
        next += l.round_warps;
      }
      if (spreads) CHECK(next == block_warps);
    }
  }
}
