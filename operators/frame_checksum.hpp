// A fast, position-sensitive 64-bit checksum of a frame's bytes, for checking frames at link speed where a
// byte-exact replay (verify_sink's exact mode) would cost more CPU than the stream has. It is one
// definition shared by verify_sink's checksum mode and the benchmark baselines, so every contender does
// the same verification work.
//
// sum over 64-bit words w[k] of mix(w[k] + k·golden), wrapping; the tail (bytes past the last whole word)
// is zero-padded into one more word. A flipped bit, a swapped pair of words and a shifted frame all
// change it; it is not cryptographic. A multiply and two xor-shifts per word: SIMD-friendly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "framework/core/exec_space.hpp"

namespace xf {

namespace detail {
XF_HOST_DEVICE XF_FORCE_INLINE constexpr std::uint64_t checksum_mix(std::uint64_t z) {
  z ^= z >> 29;
  z *= 0xbf58476d1ce4e5b9ULL;
  return z ^ (z >> 32);
}
inline constexpr std::uint64_t checksum_gamma = 0x9e3779b97f4a7c15ULL;

/// The terms of words [first_word, bytes / 8) and of the zero-padded tail of a `bytes`-byte frame.
inline std::uint64_t checksum_terms(const unsigned char* p, std::uint64_t first_word, std::uint64_t bytes) {
  const std::uint64_t words = bytes / 8;
  std::uint64_t sum = 0;
  for (std::uint64_t k = first_word; k < words; ++k) {
    std::uint64_t w;
    std::memcpy(&w, p + k * 8, 8);
    sum += checksum_mix(w + k * checksum_gamma);
  }
  if (const std::uint64_t tail = bytes % 8; tail != 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + words * 8, tail);
    sum += checksum_mix(w + words * checksum_gamma);
  }
  return sum;
}
}  // namespace detail

/// The checksum of `bytes` bytes at `data` (any alignment), word by word: the definition, and the path
/// taken on CPUs without AVX-512.
inline std::uint64_t frame_checksum_scalar(const void* data, std::uint64_t bytes) {
  return bytes + detail::checksum_terms(static_cast<const unsigned char*>(data), 0, bytes);
}

/// The same checksum, eight words at a time with AVX-512 where the CPU has it (the sum is a wrapping
/// sum of independent terms, so any order gives the same value). A sink checking frames at PCIe speed
/// needs this: the scalar loop is bound by its 64-bit multiply at ~10 GB/s per core.
std::uint64_t frame_checksum(const void* data, std::uint64_t bytes);

/// Whether frame_checksum takes the AVX-512 path on this CPU.
bool frame_checksum_vectorized();

}  // namespace xf
