// The word-count dataset (BigKernel §V "Word Count"): plain ASCII text whose every byte is read, a
// variable-length record format (a word ends where a separator is found).
//
// File layout: bytes in {'a'..'z', ' ', '\n'} only. A word is a maximal run of lowercase letters; words are
// separated by spaces and newlines. The generator writes exactly one separator between words, lines of
// 1..max_words_per_line words, and ends the file with '\n'; the reference also accepts runs of separators
// (empty words are not words) and a last word without a newline. Any other byte makes the file malformed:
// the reference names its offset. No header, no index: a reader finds words only by reading every byte.
#pragma once

#include <cstdint>

namespace xf::apps::wordcount {

constexpr bool is_letter(unsigned char c) noexcept {
  return c >= 'a' && c <= 'z';
}
constexpr bool is_separator(unsigned char c) noexcept {
  return c == ' ' || c == '\n';
}

/// Bits 7, 15, …, 63 of the result are set for the bytes of `v` (8 text bytes, little-endian: the first
/// byte is the low one) that are not lowercase letters; exact per byte (no carries cross bytes).
constexpr std::uint64_t non_letter_mask(std::uint64_t v) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  const std::uint64_t low7 = v & ~highs;                           // <= 0x7f per byte
  const std::uint64_t at_least_a = low7 + ones * (0x80 - 'a');     // bit 7 set iff low7 >= 'a'
  const std::uint64_t above_z = low7 + ones * (0x80 - ('z' + 1));  // bit 7 set iff low7 > 'z'
  return (~at_least_a | above_z | v) & highs;  // `| v`: bytes >= 0x80 are not letters either
}

}  // namespace xf::apps::wordcount
