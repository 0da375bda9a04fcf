// Element arithmetic shared by the built-in GPU maps, identical on host and device: integer arithmetic
// wraps around (no signed-overflow UB, no promotion surprises for 8/16-bit types), real parameters convert
// to integer element types with defined results, and floating fma is fused on both sides.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"

namespace xf::element_math {

/// The unsigned type integer arithmetic on T is done in: at least `unsigned int`, so that uint8_t and
/// uint16_t operands are not promoted to (overflowing) signed int.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

/// a·b modulo 2^bits(T), as T.
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE constexpr T wrapping_mul(T a, T b) {
  using U = wrap_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

/// a·b + c modulo 2^bits(T), as T.
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE constexpr T wrapping_mul_add(T a, T b, T c) {
  using U = wrap_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b) + static_cast<U>(c)));
}

/// 2^63 as a double: the bound of the int64 range that real parameters saturate to.
inline constexpr double two_pow_63 = 9223372036854775808.0;

/// A real parameter as an element of type T. Floating T: the nearest value. Integer T: truncated toward
/// zero, saturated to the int64 range (NaN gives 0), then reduced modulo 2^bits(T) — defined for every
/// input, where a plain static_cast is undefined out of range. So 2.7 → 2, -1 → 255 for u8, 300 → 44 for u8.
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE constexpr T element_from_real(double x) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(x);
  } else {
    std::int64_t v = 0;
    if (x != x) {  // NaN, without a host-only isnan
      v = 0;
    } else if (x >= two_pow_63) {
      v = INT64_MAX;
    } else if (x < -two_pow_63) {
      v = INT64_MIN;
    } else {
      v = static_cast<std::int64_t>(x);
    }
    return static_cast<T>(static_cast<std::uint64_t>(v));
  }
}

/// a·b + c rounded once. The host's std::fma and the device's ::fma/::fmaf are both correctly rounded
/// (IEEE 754 fusedMultiplyAdd), so host executor and GPU give bit-identical results.
XF_HOST_DEVICE XF_FORCE_INLINE float fused_mul_add(float a, float b, float c) {
#if XF_DEVICE_PASS
  return ::fmaf(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
XF_HOST_DEVICE XF_FORCE_INLINE double fused_mul_add(double a, double b, double c) {
#if XF_DEVICE_PASS
  return ::fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// a·b + c in T: fused for floating types, wrapping for integers.
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE T mul_add(T a, T b, T c) {
  if constexpr (std::is_floating_point_v<T>) {
    return fused_mul_add(a, b, c);
  } else {
    return wrapping_mul_add(a, b, c);
  }
}

/// a·b in T: rounded for floating types, wrapping for integers.
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE constexpr T mul(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a * b;
  } else {
    return wrapping_mul(a, b);
  }
}

}  // namespace xf::element_math
