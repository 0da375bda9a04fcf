// The word-count scan's building blocks: classifying 64 text bytes at once into bit masks of letters and
// separators (SSE2 where the compiler targets it, portable SWAR otherwise; both always compiled so tests
// can compare them), and a word's table key from its position and length.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "apps/wordcount/word_table.hpp"
#include "apps/wordcount/wordcount_format.hpp"

namespace xf::apps::wordcount {

static_assert(std::endian::native == std::endian::little, "the scan reads text bytes as little-endian words");

/// Bit i describes byte i of a 64-byte block.
struct block_masks {
  std::uint64_t letters = 0;
  std::uint64_t separators = 0;
};

namespace detail {
/// Bit 7 of each byte of `highs` (the rest zero) gathered into bits 0..7.
constexpr std::uint64_t gather_high_bits(std::uint64_t highs) noexcept {
  return (highs * 0x02040810204081ull) >> 56;
}
/// Bit 7 set in each byte of `v` equal to `c`, exactly (no carries cross bytes).
constexpr std::uint64_t bytes_equal(std::uint64_t v, unsigned char c) noexcept {
  constexpr std::uint64_t lows = 0x7f7f7f7f7f7f7f7full, highs = 0x8080808080808080ull;
  const std::uint64_t y = v ^ (0x0101010101010101ull * c);  // zero bytes where equal
  return ~(((y & lows) + lows) | y) & highs;
}
}  // namespace detail

/// Portable: eight 8-byte words, each classified with non_letter_mask / bytes_equal.
inline block_masks classify_block_swar(const char* p) noexcept {
  constexpr std::uint64_t highs = 0x8080808080808080ull;
  block_masks m;
  for (unsigned k = 0; k < 8; ++k) {
    std::uint64_t v;
    std::memcpy(&v, p + 8 * k, 8);
    const std::uint64_t letters = ~non_letter_mask(v) & highs;
    const std::uint64_t separators = detail::bytes_equal(v, ' ') | detail::bytes_equal(v, '\n');
    m.letters |= detail::gather_high_bits(letters) << (8 * k);
    m.separators |= detail::gather_high_bits(separators) << (8 * k);
  }
  return m;
}

#if defined(__SSE2__)
/// SSE2: four 16-byte compares and movemasks per class.
inline block_masks classify_block_sse2(const char* p) noexcept {
  // c is a letter iff (signed)(c + (128 - 'a')) < -128 + 26: the add maps 'a'..'z' onto -128..-103.
  const __m128i shift = _mm_set1_epi8(static_cast<char>(128 - 'a'));
  const __m128i limit = _mm_set1_epi8(static_cast<char>(-128 + 26));
  const __m128i space = _mm_set1_epi8(' '), newline = _mm_set1_epi8('\n');
  block_masks m;
  for (unsigned k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i letter = _mm_cmplt_epi8(_mm_add_epi8(v, shift), limit);
    const __m128i separator = _mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, newline));
    m.letters |= static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(letter)))
                 << (16 * k);
    m.separators |= static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(separator)))
                    << (16 * k);
  }
  return m;
}
#endif

/// The 64 bytes at `p` (all readable) classified.
inline block_masks classify_block(const char* p) noexcept {
#if defined(__SSE2__)
  return classify_block_sse2(p);
#else
  return classify_block_swar(p);
#endif
}

/// The low `n` bytes of a word kept, the rest cleared (n <= 8).
constexpr std::uint64_t keep_bytes(std::uint64_t v, std::uint64_t n) noexcept {
  return n >= 8 ? v : v & ((std::uint64_t{1} << (8 * n)) - 1);
}

/// make_word_key(data + begin, length) without a loop for words of up to 16 letters that leave 16 readable
/// bytes from their start (the common case).
inline word_key word_key_at(const char* data, std::uint64_t size, std::uint64_t begin,
                            std::uint64_t length) noexcept {
  if (length > 16 || size - begin < 16) return make_word_key(data + begin, length);
  std::uint64_t c0, c1;
  std::memcpy(&c0, data + begin, 8);
  std::memcpy(&c1, data + begin + 8, 8);
  c0 = keep_bytes(c0, length);
  c1 = length > 8 ? keep_bytes(c1, length - 8) : 0;
  const std::uint64_t h1 = word_hash_step(0, c0);
  const std::uint64_t h2 = word_hash_step(h1, c1);
  word_key k;
  k.hash = word_hash_finish(length > 8 ? h2 : h1, length);
  k.head[0] = c0;
  k.head[1] = c1;
  return k;
}

}  // namespace xf::apps::wordcount
