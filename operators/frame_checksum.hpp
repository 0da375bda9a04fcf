// A fast, position-sensitive 64-bit checksum of a frame's bytes, for checking frames at link speed where a
// byte-exact replay (verify_sink's exact mode) would cost more CPU than the stream has. It is one
// definition shared by verify_sink's checksum mode and the benchmark baselines, so every contender does
// the same verification work.
//
// sum over 64-bit words w[k] of mix(w[k] + k·golden), wrapping; the tail (bytes past the last whole word)
// is zero-padded into one more word. A flipped bit, a swapped pair of words and a shifted frame all
// change it; it is not cryptographic. Runs at memory speed (a multiply and an xor-shift per word).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "framework/exec_space.hpp"

namespace xf {

namespace detail {
XF_HOST_DEVICE XF_FORCE_INLINE constexpr std::uint64_t checksum_mix(std::uint64_t z) {
  z ^= z >> 29;
  z *= 0xbf58476d1ce4e5b9ULL;
  return z ^ (z >> 32);
}
inline constexpr std::uint64_t checksum_gamma = 0x9e3779b97f4a7c15ULL;
}  // namespace detail

/// The checksum of `bytes` bytes at `data` (any alignment).
inline std::uint64_t frame_checksum(const void* data, std::uint64_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  const std::uint64_t words = bytes / 8;
  std::uint64_t sum = bytes;
  for (std::uint64_t k = 0; k < words; ++k) {
    std::uint64_t w;
    std::memcpy(&w, p + k * 8, 8);
    sum += detail::checksum_mix(w + k * detail::checksum_gamma);
  }
  if (const std::uint64_t tail = bytes % 8; tail != 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + words * 8, tail);
    sum += detail::checksum_mix(w + words * detail::checksum_gamma);
  }
  return sum;
}

}  // namespace xf
