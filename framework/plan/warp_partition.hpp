// Splitting a block's warps among the kernel's GPU operators from their fitted cost models (the XeFlow
// paper's eqs. (1) and (3)): every operator gets the warps at which its round time would equal a common
// target f0, scaled so they sum to the block's warps, rounded to integers with each operator's minimum,
// then improved one warp at a time while the models predict a shorter round.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "framework/plan/cost_model.hpp"

namespace xf {

struct partition_operator {
  cost_model model;
  /// Fewest warps the operator may get (its work items per round on the device: one warp each).
  std::uint32_t min_warps = 1;
  /// Most warps it may get (0: what the others' minimums leave). A tuner refining a partition locally
  /// keeps the choice where its local models hold.
  std::uint32_t max_warps = 0;
};

/// The warps (continuous, within [lo, hi]) at which `model` first comes down to `target`: the root of
/// θ2·N² + θ1·N + θ0 = f0 that eq. (3) takes, for any sign of θ2. Our round time is the time of one work
/// item of fixed size, which falls as warps are added; the paper's R grows with N (each round gives
/// every thread one element), so its formula picks the root where the curve rises. Both are "the warps
/// it takes to reach f0". When the model is at or below `target` already at `lo`, that is `lo`; when it
/// never comes down to `target` within [lo, hi] (no real root, or roots outside), it is `hi`. A model
/// with non-finite coefficients gets `hi` too (nothing is known of it, so it is not starved).
double warps_for_cost(const cost_model& model, double target, double lo, double hi) noexcept;

/// The paper's eq. (3): shares N̂_i = x_i / Σx_j · total, with x_i = warps_for_cost(f_i, f0) over the
/// warps operator i can get (its minimum up to what the others' minimums leave).
std::vector<double> equal_cost_shares(std::span<const partition_operator> ops, double f0,
                                      std::uint32_t total_warps);

/// Rounds shares to integers that sum to `total_warps` with every operator at least its minimum
/// (largest remainder) and at most its maximum. Throws std::invalid_argument when the minimums exceed the
/// total or the maximums do not reach it.
std::vector<std::uint32_t> round_partition(std::span<const double> shares,
                                           std::span<const partition_operator> ops,
                                           std::uint32_t total_warps);

/// The models' round time of a partition: max_i f_i(N_i) (eq. (1)).
double predicted_round(std::span<const partition_operator> ops, std::span<const std::uint32_t> warps);

struct partition_choice {
  std::vector<std::uint32_t> warps;      ///< the chosen partition
  std::vector<std::uint32_t> eq3_warps;  ///< eq. (3) rounded, before the warp moves
  std::vector<double> shares;            ///< eq. (3) before rounding
  double f0 = 0;
  double predicted = 0;      ///< predicted_round(warps)
  double eq3_predicted = 0;  ///< predicted_round(eq3_warps)
  std::uint32_t moves = 0;   ///< single-warp moves after eq. (3)
  std::string note;          ///< how a degenerate case was handled, empty otherwise
};

/// The partition of `total_warps` among `ops` for the common target `f0` (the paper: the mean of the
/// sampled costs). One operator gets every warp. After eq. (3) and rounding, a warp moves from one
/// operator to another while that lowers the predicted round time (ties: the sum of the operators'
/// times), so a rounding loss or a target f0 that eq. (3)'s normalisation distorts is repaired under
/// the models. Throws std::invalid_argument for no operators, minimums above the total (more operators
/// than warps) or maximums below it.
partition_choice choose_partition(std::span<const partition_operator> ops, double f0,
                                  std::uint32_t total_warps);

}  // namespace xf
