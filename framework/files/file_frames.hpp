// Files streamed back to back as frames (the file source's): frame o of a stream over files f0, f1, …
// is the next frame_capacity bytes of the current file. Each file's last frame may be short, no frame spans
// two files, and an empty file adds none — so every frame is one range of one file, and a frame's bytes
// never depend on where the file before it ended. Plain header: the same on both processors.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"

namespace xf {

/// Where a frame's bytes are: `bytes` of file `file` from byte `offset`; bytes 0 past the stream's end.
struct frame_place {
  std::uint32_t file = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

XF_HOST_DEVICE inline std::uint64_t frames_in_file(std::uint64_t size, std::uint64_t frame_capacity) {
  return size / frame_capacity + (size % frame_capacity != 0 ? 1 : 0);
}

/// Frames of the whole stream.
XF_HOST_DEVICE inline std::uint64_t frames_of_files(const std::uint64_t* sizes, std::uint32_t count,
                                                    std::uint64_t frame_capacity) {
  std::uint64_t frames = 0;
  for (std::uint32_t f = 0; f < count; ++f) frames += frames_in_file(sizes[f], frame_capacity);
  return frames;
}

/// Frame `frame` of the stream.
XF_HOST_DEVICE inline frame_place place_of_frame(const std::uint64_t* sizes, std::uint32_t count,
                                                 std::uint64_t frame_capacity, std::uint64_t frame) {
  for (std::uint32_t f = 0; f < count; ++f) {
    const std::uint64_t n = frames_in_file(sizes[f], frame_capacity);
    if (frame < n) {
      const std::uint64_t first = frame * frame_capacity;
      const std::uint64_t left = sizes[f] - first;
      return {f, first, left < frame_capacity ? left : frame_capacity};
    }
    frame -= n;
  }
  return {count, 0, 0};
}

}  // namespace xf
