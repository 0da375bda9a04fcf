// GF(2^8): scalar arithmetic in either field the encoding operators use — RAID-6's polynomial
// x^8 + x^4 + x^3 + x^2 + 1 (0x11d, Linux md and ISA-L) and AES's x^8 + x^4 + x^3 + x + 1 (0x11b) — and, for
// RAID-6's data, byte-parallel products on 64-bit words.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"

namespace xf::gf256 {

/// A field's polynomial without its x^8 term: what x^8 reduces to.
inline constexpr std::uint8_t raid6_poly = 0x1d;
inline constexpr std::uint8_t aes_poly = 0x1b;

/// a · 2 (x · a).
template <std::uint8_t Poly = raid6_poly>
XF_HOST_DEVICE constexpr std::uint8_t mul2(std::uint8_t a) {
  return static_cast<std::uint8_t>((a << 1) ^ ((a & 0x80) != 0 ? Poly : 0));
}

/// a · b, bit by bit (coefficients and tables: RAID-6's data goes through mul_word).
template <std::uint8_t Poly = raid6_poly>
XF_HOST_DEVICE constexpr std::uint8_t mul(std::uint8_t a, std::uint8_t b) {
  std::uint8_t product = 0;
  for (; b != 0; b >>= 1, a = mul2<Poly>(a))
    if (b & 1) product ^= a;
  return product;
}

/// a^e.
template <std::uint8_t Poly = raid6_poly>
XF_HOST_DEVICE constexpr std::uint8_t pow(std::uint8_t a, unsigned e) {
  std::uint8_t r = 1;
  for (; e != 0; e >>= 1, a = mul<Poly>(a, a))
    if (e & 1) r = mul<Poly>(r, a);
  return r;
}

/// 1 / a for a ≠ 0 (a^254: the multiplicative group has order 255); 0 for 0.
template <std::uint8_t Poly = raid6_poly>
XF_HOST_DEVICE constexpr std::uint8_t inv(std::uint8_t a) {
  return pow<Poly>(a, 254);
}

/// 2^e, the generator's powers (RAID-6's Q weights block i by 2^i).
XF_HOST_DEVICE constexpr std::uint8_t exp2(unsigned e) {
  return pow(2, e % 255);
}

/// Each of the word's 8 bytes times 2: shift every byte left, then reduce the bytes whose top bit fell off.
XF_HOST_DEVICE XF_FORCE_INLINE constexpr std::uint64_t mul2_word(std::uint64_t v) {
  const std::uint64_t high = v & 0x8080808080808080ull;
  return ((v << 1) & 0xfefefefefefefefeull) ^ ((high >> 7) * raid6_poly);
}

/// Each of the word's 8 bytes times c: the sum of v · 2^j over the bits j of c.
XF_HOST_DEVICE XF_FORCE_INLINE constexpr std::uint64_t mul_word(std::uint8_t c, std::uint64_t v) {
  std::uint64_t product = 0;
  for (; c != 0; c >>= 1, v = mul2_word(v))
    if (c & 1) product ^= v;
  return product;
}

}  // namespace xf::gf256
