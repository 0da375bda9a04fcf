// The in-memory layout of a shared topic, shared by the host executor and the GPU executor.
//
// Layers: the catalog (topic_view below: sizes and pointers, copied to each side, read-only
// while running), the offset index (one 64-byte slot per offset in flight), and the frames (a heap with a
// free bitmap). Every word has ONE writing side, so crossing PCIe needs only acquire/release ordering:
//
//   field                      written by                      read by
//   index_slot (all fields)    the publisher of that offset    subscribers (seq with acquire)
//   released[g][slot]          subscriber group g's workers    publishers (acquire), before reusing a slot
//   group_cursor[g]            subscriber group g's workers    nobody else (atomic within g's side)
//   claim / close words        the publishing side             the publishing side
//   end_offset                 the last publisher to close     subscribers (acquire)
//   heap bitmap                the publishing side             the publishing side
//
// A topic's publishers all run on one side and each subscriber group on one side (validation enforces
// it), so within-side atomics suffice for the words a side shares among its own workers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace xf {

inline constexpr std::uint64_t no_offset = ~std::uint64_t{0};
inline constexpr std::uint32_t no_frame = ~std::uint32_t{0};
inline constexpr std::size_t topic_line_bytes = 64;  // one writer per line: never share across writers
inline constexpr std::uint64_t frame_alignment_bytes = 4096;

enum slot_flags : std::uint32_t {
  slot_void = 1u << 0,  ///< no frame at this offset (a source ended after claiming it): skipped by sinks
};

/// One offset-index entry. The publisher of offset o fills frame/bytes/tag/flags, then stores
/// seq = o + 1 with release order; a subscriber that loads seq == o + 1 with acquire order sees the rest.
struct alignas(64) index_slot {
  std::uint64_t seq;      ///< offset + 1 of the frame published here; 0: never used
  std::uint64_t bytes;    ///< valid bytes of the frame
  std::uint64_t tag;      ///< the source offset this frame descends from (end-to-end sequence check)
  std::uint32_t frame;    ///< frame index in the heap, or no_frame for a void slot
  std::uint32_t flags;    ///< slot_flags
  std::uint64_t born_ns;  ///< when the source published the frame this one descends from (host steady clock)
  std::uint64_t reserved[3];
};
static_assert(sizeof(index_slot) == 64, "one offset-index slot per 64-byte line");

/// A 64-byte line holding one word, so words of different writers never share a line.
struct alignas(64) padded_word {
  std::uint64_t value;
  std::uint64_t reserved[7];
};
static_assert(sizeof(padded_word) == 64);

}  // namespace xf
