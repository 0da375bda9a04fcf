// Frames as operators see them: a byte range of a topic frame, with typed views.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "framework/core/element_type.hpp"

namespace xf {

/// Bytes [offset, offset + bytes) of a frame: what a consumer of a columnar frame reads of it.
struct frame_range {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const frame_range&, const frame_range&) = default;
};

/// Sorts ranges[first, end) by offset and joins every two that overlap, touch, or lie at most `gap` bytes
/// apart (the gap then belongs to the joined range): the parts of a frame to copy, fewest for that gap.
inline void join_ranges(std::vector<frame_range>& ranges, std::size_t first, std::uint64_t gap) {
  if (ranges.size() <= first) return;
  std::sort(ranges.begin() + static_cast<std::ptrdiff_t>(first), ranges.end(),
            [](const frame_range& a, const frame_range& b) { return a.offset < b.offset; });
  std::size_t kept = first;
  for (std::size_t i = first + 1; i < ranges.size(); ++i) {
    frame_range& last = ranges[kept];
    const std::uint64_t end = last.offset + last.bytes;
    if (ranges[i].offset <= end + gap)
      last.bytes = std::max(end, ranges[i].offset + ranges[i].bytes) - last.offset;
    else
      ranges[++kept] = ranges[i];
  }
  ranges.resize(kept + 1);
}

/// Cuts `ranges` at `end`: those that start there or after go, one that crosses it ends there.
inline void clip_ranges(std::vector<frame_range>& ranges, std::uint64_t end) {
  std::erase_if(ranges, [end](const frame_range& r) { return r.offset >= end; });
  for (frame_range& r : ranges) r.bytes = std::min(r.bytes, end - r.offset);
}

/// The parts of a frame (published and indexed, or at least its index pages in place) that its readers
/// may touch, appended in frame order: a columnar topic's index pages and the data pages some subscriber
/// may need (operator.hpp: page_reader).
using frame_selector = std::function<void(const std::byte* frame, std::vector<frame_range>& out)>;

/// A published frame handed to a subscriber: read-only, `bytes` valid bytes.
struct frame_in {
  const std::byte* data = nullptr;
  std::uint64_t bytes = 0;
  element_type element = element_type::u8;

  template <class T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data), static_cast<std::size_t>(bytes / sizeof(T))};
  }
};

/// A frame being filled by a publisher: `capacity` bytes of storage; the operator sets `bytes` to the
/// number of valid bytes it wrote (sources must; maps default to the input's valid bytes).
struct frame_out {
  std::byte* data = nullptr;
  std::uint64_t capacity = 0;
  std::uint64_t bytes = 0;
  element_type element = element_type::u8;
  /// Which frame of the topic's heap this is (stable for the run): a source that publishes in place
  /// recognises a frame it filled before and leaves its bytes as they are. ~0 outside a topic (a replay).
  std::uint32_t frame_index = ~std::uint32_t{0};
  /// Set when every subscriber of a columnar topic says which pages it reads: a source may fill only
  /// these parts (the frame's index pages first, then what the selector picks from them) and leave the
  /// rest of the frame as it was, which no reader touches. Null: readers take the whole frame.
  const frame_selector* parts = nullptr;

  template <class T>
  std::span<T> as() const {
    return {reinterpret_cast<T*>(data), static_cast<std::size_t>(capacity / sizeof(T))};
  }
};

}  // namespace xf
