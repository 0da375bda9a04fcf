// Batch gradient descent over orthonormalised polynomial features (see cost_model.hpp).
#include "framework/plan/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace xf {

bool cost_model::finite() const noexcept {
  return std::isfinite(theta2) && std::isfinite(theta1) && std::isfinite(theta0);
}

cost_fit fit_cost_model(std::span<const cost_sample> samples, const cost_fit_options& options) {
  double total_weight = 0;
  for (const cost_sample& s : samples) {
    if (!std::isfinite(s.warps) || !std::isfinite(s.cost) || !std::isfinite(s.weight) || s.weight < 0)
      throw std::invalid_argument("cost samples must be finite, with weights >= 0");
    total_weight += s.weight;
  }
  if (!(total_weight > 0)) throw std::invalid_argument("no cost sample with a positive weight");
  auto mean = [&](auto&& value) {
    double sum = 0;
    for (const cost_sample& s : samples) sum += s.weight * value(s);
    return sum / total_weight;
  };

  cost_fit fit;
  {
    std::vector<double> seen;
    for (const cost_sample& s : samples)
      if (s.weight > 0 && std::find(seen.begin(), seen.end(), s.warps) == seen.end()) seen.push_back(s.warps);
    fit.distinct_warps = static_cast<std::uint32_t>(seen.size());
  }

  // Features: u = (N − mean N) / su and v = (N² − mean N² − β·(N − mean N)) / sv, orthonormal under the
  // samples' weights. A feature whose spread vanishes (all samples at one or two warp counts) is dropped.
  const double mean_n = mean([](const cost_sample& s) { return s.warps; });
  const double mean_n2 = mean([](const cost_sample& s) { return s.warps * s.warps; });
  const double var_u = mean([&](const cost_sample& s) { return (s.warps - mean_n) * (s.warps - mean_n); });
  const double scale = std::max(1.0, mean_n2);  // spreads below this relative size are rounding noise
  const bool use_u = fit.distinct_warps >= 2 && var_u > 1e-12 * scale;
  const double su = use_u ? std::sqrt(var_u) : 1;
  const double beta = use_u ? mean([&](const cost_sample& s) {
                                return (s.warps - mean_n) * (s.warps * s.warps - mean_n2);
                              }) / var_u
                            : 0;
  auto raw_v = [&](const cost_sample& s) { return s.warps * s.warps - mean_n2 - beta * (s.warps - mean_n); };
  const double var_v = mean([&](const cost_sample& s) { return raw_v(s) * raw_v(s); });
  const bool use_v = fit.distinct_warps >= 3 && var_v > 1e-12 * scale * scale;
  const double sv = use_v ? std::sqrt(var_v) : 1;
  auto u = [&](const cost_sample& s) { return use_u ? (s.warps - mean_n) / su : 0.0; };
  auto v = [&](const cost_sample& s) { return use_v ? raw_v(s) / sv : 0.0; };

  // Descent on the weighted mean squared error ½·E[(c0 + c1·u + c2·v − R)²]; with orthonormal features
  // its Hessian is the identity, so step 1 is the Newton step.
  double c0 = 0, c1 = 0, c2 = 0;
  constexpr double step = 1.0;
  for (fit.passes = 1; fit.passes <= options.max_passes; ++fit.passes) {
    double g0 = 0, g1 = 0, g2 = 0;
    for (const cost_sample& s : samples) {
      const double r = c0 + c1 * u(s) + c2 * v(s) - s.cost;
      g0 += s.weight * r;
      g1 += s.weight * r * u(s);
      g2 += s.weight * r * v(s);
    }
    g0 /= total_weight;
    g1 /= total_weight;
    g2 /= total_weight;
    c0 -= step * g0;
    c1 -= step * g1;
    c2 -= step * g2;
    const double moved = std::max({std::abs(g0), std::abs(g1), std::abs(g2)}) * step;
    const double size = std::max({1.0, std::abs(c0), std::abs(c1), std::abs(c2)});
    if (moved <= options.tolerance * size) break;
  }
  fit.passes = std::min(fit.passes, options.max_passes);

  // Back to θ: f(N) = c0 + c1·(N − mN)/su + c2·(N² − mN2 − β·(N − mN))/sv.
  const double a1 = use_u ? c1 / su : 0;
  const double a2 = use_v ? c2 / sv : 0;
  fit.model.theta2 = a2;
  fit.model.theta1 = a1 - a2 * beta;
  fit.model.theta0 = c0 - a1 * mean_n - a2 * (mean_n2 - beta * mean_n);
  const double mse = mean([&](const cost_sample& s) {
    const double r = fit.model.at(s.warps) - s.cost;
    return r * r;
  });
  fit.rms_error = std::sqrt(mse);
  return fit;
}

}  // namespace xf
