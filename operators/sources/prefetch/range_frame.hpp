// The work orders of the address stage: what prefetch_ranges publishes (a CPU source that knows the
// dataset's size) and the record and byte generators read on the GPU (which cannot look at the file).
// The format is defined here only; both sides use this header.
//
// A frame of u64 elements: element 0 range_frame_magic, element 1 the frame's first record (or byte),
// element 2 how many, every other element zero. It is as long as the address frame it paces, since a GPU
// map's output is as long as its input.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"

namespace xf::prefetch {

/// "XFRANGE" and a format version: a generator paced by anything else (a sequence_source) fails the frame
/// instead of reading its elements as a range.
inline constexpr std::uint64_t range_frame_magic = 0x5846'5241'4e47'4501;
inline constexpr std::uint64_t range_frame_words = 3;

/// Records (or bytes) [first, first + count) of the dataset.
struct record_range {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};

/// The range a frame of `count` elements carries; false when it is not a range frame.
XF_HOST_DEVICE inline bool read_range(const std::uint64_t* in, std::uint64_t count, record_range& range) {
  if (in == nullptr || count < range_frame_words || in[0] != range_frame_magic) return false;
  range.first = in[1];
  range.count = in[2];
  return true;
}

}  // namespace xf::prefetch
