// The auto partitions' controller against a simulated kernel: each round every operator runs one item,
// an item of operator i with N warps costs work_i / N + contention_i · N cycles, the round takes the
// slowest item (1 cycle = 1 ns here).
#include <doctest/doctest.h>

#include "framework/plan/partition_tuner.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

using namespace xf;

namespace {

struct simulated_kernel {
  std::vector<double> work, contention;
  std::vector<std::uint32_t> warps;
  std::vector<cost_total> totals;
  double carry_ns = 0;

  double cost(std::size_t i, std::uint32_t n) const { return work[i] / n + contention[i] * n; }
  double round_ns(const std::vector<std::uint32_t>& w) const {
    double r = 0;
    for (std::size_t i = 0; i < w.size(); ++i) r = std::max(r, cost(i, w[i]));
    return r;
  }
  /// Runs `ms` milliseconds of rounds under the current partition.
  void run(double ms) {
    carry_ns += ms * 1e6;
    const double round = round_ns(warps);
    const auto rounds = static_cast<std::uint64_t>(carry_ns / round);
    carry_ns -= double(rounds) * round;
    for (std::size_t i = 0; i < warps.size(); ++i) {
      totals[i].items += rounds;
      totals[i].cycles += static_cast<std::uint64_t>(std::llround(cost(i, warps[i]) * double(rounds)));
    }
  }
  std::uint32_t best_first(std::uint32_t block) const {  // two operators: the best split, by trying all
    std::uint32_t best = 1;
    for (std::uint32_t a = 1; a < block; ++a)
      if (round_ns({a, block - a}) < round_ns({best, block - best})) best = a;
    return best;
  }
};

tuner_settings two_ops(partition_policy policy, std::uint32_t block = 32) {
  tuner_settings s;
  s.policy = policy;
  s.block_warps = block;
  s.min_warps = {1, 1};
  s.initial = {block / 2, block - block / 2};
  return s;
}

/// Steps the tuner every millisecond for `ms`, applying what it asks for (adopted at the next step).
void drive(partition_tuner& tuner, simulated_kernel& k, double& now, double ms) {
  for (double end = now + ms; now < end; now += 1) {
    k.run(1);
    if (auto w = tuner.step(now, k.totals, true)) k.warps = *w;
  }
}

}  // namespace

TEST_CASE("tuner.schedule_covers_each_operators_range_within_the_minimums") {
  tuner_settings s = two_ops(partition_policy::auto_once);
  s.min_warps = {4, 1};
  const auto schedule = partition_tuner::make_schedule(s);
  CHECK(schedule.size() >= 8);
  std::uint32_t lowest = 32, highest = 0;
  for (const auto& w : schedule) {
    CHECK(w.size() == 2);
    CHECK(w[0] + w[1] == 32);
    CHECK(w[0] >= 4);
    CHECK(w[1] >= 1);
    lowest = std::min(lowest, w[0]);
    highest = std::max(highest, w[0]);
  }
  CHECK(lowest == 4);
  CHECK(highest == 31);
  s.min_warps = {1, 1, 1};
  s.initial = {11, 11, 10};
  for (const auto& w : partition_tuner::make_schedule(s))
    CHECK(std::accumulate(w.begin(), w.end(), 0u) == 32);
}

TEST_CASE("tuner.auto_finds_the_best_split_of_two_operators") {
  // A light operator (data-bound: little work, falls off slowly) and a heavy one.
  for (double heavy : {4000.0, 16000.0, 64000.0}) {
    simulated_kernel k{{2000, heavy}, {20, 10}, {16, 16}, {{}, {}}};
    partition_tuner tuner(two_ops(partition_policy::auto_once));
    double now = 0;
    drive(tuner, k, now, 2000);
    CAPTURE(heavy);
    REQUIRE(tuner.done());
    REQUIRE(tuner.history().size() == 1);
    const tuning_record& r = tuner.history()[0];
    CHECK(r.reason == "start");
    CHECK(r.sample_items >= 3200);
    CHECK(r.coarse_windows == tuner.schedule().size());
    CHECK(r.samples.size() > r.coarse_windows);  // the local stage measured more
    CHECK(r.local_rounds >= 1);
    REQUIRE(r.chosen.has_value());
    const std::uint32_t best = k.best_first(32);
    // Within 5% of the best split's round time (the tuner's target, here against the simulated truth).
    CHECK(k.round_ns(k.warps) <= 1.05 * k.round_ns({best, 32 - best}));
    CHECK(k.warps == tuner.partition());
    CHECK(r.result() == k.warps);
    CHECK_FALSE(r.fallback.has_value());  // the models found it; no sampled partition beat them
  }
}

TEST_CASE("tuner.auto_online_tunes_again_when_an_operators_cost_changes") {
  simulated_kernel k{{2000, 4000}, {20, 10}, {16, 16}, {{}, {}}};
  tuner_settings s = two_ops(partition_policy::auto_online);
  s.tuning.retune_hold_ms = 50;
  partition_tuner tuner(s);
  double now = 0;
  drive(tuner, k, now, 1000);
  REQUIRE(tuner.history().size() == 1);
  REQUIRE_FALSE(tuner.done());
  const std::vector<std::uint32_t> first = k.warps;
  drive(tuner, k, now, 1000);
  CHECK(tuner.history().size() == 1);  // steady costs: no new tuning
  k.work = {2000, 64000};              // the second operator gets 16x heavier
  const double changed_at = now;
  drive(tuner, k, now, 2000);
  REQUIRE(tuner.history().size() == 2);
  const tuning_record& r = tuner.history()[1];
  CHECK(r.reason.find("spread") != std::string::npos);
  CHECK(r.start_ms - changed_at >= 50);  // held for retune_hold_ms first
  CHECK(r.start_ms - changed_at <= 200);
  REQUIRE(r.chosen.has_value());
  CHECK(r.end_ms - changed_at < 1000);  // back on a tuned partition within a second
  const std::uint32_t best = k.best_first(32);
  CHECK(k.round_ns(k.warps) <= 1.05 * k.round_ns({best, 32 - best}));
  CHECK(k.warps != first);
}

TEST_CASE("tuner.a_choice_must_beat_the_starting_partition") {
  // After the choice is measured in place, the starting partition (16:16) is measured for as long, and the
  // choice is kept only with a round shorter by more than the fallback margin. `flip` changes the
  // kernel's costs the moment the check starts, as a stream whose rate moves between windows would.
  for (const bool flip : {false, true}) {
    CAPTURE(flip);
    simulated_kernel k{{2000, 16000}, {20, 10}, {16, 16}, {{}, {}}};
    partition_tuner tuner(two_ops(partition_policy::auto_once));
    double now = 0;
    bool checking = false;
    for (; now < 3000 && !tuner.done(); now += 1) {
      k.run(1);
      if (auto w = tuner.step(now, k.totals, true)) {
        k.warps = *w;
        const tuning_record& r = tuner.history().back();
        if (r.chosen && !checking && *w == std::vector<std::uint32_t>{16, 16}) {
          checking = true;
          if (flip) k.work = {2000, 2000};  // now the even split is the better one
        }
      }
    }
    REQUIRE(tuner.done());
    REQUIRE(checking);
    const tuning_record& r = tuner.history()[0];
    REQUIRE(r.initial.has_value());
    CHECK(r.initial->warps == std::vector<std::uint32_t>{16, 16});
    CHECK(r.candidate().warps != r.initial->warps);
    CHECK(r.kept_initial == flip);
    CHECK(r.result() == (flip ? std::vector<std::uint32_t>{16, 16} : r.candidate().warps));
    CHECK(k.warps == r.result());
    CHECK(tuner.partition() == r.result());
  }
}

TEST_CASE("tuner.no_check_when_the_choice_is_the_starting_partition") {
  // Two alike operators: the best split is the even one the run starts with; nothing to check.
  simulated_kernel k{{4000, 4000}, {10, 10}, {16, 16}, {{}, {}}};
  partition_tuner tuner(two_ops(partition_policy::auto_once));
  double now = 0;
  drive(tuner, k, now, 2000);
  REQUIRE(tuner.done());
  const tuning_record& r = tuner.history()[0];
  CHECK(r.result() == std::vector<std::uint32_t>{16, 16});
  CHECK_FALSE(r.initial.has_value());
  CHECK_FALSE(r.kept_initial);
}

TEST_CASE("tuner.one_operator_gets_every_warp_without_sampling") {
  tuner_settings s;
  s.policy = partition_policy::auto_once;
  s.block_warps = 16;
  s.min_warps = {2};
  s.initial = {16};
  partition_tuner tuner(s);
  CHECK_FALSE(tuner.step(0, {{}}, true).has_value());
  CHECK(tuner.done());
  CHECK(tuner.history().empty());
  s.initial = {8};  // an initial partition that leaves warps idle is completed
  partition_tuner again(s);
  CHECK(again.step(0, {{}}, true) == std::vector<std::uint32_t>{16});
}

TEST_CASE("tuner.measures_nothing_until_every_block_adopted") {
  simulated_kernel k{{2000, 4000}, {20, 10}, {16, 16}, {{}, {}}};
  partition_tuner tuner(two_ops(partition_policy::auto_once));
  auto first = tuner.step(0, k.totals, true);
  REQUIRE(first.has_value());
  for (double now = 1; now < 500; now += 1) {
    k.run(1);
    CHECK_FALSE(tuner.step(now, k.totals, false).has_value());
  }
  CHECK(tuner.history().at(0).samples.empty());
}

TEST_CASE("tuner.a_starved_operator_still_gets_a_partition") {
  // The second operator never runs an item (its input never comes): windows end at max_window_ms, its
  // model is unknown, and the choice still gives it warps.
  tuner_settings s = two_ops(partition_policy::auto_once);
  s.max_window_ms = 5;
  partition_tuner tuner(s);
  std::vector<cost_total> totals(2);
  std::optional<std::vector<std::uint32_t>> w;
  for (double now = 0; now < 1000 && !tuner.done(); now += 1) {
    totals[0].items += 10;
    totals[0].cycles += 10 * 5000;
    tuner.step(now, totals, true);
  }
  REQUIRE(tuner.done());
  const tuning_record& r = tuner.history()[0];
  CHECK_FALSE(r.fits[1].model.finite());
  CHECK(r.choice.warps[1] >= 1);
  CHECK(r.choice.warps[0] + r.choice.warps[1] == 32);
}

TEST_CASE("tuner.refuses_what_it_cannot_tune") {
  tuner_settings s = two_ops(partition_policy::uniform);
  CHECK_THROWS_AS(partition_tuner{s}, std::invalid_argument);
  s = two_ops(partition_policy::auto_once, 4);
  s.min_warps = {3, 3};
  CHECK_THROWS_AS(partition_tuner{s}, std::invalid_argument);
}
