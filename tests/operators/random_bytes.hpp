// Random bytes for the operator tests' inputs: one draw of a 64-bit Mersenne Twister a byte, so a test
// that seeds its generator the same way sees the same bytes on every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace xf::testing {

/// `n` bytes drawn from `rng` (which moves on by `n` draws).
inline std::vector<std::uint8_t> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

/// `n` bytes drawn from a generator seeded with `seed`.
inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return random_bytes(rng, n);
}

}  // namespace xf::testing
