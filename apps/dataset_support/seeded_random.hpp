// The generators' random numbers: xoshiro256** seeded through splitmix64, a seed per (stream, block) so a
// block's content depends only on the seed and its index (never on the thread count), Gaussian samples, and
// Walker's alias table for Zipf-like choices. Implemented here rather than with <random>'s distributions,
// whose output the standard leaves to each library: a seed gives the same file wherever this code runs
// (up to libm's log/sin/cos, which the Gaussian uses).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <span>
#include <stdexcept>
#include <vector>

namespace xf::apps {

/// One step of splitmix64 (Vigna): advances `state` and returns a well-mixed 64-bit value.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The seed of block `block` of stream `stream` (a generator's independent sequences) under `seed`.
constexpr std::uint64_t block_seed(std::uint64_t seed, std::uint64_t stream, std::uint64_t block) noexcept {
  std::uint64_t s = seed;
  std::uint64_t h = splitmix64(s);
  s = h ^ (stream * 0xd1b54a32d192ed03ull);
  h = splitmix64(s);
  s = h ^ (block * 0x8cb92ba72f3d8dd7ull);
  return splitmix64(s);
}

/// xoshiro256** (Blackman, Vigna). Not thread-safe: one per block.
class seeded_random {
 public:
  explicit constexpr seeded_random(std::uint64_t seed) noexcept {
    for (auto& w : s_) w = splitmix64(seed);
  }

  constexpr std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, n) for n >= 1 (Lemire's multiply-shift; the bias is below n / 2^64).
  constexpr std::uint64_t below(std::uint64_t n) noexcept {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

  /// Uniform in [0, 1) with 53 random bits.
  constexpr double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Standard normal (Box–Muller; the second value of each pair is kept for the next call).
  double normal() noexcept {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * std::numbers::pi * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

  std::uint64_t s_[4] = {};
  double spare_ = 0;
  bool has_spare_ = false;
};

/// Walker's alias table: sample() returns i with probability weights[i] / sum(weights) in O(1). Built once
/// (deterministically), then read-only and safe to share between threads.
class alias_table {
 public:
  explicit alias_table(std::span<const double> weights)
      : probability_(weights.size()), alias_(weights.size()) {
    const std::size_t n = weights.size();
    if (n == 0 || n > UINT32_MAX) throw std::invalid_argument("alias_table: need 1 .. 2^32-1 weights");
    double total = 0;
    for (double w : weights) {
      if (!(w >= 0)) throw std::invalid_argument("alias_table: weights must be non-negative");
      total += w;
    }
    if (!(total > 0)) throw std::invalid_argument("alias_table: the weights sum to zero");
    std::vector<double> scaled(n);
    std::vector<std::uint32_t> small, large;
    for (std::size_t i = 0; i < n; ++i) {
      scaled[i] = weights[i] * static_cast<double>(n) / total;
      (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const std::uint32_t s = small.back(), l = large.back();
      small.pop_back();
      probability_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] = (scaled[l] + scaled[s]) - 1.0;
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (std::uint32_t i : large) probability_[i] = 1.0, alias_[i] = i;
    for (std::uint32_t i : small) probability_[i] = 1.0, alias_[i] = i;  // rounding leftovers
  }

  /// Zipf-like weights: item r (0-based rank) has weight 1 / (r + 1)^exponent.
  static alias_table zipf(std::uint32_t n, double exponent) {
    std::vector<double> w(n);
    for (std::uint32_t r = 0; r < n; ++r) w[r] = 1.0 / std::pow(static_cast<double>(r) + 1.0, exponent);
    return alias_table(w);
  }

  std::uint32_t sample(seeded_random& rng) const noexcept {
    const auto i = static_cast<std::uint32_t>(rng.below(probability_.size()));
    return rng.uniform() < probability_[i] ? i : alias_[i];
  }

  std::size_t size() const noexcept { return probability_.size(); }

 private:
  std::vector<double> probability_;
  std::vector<std::uint32_t> alias_;
};

}  // namespace xf::apps
