// What the generator sources put in a stream: element values as a pure function of (seed, global element
// index), defined once here so the sources, their replay in verify sinks, and the tests agree bit for bit.
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/element_type.hpp"
#include "framework/core/exec_space.hpp"

namespace xf::content {

/// splitmix64's increment (2^64 / golden ratio) and finaliser constants (Steele, Lea, Flood 2014).
inline constexpr std::uint64_t splitmix64_gamma = 0x9e3779b97f4a7c15ULL;
inline constexpr std::uint64_t splitmix64_mul1 = 0xbf58476d1ce4e5b9ULL;
inline constexpr std::uint64_t splitmix64_mul2 = 0x94d049bb133111ebULL;

/// splitmix64's output function: a bijective 64-bit mix.
XF_HOST_DEVICE constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * splitmix64_mul1;
  z = (z ^ (z >> 27)) * splitmix64_mul2;
  return z ^ (z >> 31);
}

/// The `index`-th output (0-based) of a splitmix64 generator seeded with `seed`. Counter-based: any index
/// costs the same, so any thread can produce any frame without the generator's history.
XF_HOST_DEVICE constexpr std::uint64_t splitmix64_at(std::uint64_t seed, std::uint64_t index) {
  return splitmix64_mix(seed + (index + 1) * splitmix64_gamma);
}

/// Mantissa widths of the unit-interval conversions: the top bits of a 64-bit draw, scaled by 2^-bits,
/// give every representable multiple of 2^-bits in [0, 1) with equal probability, and never 1.
inline constexpr unsigned unit_f32_bits = 24;
inline constexpr unsigned unit_f64_bits = 53;

/// Element `index` of a sequence stream: `seed + index`, computed modulo 2^64. Integer types keep its low
/// bits (wrap-around); floating types get the two's-complement value of that sum (so a negative seed gives
/// negative numbers) converted to the nearest representable value — exact up to 2^24 in magnitude for f32
/// and 2^53 for f64, rounded beyond.
template <class T>
XF_HOST_DEVICE constexpr T sequence_value(std::int64_t seed, std::uint64_t index) {
  const std::uint64_t sum = static_cast<std::uint64_t>(seed) + index;
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<std::int64_t>(sum));
  } else {
    return static_cast<T>(sum);  // modular conversion (C++20 defines it for signed types too)
  }
}

/// Element `index` of a random stream: splitmix64_at(seed, index). Integer types keep its low bits;
/// f32/f64 are uniform in [0, 1) from its top 24/53 bits.
template <class T>
XF_HOST_DEVICE constexpr T random_value(std::int64_t seed, std::uint64_t index) {
  const std::uint64_t r = splitmix64_at(static_cast<std::uint64_t>(seed), index);
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(r >> (64 - unit_f32_bits)) * (1.0f / static_cast<float>(1ULL << unit_f32_bits));
  } else if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(r >> (64 - unit_f64_bits)) *
           (1.0 / static_cast<double>(1ULL << unit_f64_bits));
  } else {
    return static_cast<T>(r);
  }
}

/// Which generator a stream uses.
enum class generator : std::uint8_t { sequence, random };

/// Fills `count` elements at `out` with the values of global indices first_index … first_index+count-1.
template <class T>
void fill(generator g, T* out, std::uint64_t count, std::int64_t seed, std::uint64_t first_index) {
  if (g == generator::sequence) {
    for (std::uint64_t k = 0; k < count; ++k) out[k] = sequence_value<T>(seed, first_index + k);
  } else {
    for (std::uint64_t k = 0; k < count; ++k) out[k] = random_value<T>(seed, first_index + k);
  }
}

/// fill() for an element type known at run time; `out` must be aligned for that type.
inline void fill(generator g, element_type element, void* out, std::uint64_t count, std::int64_t seed,
                 std::uint64_t first_index) {
  visit_element(element, [&](auto zero) {
    using T = decltype(zero);
    fill<T>(g, static_cast<T*>(out), count, seed, first_index);
  });
}

}  // namespace xf::content
