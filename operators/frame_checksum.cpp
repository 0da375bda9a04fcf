// frame_checksum: the AVX-512 path and the dispatch between it and the scalar definition.
#include "operators/frame_checksum.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define XF_CHECKSUM_AVX512 1
#endif

namespace xf {

#if XF_CHECKSUM_AVX512
namespace {

#define XF_AVX512 __attribute__((target("avx512f,avx512dq")))

// g++ 12 at -Og reports the self-initialised placeholder inside its own _mm512_srli_epi64 as maybe
// uninitialised (a false positive of its header's idiom); the shift's result does not depend on it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// mix(w + position) for eight words at once.
XF_AVX512 inline __m512i checksum_terms8(__m512i w, __m512i position) {
  const __m512i multiplier = _mm512_set1_epi64(static_cast<long long>(0xbf58476d1ce4e5b9ULL));
  __m512i z = _mm512_add_epi64(w, position);
  z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 29));
  z = _mm512_mullo_epi64(z, multiplier);
  return _mm512_xor_si512(z, _mm512_srli_epi64(z, 32));
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// The terms of words [0, 8·vectors): lane j of vector v takes word 8v + j, so each term is exactly the
/// scalar one, mix(w[k] + k·gamma). The words after them and the tail are the caller's.
XF_AVX512 std::uint64_t checksum_avx512(const unsigned char* p, std::uint64_t vectors) {
  const __m512i step = _mm512_set1_epi64(static_cast<long long>(8 * detail::checksum_gamma));
  __m512i position = _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                                        _mm512_set1_epi64(static_cast<long long>(detail::checksum_gamma)));
  // Two accumulators so consecutive vectors do not wait on one add chain.
  __m512i sum0 = _mm512_setzero_si512(), sum1 = _mm512_setzero_si512();
  std::uint64_t v = 0;
  for (; v + 2 <= vectors; v += 2) {
    sum0 = _mm512_add_epi64(sum0, checksum_terms8(_mm512_loadu_si512(p + v * 64), position));
    position = _mm512_add_epi64(position, step);
    sum1 = _mm512_add_epi64(sum1, checksum_terms8(_mm512_loadu_si512(p + v * 64 + 64), position));
    position = _mm512_add_epi64(position, step);
  }
  if (v < vectors) sum0 = _mm512_add_epi64(sum0, checksum_terms8(_mm512_loadu_si512(p + v * 64), position));
  // Lanes summed as unsigned (wrapping) words: _mm512_reduce_add_epi64 adds them as signed ones, which
  // UBSan reports as overflow.
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(sum0, sum1));
  std::uint64_t sum = 0;
  for (const std::uint64_t lane : lanes) sum += lane;
  return sum;
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return has;
}

}  // namespace
#endif

bool frame_checksum_vectorized() {
#if XF_CHECKSUM_AVX512
  return cpu_has_avx512();
#else
  return false;
#endif
}

std::uint64_t frame_checksum(const void* data, std::uint64_t bytes) {
#if XF_CHECKSUM_AVX512
  if (cpu_has_avx512()) {
    const auto* p = static_cast<const unsigned char*>(data);
    const std::uint64_t vectors = bytes / 64;
    return bytes + checksum_avx512(p, vectors) + detail::checksum_terms(p, vectors * 8, bytes);
  }
#endif
  return frame_checksum_scalar(data, bytes);
}

}  // namespace xf
