// Eq. (3), rounding and single-warp moves (see warp_partition.hpp).
#include "framework/plan/warp_partition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace xf {
namespace {

/// What operator i can get at most: its maximum, and what the others' minimums leave.
std::vector<double> upper_bounds(std::span<const partition_operator> ops, std::uint32_t total_warps) {
  if (ops.empty()) throw std::invalid_argument("no GPU operator to give warps to");
  std::uint64_t minimums = 0, maximums = 0;
  bool bounded = true;
  for (const partition_operator& op : ops) {
    minimums += std::max<std::uint32_t>(op.min_warps, 1);
    maximums += op.max_warps;
    bounded = bounded && op.max_warps != 0;
  }
  if (minimums > total_warps)
    throw std::invalid_argument(std::to_string(ops.size()) + " operators need at least " +
                                std::to_string(minimums) + " warps, the block has " +
                                std::to_string(total_warps));
  if (bounded && maximums < total_warps)
    throw std::invalid_argument("the operators' maximums (" + std::to_string(maximums) + " warps) leave " +
                                "some of the block's " + std::to_string(total_warps) + " warps unused");
  std::vector<double> hi;
  for (const partition_operator& op : ops) {
    std::uint64_t h = total_warps - minimums + std::max<std::uint32_t>(op.min_warps, 1);
    if (op.max_warps != 0) h = std::min<std::uint64_t>(h, std::max(op.max_warps, op.min_warps));
    hi.push_back(static_cast<double>(h));
  }
  return hi;
}

std::uint32_t minimum(const partition_operator& op) {
  return std::max<std::uint32_t>(op.min_warps, 1);
}
std::uint32_t maximum(const partition_operator& op) {
  return op.max_warps == 0 ? ~0u : std::max(op.max_warps, minimum(op));
}

/// Predicted round, then the sum of the operators' times: the order in which partitions are compared.
struct round_score {
  double round;
  double sum;
  bool better_than(const round_score& o) const {
    const double eps = 1e-9 * std::max({1.0, std::abs(round), std::abs(o.round)});
    if (round < o.round - eps) return true;
    if (round > o.round + eps) return false;
    return sum < o.sum - 1e-9 * std::max({1.0, std::abs(sum), std::abs(o.sum)});
  }
};

round_score score(std::span<const partition_operator> ops, std::span<const std::uint32_t> warps) {
  round_score s{predicted_round(ops, warps), 0};
  for (std::size_t i = 0; i < ops.size(); ++i) s.sum += ops[i].model.at(warps[i]);
  return s;
}

}  // namespace

double warps_for_cost(const cost_model& model, double target, double lo, double hi) noexcept {
  if (!model.finite() || !std::isfinite(target)) return hi;
  if (model.at(lo) <= target) return lo;
  // Roots of θ2·N² + θ1·N + c = 0; f is above the target at lo, so the first root past lo is where it
  // comes down to it.
  const double a = model.theta2, b = model.theta1, c = model.theta0 - target;
  double roots[2];
  int count = 0;
  const double size = std::abs(b) * hi + std::abs(c);
  if (std::abs(a) * hi * hi <= 1e-12 * size) {  // a line (θ2 is rounding noise at this scale)
    if (b != 0) roots[count++] = -c / b;
  } else {
    const double d = b * b - 4 * a * c;
    if (d >= 0) {
      // The numerically stable pair: q = −(b + sign(b)·√d)/2, roots q/a and c/q.
      const double q = -0.5 * (b + std::copysign(std::sqrt(d), b));
      roots[count++] = q / a;
      if (q != 0) roots[count++] = c / q;
    }
  }
  double best = hi;
  for (int i = 0; i < count; ++i)
    if (std::isfinite(roots[i]) && roots[i] > lo && roots[i] < best) best = roots[i];
  return best;
}

std::vector<double> equal_cost_shares(std::span<const partition_operator> ops, double f0,
                                      std::uint32_t total_warps) {
  const std::vector<double> hi = upper_bounds(ops, total_warps);
  std::vector<double> x;
  for (std::size_t i = 0; i < ops.size(); ++i)
    x.push_back(warps_for_cost(ops[i].model, f0, minimum(ops[i]), hi[i]));
  const double sum = std::accumulate(x.begin(), x.end(), 0.0);
  for (double& v : x) v = v / sum * total_warps;
  return x;
}

std::vector<std::uint32_t> round_partition(std::span<const double> shares,
                                           std::span<const partition_operator> ops,
                                           std::uint32_t total_warps) {
  upper_bounds(ops, total_warps);  // checks the minimums and maximums
  if (shares.size() != ops.size()) throw std::invalid_argument("one share per operator");
  std::vector<std::uint32_t> warps(ops.size());
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const double s = std::isfinite(shares[i]) ? std::clamp(shares[i], 0.0, double(total_warps)) : 0.0;
    warps[i] = std::clamp(static_cast<std::uint32_t>(std::floor(s)), minimum(ops[i]), maximum(ops[i]));
    sum += warps[i];
  }
  // Largest remainder: add a warp where the share exceeds the integer most; take one back (from an
  // operator above its minimum) where the integer exceeds the share most.
  auto remainder = [&](std::size_t i) { return (std::isfinite(shares[i]) ? shares[i] : 0.0) - warps[i]; };
  while (sum < total_warps) {
    std::size_t best = ops.size();
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (warps[i] < maximum(ops[i]) && (best == ops.size() || remainder(i) > remainder(best))) best = i;
    ++warps[best];  // exists: the maximums reach the total
    ++sum;
  }
  while (sum > total_warps) {
    std::size_t best = ops.size();
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (warps[i] > minimum(ops[i]) && (best == ops.size() || remainder(i) < remainder(best))) best = i;
    --warps[best];  // exists: the minimums fit the total
    --sum;
  }
  return warps;
}

double predicted_round(std::span<const partition_operator> ops, std::span<const std::uint32_t> warps) {
  double round = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const double t = ops[i].model.at(warps[i]);
    round = std::max(round, std::isfinite(t) ? t : HUGE_VAL);
  }
  return round;
}

partition_choice choose_partition(std::span<const partition_operator> ops, double f0,
                                  std::uint32_t total_warps) {
  partition_choice c;
  c.f0 = f0;
  const std::vector<double> hi = upper_bounds(ops, total_warps);
  if (ops.size() == 1) {
    c.warps = c.eq3_warps = {total_warps};
    c.shares = {double(total_warps)};
    c.predicted = c.eq3_predicted = predicted_round(ops, c.warps);
    c.note = "one GPU operator: it gets every warp";
    return c;
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].model.finite()) {
      c.note += (c.note.empty() ? "" : "; ") + std::string("operator ") + std::to_string(i) +
                " has no finite model";
      continue;
    }
    const double x = warps_for_cost(ops[i].model, f0, minimum(ops[i]), hi[i]);
    if (x == hi[i] && ops[i].model.at(hi[i]) > f0)
      c.note += (c.note.empty() ? "" : "; ") + std::string("operator ") + std::to_string(i) +
                " stays above f0 at every warp count";
  }
  c.shares = equal_cost_shares(ops, f0, total_warps);
  c.eq3_warps = round_partition(c.shares, ops, total_warps);
  c.eq3_predicted = predicted_round(ops, c.eq3_warps);

  // Single-warp moves while the models predict a better round (each strictly better: it ends).
  c.warps = c.eq3_warps;
  round_score current = score(ops, c.warps);
  for (bool moved = true; moved;) {
    moved = false;
    std::size_t from = 0, to = 0;
    round_score best = current;
    for (std::size_t a = 0; a < ops.size(); ++a) {
      if (c.warps[a] <= minimum(ops[a])) continue;
      for (std::size_t b = 0; b < ops.size(); ++b) {
        if (b == a || c.warps[b] >= maximum(ops[b])) continue;
        --c.warps[a];
        ++c.warps[b];
        const round_score s = score(ops, c.warps);
        ++c.warps[a];
        --c.warps[b];
        if (s.better_than(best)) {
          best = s;
          from = a;
          to = b;
          moved = true;
        }
      }
    }
    if (moved) {
      --c.warps[from];
      ++c.warps[to];
      current = best;
      ++c.moves;
    }
  }
  c.predicted = current.round;
  return c;
}

}  // namespace xf
