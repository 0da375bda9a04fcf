// Frames as operators see them: a byte range of a topic frame, with typed views.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "framework/core/element_type.hpp"

namespace xf {

/// Bytes [offset, offset + bytes) of a frame: what a consumer of a columnar frame reads of it.
struct frame_range {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

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

  template <class T>
  std::span<T> as() const {
    return {reinterpret_cast<T*>(data), static_cast<std::size_t>(capacity / sizeof(T))};
  }
};

}  // namespace xf
