// The cost model's fit: batch gradient descent recovers known coefficients, with and without noise.
#include <doctest/doctest.h>

#include "framework/plan/cost_model.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

using namespace xf;

namespace {
std::vector<cost_sample> sampled(const cost_model& truth, int lo, int hi, int repeats = 1) {
  std::vector<cost_sample> s;
  for (int r = 0; r < repeats; ++r)
    for (int n = lo; n <= hi; ++n) s.push_back({double(n), truth.at(n), 1});
  return s;
}
}  // namespace

TEST_CASE("cost_model.fit_recovers_exact_coefficients_in_a_few_passes") {
  const cost_model truth{0.5, -30, 600};
  const cost_fit fit = fit_cost_model(sampled(truth, 1, 32));
  CHECK(fit.model.theta2 == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(fit.model.theta1 == doctest::Approx(-30).epsilon(1e-9));
  CHECK(fit.model.theta0 == doctest::Approx(600).epsilon(1e-9));
  CHECK(fit.passes <= 3);
  CHECK(fit.rms_error < 1e-6);
  CHECK(fit.distinct_warps == 32);
}

TEST_CASE("cost_model.fit_recovers_coefficients_through_noise") {
  // Round times of a compute-bound operator: cycles falling with warps and rising again past 24
  // (θ2 > 0), sampled 100 times at each of 4..28 warps with 5% Gaussian noise.
  const cost_model truth{40, -1900, 30000};
  std::mt19937 rng(7);
  std::vector<cost_sample> s;
  for (int r = 0; r < 100; ++r)
    for (int n = 4; n <= 28; ++n) {
      std::normal_distribution<double> noise(0, 0.05 * truth.at(n));
      s.push_back({double(n), truth.at(n) + noise(rng), 1});
    }
  const cost_fit fit = fit_cost_model(s);
  for (int n = 4; n <= 28; ++n) CHECK(fit.model.at(n) == doctest::Approx(truth.at(n)).epsilon(0.02));
  CHECK(fit.model.theta2 == doctest::Approx(40).epsilon(0.15));
  CHECK(fit.passes <= 3);
}

TEST_CASE("cost_model.weighted_means_fit_like_the_raw_samples") {
  std::vector<cost_sample> raw, means;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> jitter(-50, 50);
  for (int n : {2, 5, 9, 17, 30}) {
    double sum = 0;
    const int count = 3 + n % 4;
    for (int k = 0; k < count; ++k) {
      const double cost = 5000.0 / n + 3 * n + jitter(rng);
      raw.push_back({double(n), cost, 1});
      sum += cost;
    }
    means.push_back({double(n), sum / count, double(count)});
  }
  const cost_model a = fit_cost_model(raw).model, b = fit_cost_model(means).model;
  CHECK(a.theta2 == doctest::Approx(b.theta2).epsilon(1e-9));
  CHECK(a.theta1 == doctest::Approx(b.theta1).epsilon(1e-9));
  CHECK(a.theta0 == doctest::Approx(b.theta0).epsilon(1e-9));
}

TEST_CASE("cost_model.too_few_warp_counts_fit_fewer_terms") {
  SUBCASE("one warp count: the mean") {
    const cost_fit fit = fit_cost_model(std::vector<cost_sample>{{8, 100, 1}, {8, 140, 1}});
    CHECK(fit.distinct_warps == 1);
    CHECK(fit.model.theta2 == 0);
    CHECK(fit.model.theta1 == 0);
    CHECK(fit.model.theta0 == doctest::Approx(120));
  }
  SUBCASE("two warp counts: the line through their means") {
    const cost_fit fit = fit_cost_model(std::vector<cost_sample>{{4, 100, 1}, {12, 60, 1}, {12, 80, 1}});
    CHECK(fit.distinct_warps == 2);
    CHECK(fit.model.theta2 == 0);
    CHECK(fit.model.at(4) == doctest::Approx(100));
    CHECK(fit.model.at(12) == doctest::Approx(70));
  }
  SUBCASE("zero-weight samples do not count") {
    const cost_fit fit = fit_cost_model(std::vector<cost_sample>{{4, 100, 1}, {12, 60, 0}});
    CHECK(fit.distinct_warps == 1);
    CHECK(fit.model.at(12) == doctest::Approx(100));
  }
}

TEST_CASE("cost_model.fit_rejects_no_samples_and_non_finite_ones") {
  CHECK_THROWS_AS(fit_cost_model({}), std::invalid_argument);
  CHECK_THROWS_AS(fit_cost_model(std::vector<cost_sample>{{4, 100, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(fit_cost_model(std::vector<cost_sample>{{4, std::numeric_limits<double>::quiet_NaN(), 1}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(fit_cost_model(std::vector<cost_sample>{{4, 100, -1}}), std::invalid_argument);
}
