// Division by a divisor that stays the same for a whole kernel: the packing kernels split a flat index into
// a segment and the digits of its place once per copied unit, and a 32-bit multiply-high and a shift cost a
// fraction of a hardware division. Host and device code.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"

namespace xf::dt {

/// n / d for 0 <= n < 2^31 and 1 <= d < 2^31, as (n · m) >> (32 + s) with m = ceil(2^(32 + s) / d) and
/// s = ceil(log2 d) - 1 (Granlund and Montgomery's round-up method; the error term stays below 1 in that
/// range). Trivially copyable: built on the host, passed to kernels by value.
struct fast_divmod_u32 {
  std::uint32_t divisor = 1;
  std::uint32_t multiplier = 0;  ///< 0 for divisor 1, which needs no multiply
  std::uint32_t shift = 0;

  fast_divmod_u32() = default;
  explicit fast_divmod_u32(std::uint32_t d) : divisor(d) {
    if (d <= 1) return;
    std::uint32_t ceil_log2 = 0;
    while ((std::uint64_t{1} << ceil_log2) < d) ++ceil_log2;
    const std::uint32_t p = 31 + ceil_log2;
    multiplier = static_cast<std::uint32_t>(((std::uint64_t{1} << p) + d - 1) / d);
    shift = p - 32;
  }

  XF_HOST_DEVICE XF_FORCE_INLINE std::uint32_t div(std::uint32_t n) const {
    // The 64-bit product's high word: nvcc compiles this to one mul.hi.u32.
    return multiplier == 0 ? n : static_cast<std::uint32_t>((std::uint64_t{n} * multiplier) >> 32) >> shift;
  }
};

/// The same interface for 64-bit indices (a shape of 2^31 segments or more), by the hardware division.
struct plain_divmod_u64 {
  std::uint64_t divisor = 1;

  plain_divmod_u64() = default;
  explicit plain_divmod_u64(std::uint64_t d) : divisor(d) {}
  /// A divisor of 1 (one unit a segment, the common case) skips the division, a long software routine on
  /// the GPU.
  XF_HOST_DEVICE XF_FORCE_INLINE std::uint64_t div(std::uint64_t n) const {
    return divisor == 1 ? n : n / divisor;
  }
};

}  // namespace xf::dt
