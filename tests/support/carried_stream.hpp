// A stream written into one topic and read from another it was carried to (a bridge through a loopback
// carrier, or a link between MPI ranks): the writer's offsets, with voids, empty and partial frames and
// per-offset fields, and a reader that checks every offset of a group once, in order, against them.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "tests/support/topic_fixture.hpp"
#include "topics/topic_driver.hpp"

namespace xf::test {

/// What the writer publishes at each offset. Only a frame's valid bytes are carried, so the checked words
/// lie inside them: the offset first, the pattern next (from 24 bytes on), its complement last.
struct carried_stream {
  std::uint64_t salt = 0;

  /// A void every eleventh offset.
  bool void_at(std::uint64_t offset) const { return offset % 11 == 5; }
  /// From 16 bytes to the whole frame, now and then empty.
  std::uint64_t bytes_at(std::uint64_t offset, std::uint64_t frame_bytes) const {
    return offset % 13 == 6 ? 0 : 16 + pattern(offset, salt ^ 3) % (frame_bytes - 15) / 8 * 8;
  }
  std::uint64_t tag_at(std::uint64_t offset) const { return offset + 5; }
  std::uint64_t born_at(std::uint64_t offset) const { return offset * 2; }

  void write(std::byte* data, std::uint64_t offset, std::uint64_t bytes) const {
    if (bytes == 0) return;
    const std::uint64_t p = pattern(offset, salt), q = ~p;
    std::memcpy(data, &offset, 8);
    std::memcpy(data + bytes - 8, &q, 8);
    if (bytes >= 24) std::memcpy(data + 8, &p, 8);
  }
  bool intact(const std::byte* data, std::uint64_t offset, std::uint64_t bytes) const {
    if (bytes == 0) return true;
    std::uint64_t first = 0, second = 0, last = 0;
    const std::uint64_t p = pattern(offset, salt);
    std::memcpy(&first, data, 8);
    std::memcpy(&last, data + bytes - 8, 8);
    if (bytes >= 24) std::memcpy(&second, data + 8, 8);
    return first == offset && last == ~p && (bytes < 24 || second == p);
  }

  /// Publishes offsets [0, frames) into `view` (its only publisher, as a 1:1 operator would) and closes.
  void publish(const topic_view& view, const std::string& topic, std::uint64_t frames,
               const std::atomic<bool>& abort) const {
    for (std::uint64_t o = 0; o < frames; ++o) {
      if (void_at(o)) {
        publish_void(view, reserve_void_at(view, o, abort));
        continue;
      }
      const publish_ticket t = reserve_at(view, topic, o, abort);
      const std::uint64_t bytes = bytes_at(o, view.frame_bytes);
      write(t.data, o, bytes);
      publish_frame(view, t, bytes, tag_at(o), born_at(o));
    }
    view.close(frames);
  }

  /// Reads group `group` of `view` to the end, checking each offset; returns the offsets seen. What is
  /// wrong goes to `failures`, naming `who`.
  std::uint64_t read(const topic_view& view, std::uint32_t group, const std::string& who,
                     const std::atomic<bool>& abort, failure_log& failures) const {
    for (std::uint64_t expected = 0;; ++expected) {
      const delivery d = next_frame(view, group, abort);
      if (d.ended) {
        if (d.offset != expected) failures.add(who + ": ended at " + std::to_string(d.offset));
        return expected;
      }
      const std::string at = who + ": offset " + std::to_string(d.offset);
      if (d.offset != expected) failures.add(at + ", expected " + std::to_string(expected));
      if (void_at(d.offset) != d.is_void()) failures.add(at + (d.is_void() ? " void" : " not void"));
      if (!d.is_void() &&
          (d.slot->bytes != bytes_at(d.offset, view.frame_bytes) || d.slot->tag != tag_at(d.offset) ||
           d.slot->born_ns != born_at(d.offset) || !intact(d.data(view), d.offset, d.slot->bytes)))
        failures.add(at + " arrived changed");
      view.release(group, d.offset);
    }
  }
};

}  // namespace xf::test
