// The address stage's frame (the BigKernel paper's CPU-side address buffer): what a prefetch_addresses GPU
// operator writes (operators/transforms/prefetch_addresses.hpp) and a prefetch_assembler reads
// (operators/transforms/prefetch_assembler.hpp). The format is defined here only; both sides use this
// header.
//
// A frame of `count` u64 words (as long as the address operator's input frame: a GPU map's output is):
//   word 0                 address_frame_magic (a frame of anything else is refused, not decoded)
//   word 1                 L: the frame's lanes (logical address-generation threads, a parameter)
//   word 2                 W: words per lane region
//   words 3 … 3+L−1        used[l]: words lane l's stream takes in its region (≤ W)
//   words 3+L+l·W …        lane l's region: its encoded addresses (address_stream.hpp), used[l] words,
//                          zeros up to W
//   the rest               zeros (fewer than L words)
// W is as large as the frame allows (address_frame_shape::fit). Every word is written, so a frame is a
// function of what the generator saw (verify sinks replay it byte for byte).
// The assembler puts item k of lane l at (k·L + l)·item_bytes of its data frame (gather.hpp).
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"

namespace xf::prefetch {

/// "XFADDR" and a format version: a topic carrying something else fails loudly at the assembler.
inline constexpr std::uint64_t address_frame_magic = 0x5846'4144'4452'0001;
inline constexpr std::uint64_t address_frame_header_words = 3;

/// Where things are in an address frame of L lanes and W words per lane.
struct address_frame_shape {
  std::uint64_t lanes = 0;           ///< L
  std::uint64_t words_per_lane = 0;  ///< W (0: the frame cannot hold the header and a word per lane)

  /// The shape of a frame of `count` words with `lanes` lanes: W as large as fits, at most 2^32 − 1 (an
  /// address_words capacity).
  XF_HOST_DEVICE static address_frame_shape fit(std::uint64_t count, std::uint64_t lanes) {
    address_frame_shape s{lanes, 0};
    if (lanes == 0 || count < address_frame_header_words + lanes) return s;
    const std::uint64_t w = (count - address_frame_header_words - lanes) / lanes;
    s.words_per_lane = w < 0xffff'ffffu ? w : 0xffff'ffffu;
    return s;
  }
  /// Index of used[lane].
  XF_HOST_DEVICE std::uint64_t used_index(std::uint64_t lane) const {
    return address_frame_header_words + lane;
  }
  /// Index of lane `lane`'s region.
  XF_HOST_DEVICE std::uint64_t region_index(std::uint64_t lane) const {
    return address_frame_header_words + lanes + lane * words_per_lane;
  }
  /// Words the header, the used words and the regions take.
  XF_HOST_DEVICE std::uint64_t words() const { return region_index(lanes); }
};

}  // namespace xf::prefetch
