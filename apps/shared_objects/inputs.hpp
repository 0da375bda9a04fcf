// The workloads' inputs: deterministic pseudo-random values, made once per workload before any run (the
// paper's programs read theirs from files; here each run copies them in from memory instead).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xf::shared_bench {

/// SplitMix64's output function: a well-mixed 64-bit value of `x` (consecutive x give independent-looking
/// values, so element i of an input is mix64(seed + i)).
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// `count` floats uniform in [low, high), 24 random bits each.
std::vector<float> uniform_floats(std::size_t count, std::uint64_t seed, float low, float high);

}  // namespace xf::shared_bench
