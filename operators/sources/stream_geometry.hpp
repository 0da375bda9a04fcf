// How a source cuts a stream of known length into frames of its output topic's size: frame o holds bytes
// [o·frame_bytes, min((o+1)·frame_bytes, total_bytes)); only the last frame may be short.
#pragma once

#include <algorithm>
#include <cstdint>

#include "framework/model/operator.hpp"

namespace xf {

struct frame_span {
  std::uint64_t first_byte = 0;
  std::uint64_t bytes = 0;
};

struct stream_geometry {
  std::uint64_t frame_bytes = 0;
  std::uint64_t total_bytes = 0;

  /// Frames in the stream (the last one possibly short); 0 for an empty stream.
  std::uint64_t frame_count() const {
    return frame_bytes == 0 ? 0 : total_bytes / frame_bytes + (total_bytes % frame_bytes != 0 ? 1 : 0);
  }
  /// The bytes of frame `offset`, or false past the end. Offsets are compared before any multiplication,
  /// so no offset overflows.
  bool frame_at(std::uint64_t offset, frame_span& span) const {
    if (offset >= frame_count()) return false;
    span.first_byte = offset * frame_bytes;
    span.bytes = std::min(frame_bytes, total_bytes - span.first_byte);
    return true;
  }
};

/// The output topic a source writes, from its setup. Throws run_error naming the operator when the setup
/// has no output, a zero frame size, or a frame size that is not a whole number of elements.
const topic_info& source_output_topic(const operator_setup& setup);

}  // namespace xf
