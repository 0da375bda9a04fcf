// word_cuts: the cut positions of a text in frames of whole words.
#include "operators/sources/word_cuts.hpp"

#include <algorithm>

namespace xf {

word_cuts::word_cuts(std::span<const std::byte> text, std::string_view separators, std::uint64_t stride,
                     std::uint64_t max_word_bytes)
    : text_(text), stride_(stride), max_word_bytes_(max_word_bytes) {
  for (const char c : separators) is_separator_[static_cast<unsigned char>(c)] = true;
}

std::uint64_t word_cuts::cut(std::uint64_t p) const {
  if (p >= text_.size()) return text_.size();
  while (p > 0 && p < text_.size() && !separator(text_[p - 1])) ++p;
  return p;
}

word_cuts::range word_cuts::frame(std::uint64_t o, std::optional<long_word>& too_long) const {
  const std::uint64_t begin = cut(o * stride_);
  const std::uint64_t nominal_end = std::min<std::uint64_t>((o + 1) * stride_, text_.size());
  const std::uint64_t end = cut(nominal_end);
  // cut() walked past the end of the word under nominal_end (and its separator): that word started before
  // nominal_end, so it is at least as long as the walk less one.
  if (end - nominal_end >= max_word_bytes_) {
    std::uint64_t start = nominal_end;
    while (start > 0 && !separator(text_[start - 1])) --start;
    const std::uint64_t word_end = end > start && separator(text_[end - 1]) ? end - 1 : end;
    if (word_end - start > max_word_bytes_) too_long = long_word{start, word_end - start};
  }
  return {begin, end};
}

}  // namespace xf
