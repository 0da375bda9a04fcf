// Where a text may be cut into frames of whole words: shared by text_source (which copies the frames) and
// prefetch_ranges in its words mode (which hands the same ranges to a GPU address stage), so both cut a
// text at the same places.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace xf {

/// Words are maximal runs of bytes that are not separators. With stride S, frame o holds the bytes
/// [cut(o·S), cut(min((o+1)·S, size))), where cut(p) is the first position ≥ p that is not inside a word (p
/// itself when p is 0, the text's size, or right after a separator): exactly the words that start in
/// [o·S, (o+1)·S) and their separators, at most S + max_word_bytes bytes.
class word_cuts {
 public:
  struct range {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
  };
  /// A word longer than max_word_bytes, met while cutting: where it starts and its length.
  struct long_word {
    std::uint64_t start = 0;
    std::uint64_t bytes = 0;
  };

  word_cuts() = default;
  word_cuts(std::span<const std::byte> text, std::string_view separators, std::uint64_t stride,
            std::uint64_t max_word_bytes);

  std::uint64_t frames() const noexcept { return stride_ == 0 ? 0 : (text_.size() + stride_ - 1) / stride_; }
  std::uint64_t stride() const noexcept { return stride_; }

  /// Frame o's bytes, or the over-long word at its end (o < frames()).
  range frame(std::uint64_t o, std::optional<long_word>& too_long) const;

 private:
  std::uint64_t cut(std::uint64_t p) const;
  bool separator(std::byte b) const noexcept { return is_separator_[static_cast<unsigned char>(b)]; }

  std::span<const std::byte> text_;
  bool is_separator_[256] = {};
  std::uint64_t stride_ = 0;
  std::uint64_t max_word_bytes_ = 0;
};

}  // namespace xf
