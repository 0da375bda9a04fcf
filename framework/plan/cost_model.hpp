// An operator's round time as a function of its warps, f(N) = θ2·N² + θ1·N + θ0 (the XeFlow paper's
// eq. (2)), fitted to measured (N, R) samples by batch gradient descent (the paper's §5.2).
#pragma once

#include <cstdint>
#include <span>

namespace xf {

/// One measurement: an operator given `warps` warps took `cost` (cycles, or any unit, per work item).
/// `weight` counts how many raw samples it stands for (a mean over many rounds has their count), so a
/// fit over means weighted by their counts equals the fit over the raw samples.
struct cost_sample {
  double warps = 0;
  double cost = 0;
  double weight = 1;
};

struct cost_model {
  double theta2 = 0;
  double theta1 = 0;
  double theta0 = 0;
  double at(double warps) const noexcept { return (theta2 * warps + theta1) * warps + theta0; }
  bool finite() const noexcept;
};

struct cost_fit_options {
  std::uint32_t max_passes = 100;
  /// Stops when a pass moves no coefficient (in the scaled features' units) by more than this.
  double tolerance = 1e-12;
};

struct cost_fit {
  cost_model model;
  std::uint32_t passes = 0;  ///< gradient descent passes over the samples
  double rms_error = 0;      ///< root of the weighted mean squared residual
  /// Distinct warp counts among the samples: 1 fits a constant, 2 a line, 3 or more the quadratic.
  std::uint32_t distinct_warps = 0;
};

/// Fits f to the samples by batch gradient descent. The features are centred, orthogonalised (N² less its
/// projection on N) and scaled to unit weighted variance, which makes the least-squares problem's Hessian
/// the identity: descent with step 1 then converges in one or two passes instead of the thousands that
/// raw N and N² (correlated above 0.95 over 1..32) would need. With fewer than three distinct warp counts
/// the fit drops the terms the samples cannot determine. Throws std::invalid_argument when there is no
/// sample with positive weight or a sample is not finite.
cost_fit fit_cost_model(std::span<const cost_sample> samples, const cost_fit_options& options = {});

}  // namespace xf
