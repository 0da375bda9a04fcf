// tpacf's inputs, the CPU's two passes over a set, and the CPU reference (tpacf.hpp).
#include "apps/shared_objects/tpacf/tpacf.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "apps/shared_objects/inputs.hpp"

namespace xf::shared_bench {
namespace {

constexpr double min_arcmin = 1, max_arcmin = 10000;

std::vector<std::uint64_t> reference_counts(const tpacf_problem& p) {
  std::vector<std::vector<float>> sets(p.sets(), std::vector<float>(p.set_floats()));
  for (std::size_t s = 0; s < p.sets(); ++s) p.write_set(s, sets[s].data());
  std::vector<std::uint64_t> counts(p.histograms() * p.slots(), 0);
  const std::size_t n = p.points;
  auto count_pairs = [&](const std::vector<float>& a, const std::vector<float>& b, bool same,
                         std::size_t at) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = same ? i + 1 : 0; j < n; ++j) {
        const double dot = tpacf_dot(a[i], a[n + i], a[2 * n + i], b[j], b[n + j], b[2 * n + j]);
        ++counts[at + tpacf_bin(dot, p.edges.cosine, p.edges.count)];
      }
  };
  count_pairs(sets[0], sets[0], true, p.dd());
  for (std::size_t r = 0; r < p.random_sets; ++r) {
    count_pairs(sets[0], sets[1 + r], false, p.dr(r));
    count_pairs(sets[1 + r], sets[1 + r], true, p.rr(r));
  }
  return counts;
}

}  // namespace

void tpacf_problem::write_set(std::size_t s, float* set) const {
  float* x = set;
  float* y = set + points;
  float* z = set + 2 * points;
  const float* set_ra = ra.data() + s * points;
  const float* set_dec = dec.data() + s * points;
  for (std::size_t i = 0; i < points; ++i) {
    x[i] = set_ra[i];
    y[i] = set_dec[i];
  }
  constexpr float radians = std::numbers::pi_v<float> / 180;
  for (std::size_t i = 0; i < points; ++i) {
    const float right_ascension = x[i] * radians, declination = y[i] * radians;
    const float c = std::cos(declination);
    x[i] = c * std::cos(right_ascension);
    y[i] = c * std::sin(right_ascension);
    z[i] = std::sin(declination);
  }
}

check_result tpacf_problem::check(const output& out, bool thorough) const {
  if (out.counts.size() != histograms() * slots())
    return {false, "the output has " + std::to_string(out.counts.size()) + " counts"};
  if (thorough) {
    const std::vector<std::uint64_t> want = reference_counts(*this);
    for (std::size_t k = 0; k < want.size(); ++k)
      if (out.counts[k] != want[k])
        return {false, "histogram " + std::to_string(k / slots()) + ", bin " + std::to_string(k % slots()) +
                           ": " + std::to_string(out.counts[k]) + " pairs, the CPU counts " +
                           std::to_string(want[k])};
    return {true, std::to_string(want.size()) + " counters equal to the CPU's count of every pair"};
  }
  const std::uint64_t n = points, within = n * (n - 1) / 2, across = n * n;
  for (std::size_t h = 0; h < histograms(); ++h) {
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < slots(); ++k) total += out.counts[h * slots() + k];
    const std::uint64_t want = h % 2 == 1 ? across : within;  // DD and the RRs at even places, DRs odd
    if (total != want)
      return {false, "histogram " + std::to_string(h) + " holds " + std::to_string(total) + " pairs, not " +
                         std::to_string(want)};
  }
  return {true,
          std::to_string(histograms()) + " histograms each holding all its pairs (not binned by the CPU)"};
}

std::unique_ptr<workload> make_tpacf(std::size_t points, std::size_t random_sets, std::size_t bins) {
  if (bins == 0 || bins > tpacf_max_bins)
    throw std::invalid_argument("tpacf: 1 to " + std::to_string(tpacf_max_bins) + " bins");
  tpacf_problem p;
  p.points = points;
  p.random_sets = random_sets;
  p.bins = bins;
  // Points uniform on the sphere: right ascension uniform, the sine of the declination uniform.
  p.ra = uniform_floats(p.sets() * points, 0x5eed0501, 0.0f, 360.0f);
  p.dec = uniform_floats(p.sets() * points, 0x5eed0502, -1.0f, 1.0f);
  for (float& d : p.dec) d = static_cast<float>(std::asin(d) * 180 / std::numbers::pi);
  p.edges.count = static_cast<unsigned>(bins + 1);
  for (std::size_t k = 0; k <= bins; ++k) {
    const double arcmin =
        min_arcmin * std::pow(max_arcmin / min_arcmin, static_cast<double>(k) / static_cast<double>(bins));
    p.edges.cosine[k] = std::cos(arcmin / 60 * std::numbers::pi / 180);
  }
  return std::make_unique<workload_over<tpacf_problem>>(
      std::move(p),
      host_sides<tpacf_problem>{tpacf_explicit, tpacf_shared, tpacf_managed, tpacf_managed_prefetch});
}

}  // namespace xf::shared_bench
