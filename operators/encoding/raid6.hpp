// RAID-6 over a stripe of k data blocks: P (their XOR) and Q (the sum of 2^i · D_i in GF(2^8), as Linux md
// and ISA-L's pq_gen compute it), and the recovery of any one or two lost blocks of the k + 2. Word by word
// (8 bytes at a time), on the host or the GPU: a stripe is its blocks one after another, block_words apart.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "operators/encoding/gf256.hpp"

namespace xf::raid6 {

/// Data blocks a stripe may have: Q's weights 2^0 … 2^(k−1) must be distinct, and 2 has order 255.
inline constexpr unsigned max_data_blocks = 255;
/// Block sizes are multiples of this (the GPU's and ISA-L's vector widths divide it).
inline constexpr unsigned block_bytes_multiple = 64;

/// P and Q of word w: the XOR of the k data blocks' words, and Horner's rule from the last block down
/// (Q = ((D_{k−1} · 2 + D_{k−2}) · 2 + …) + D_0), one multiply-by-2 per block and no tables. Measured
/// against log/antilog, 256-byte and 4-bit tables in shared memory (bench/encoding_kernels, H200): faster
/// at every k (2.5 TB/s at k = 8 against at most 1.8), and no shared memory of the operator's own.
XF_HOST_DEVICE XF_FORCE_INLINE void pq_word(const std::uint64_t* data, std::uint64_t block_words, unsigned k,
                                            std::uint64_t w, std::uint64_t& p, std::uint64_t& q) {
  std::uint64_t d = data[std::uint64_t{k - 1} * block_words + w];
  p = d;
  q = d;
  for (unsigned i = k - 1; i-- > 0;) {
    d = data[std::uint64_t{i} * block_words + w];
    p ^= d;
    q = gf256::mul2_word(q) ^ d;
  }
}

/// How to rebuild the lost blocks of a stripe of k data blocks, P (block k) and Q (block k + 1): made once
/// on the host (make_recovery), applied to every word. Trivially copyable.
struct recovery {
  std::uint32_t k = 0;
  std::uint32_t lost_count = 0;    ///< 1 or 2
  std::uint32_t lost[2] = {0, 0};  ///< ascending block indices
  /// Two data blocks x < y lost: D_x = a · (P + P_xy) + b · (Q + Q_xy), with P_xy and Q_xy the survivors'
  /// sums (Anvin, "The mathematics of RAID-6": a = g^(y−x) / (g^(y−x) + 1), b = g^(−x) / (g^(y−x) + 1)).
  std::uint8_t a = 0, b = 0;
  /// One data block x lost with P: D_x = g^(−x) · (Q + Q_x).
  std::uint8_t q_scale = 0;
  /// One data block x lost with Q: Q gets back g^x · D_x.
  std::uint8_t x_weight = 0;
};

/// The recovery of `lost_count` blocks (1 or 2; `lost` in any order, indices 0 … k + 1), or why there is
/// none: returns "" and fills `out`, else the problem.
inline const char* make_recovery(unsigned k, unsigned lost_count, const unsigned* lost, recovery& out) {
  if (k < 1 || k > max_data_blocks) return "k must be between 1 and 255";
  if (lost_count < 1 || lost_count > 2) return "RAID-6 rebuilds one or two lost blocks";
  unsigned x = lost[0], y = lost_count == 2 ? lost[1] : lost[0];
  if (x > y) {
    const unsigned t = x;
    x = y;
    y = t;
  }
  if (y > k + 1) return "a lost block is past the stripe's k data blocks, P and Q";
  if (lost_count == 2 && x == y) return "the same block is lost twice";
  out = recovery{};
  out.k = k;
  out.lost_count = lost_count;
  out.lost[0] = x;
  out.lost[1] = y;
  if (x < k) {
    out.x_weight = gf256::exp2(x);
    out.q_scale = gf256::inv(gf256::exp2(x));
    if (lost_count == 2 && y < k) {
      const std::uint8_t gyx = gf256::exp2(y - x);
      const std::uint8_t denominator = gf256::inv(static_cast<std::uint8_t>(gyx ^ 1));
      out.a = gf256::mul(gyx, denominator);
      out.b = gf256::mul(gf256::inv(gf256::exp2(x)), denominator);
    }
  }
  return "";
}

/// The lost blocks' word w, rebuilt from the stripe's surviving blocks (the lost ones are not read): into
/// lost_words[0] (and [1]), in the order of recovery::lost.
XF_HOST_DEVICE XF_FORCE_INLINE void recover_word(const recovery& r, const std::uint64_t* stripe,
                                                 std::uint64_t block_words, std::uint64_t w,
                                                 std::uint64_t* lost_words) {
  const unsigned k = r.k;
  const unsigned x = r.lost[0], y = r.lost[1];
  const auto is_lost = [&](unsigned i) { return i == x || (r.lost_count == 2 && i == y); };
  // The survivors' P and Q (a lost data block counts as zero).
  std::uint64_t p = 0, q = 0;
  for (unsigned i = k; i-- > 0;) {
    const std::uint64_t d = is_lost(i) ? 0 : stripe[std::uint64_t{i} * block_words + w];
    p ^= d;
    q = gf256::mul2_word(q) ^ d;
  }
  const std::uint64_t stored_p = is_lost(k) ? 0 : stripe[std::uint64_t{k} * block_words + w];
  const std::uint64_t stored_q = is_lost(k + 1) ? 0 : stripe[std::uint64_t{k + 1} * block_words + w];
  if (x >= k) {  // only parity lost: compute it again
    lost_words[0] = x == k ? p : q;
    if (r.lost_count == 2) lost_words[1] = q;  // y == k + 1
    return;
  }
  if (r.lost_count == 2 && y < k) {  // two data blocks
    const std::uint64_t pxy = stored_p ^ p, qxy = stored_q ^ q;
    const std::uint64_t dx = gf256::mul_word(r.a, pxy) ^ gf256::mul_word(r.b, qxy);
    lost_words[0] = dx;
    lost_words[1] = pxy ^ dx;
    return;
  }
  // One data block x, perhaps with P or Q.
  const bool p_lost = r.lost_count == 2 && y == k;
  const std::uint64_t dx = p_lost ? gf256::mul_word(r.q_scale, stored_q ^ q) : stored_p ^ p;
  lost_words[0] = dx;
  if (r.lost_count == 2) lost_words[1] = y == k ? p ^ dx : q ^ gf256::mul_word(r.x_weight, dx);
}

}  // namespace xf::raid6
