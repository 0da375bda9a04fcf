// A shared object's versions by stream position, as readers see them: a trivially copyable view, every step
// XF_HOST_DEVICE, so the GPU kernel's round and the host's threads resolve a frame's version with the same
// code (framework/shared/DESIGN.md, "Objects in topologies").
//
// The writer publishes version n at offset o into buffer n % versions; the reader of frame o uses the
// version with the largest first offset ≤ o. That is a function of o (the same on every run, on either
// executor) only once no version at or below o is still to come: the writer keeps a horizon h, the offset
// below which its versions are final, and a reader takes frame o only once o < h.
//
// Who writes which word (all in one `version_words`, host memory — pinned and mapped where a GPU reads it):
//   first[i], number[i]  the writer, after buffer i holds the version's bytes on every reader side; first[i]
//                        with release order, after number[i]. A buffer is rewritten only once every reader
//                        released every frame that used it, so a reader that picked buffer i reads it whole.
//   horizon              the writer (release), after the entries it covers.
//   seen                 readers: the highest version number one of them resolved (relaxed; for measuring
//                        how soon a version reaches its readers, not for ordering).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"

namespace xf::shared {

/// The most buffers an object's versions rotate through.
inline constexpr std::uint32_t max_object_versions = 64;
/// first[i] of a buffer that holds no version yet; horizon once the writer is done.
inline constexpr std::uint64_t no_version_offset = ~std::uint64_t{0};

struct alignas(64) version_words {
  std::uint64_t horizon;
  std::uint64_t seen;
  std::uint64_t first[max_object_versions];
  std::uint64_t number[max_object_versions];
};
static_assert(std::is_trivially_copyable_v<version_words>);

struct version_table_view {
  version_words* words;
  const std::byte* buffers;  ///< [versions × stride] on the reading side (device memory in a GPU's view)
  std::uint64_t stride;      ///< bytes from one buffer to the next
  std::uint64_t bytes;       ///< the object's
  std::uint32_t versions;

  /// Whether the version of frame `offset` is final (acquire: the entries below the horizon, and their
  /// buffers' bytes, are visible after a true answer).
  XF_HOST_DEVICE bool ready(std::uint64_t offset) const { return offset < load_acquire(words->horizon); }
  XF_HOST_DEVICE std::uint64_t horizon() const { return load_acquire(words->horizon); }

  /// Which buffer holds a frame's version, and for which offsets that answer holds: [first, next).
  struct choice {
    std::uint32_t buffer;
    std::uint64_t first;  ///< the version's first offset
    std::uint64_t next;   ///< the next version's first offset, or the horizon read (nothing known beyond)
  };
  /// The version of frame `offset` < `horizon` (a value of horizon() read before): the entry with the
  /// largest first offset ≤ offset. An entry the writer rewrites meanwhile is for a version published at or
  /// above the horizon, so above `offset`: old or new, it is never the one chosen, and every frame in
  /// [first, next) would choose the same buffer — which is not reused while one of them is unreleased.
  XF_HOST_DEVICE choice choose(std::uint64_t offset, std::uint64_t horizon) const {
    choice c{0, 0, horizon};
    for (std::uint32_t i = 0; i < versions; ++i) {
      const std::uint64_t f = load_acquire(words->first[i]);
      if (f <= offset) {
        // Two versions at one offset: the initial one and the writer's first, both at 0. The later wins.
        if (f > c.first ||
            (f == c.first && load_relaxed(words->number[i]) >= load_relaxed(words->number[c.buffer]))) {
          c.buffer = i;
          c.first = f;
        }
      } else if (f < c.next) {
        c.next = f;
      }
    }
    return c;
  }
  /// The buffer holding frame `offset`'s version, once ready(offset).
  XF_HOST_DEVICE std::uint32_t buffer_for(std::uint64_t offset) const {
    return choose(offset, horizon()).buffer;
  }
  XF_HOST_DEVICE const std::byte* data(std::uint32_t buffer) const { return buffers + buffer * stride; }
  XF_HOST_DEVICE std::uint64_t number(std::uint32_t buffer) const {
    return load_relaxed(words->number[buffer]);
  }

  /// A reader resolved version `n`: raises `seen` (a racing lower store may win for a moment; it only
  /// measures).
  XF_HOST_DEVICE void saw(std::uint64_t n) const {
    if (load_relaxed(words->seen) < n) store_relaxed(words->seen, n);
  }
};
static_assert(std::is_trivially_copyable_v<version_table_view>);

}  // namespace xf::shared
