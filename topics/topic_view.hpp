// The non-blocking topic protocol: a trivially copyable view (the catalog replica each side holds) with
// the steps publishers and subscribers take. Every step is XF_HOST_DEVICE so the GPU executor's kernel
// and the host executor run the same code. Blocking (backpressure, waiting for a frame) is the caller's
// business: CPU threads wait with a backoff (topic_wait.hpp); GPU blocks keep a step pending across rounds.
//
// Publisher of offset o:  [claim o] → wait slot_free(o) → reclaim(o) → alloc_frame → fill →
//                         publish(o, …)  (or publish_void)  … finally close(end)
//                         where publish = prepare_slot(o, …) then commit(o) (or, after the caller's own
//                         release fence, commit_relaxed(o)): every writer of a slot goes through these.
// Subscriber in group g:  o = take(g) → wait poll(o) != pending → (ended: stop) → read → release(g, o)
//
// topics/model/slot_protocol.pml models these steps (CPU and GPU sides, two publishers, two groups, plain
// stores reordered until a release or fence) and SPIN checks it in CI (tools/check_slot_model.sh): a change
// to a step's order or to a word's writer changes the model too.
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"
#include "topics/topic_layout.hpp"

namespace xf {

enum class poll_result : std::uint8_t { ready, pending, ended };

struct topic_view {
  std::uint64_t frame_bytes;
  std::uint32_t capacity;    ///< offset-index slots = frames in flight
  std::uint32_t groups;      ///< subscriber groups
  std::uint32_t publishers;  ///< publisher workers that will each close once
  std::uint32_t heap_frames;
  std::uint32_t heap_words;     ///< 64-bit words of the heap bitmap
  std::uint32_t cursor_stride;  ///< padded words from one group's cursor to the next (a page apart)

  index_slot* slots;           ///< [capacity]
  std::uint64_t* released;     ///< [groups * capacity]: offset + 1 last released by group g at slot s
  padded_word* group_cursor;   ///< [groups * cursor_stride]: next offset group g hands out, at g * stride
  padded_word* claim;          ///< next offset a claiming publisher gets
  padded_word* closed;         ///< publishers closed so far
  padded_word* end_max;        ///< largest end reported by a closing publisher
  padded_word* end_offset;     ///< the end of stream, no_offset until every publisher closed
  std::uint64_t* heap_bitmap;  ///< [heap_words]: bit i set = frame i in use
  std::byte* frames;           ///< [heap_frames * frame_bytes]
  /// Null, except in the GPU kernel's view of a topic the copy engines carry (copy_bridge.hpp): the seq
  /// words the kernel polls or publishes instead of slots[].seq — [capacity], one per slot — while `frames`
  /// there points at the frames' replica in device memory. The bridge carries each publish across.
  std::uint64_t* bridge_seq;

  // ---- publisher side -------------------------------------------------------------------------------

  /// Claims the next offset for a source publisher (relaxed: the slot protocol orders the data).
  XF_HOST_DEVICE std::uint64_t claim_offset() const {
    return fetch_add_relaxed(claim->value, std::uint64_t{1});
  }
  /// Claims `n` consecutive offsets at once (a GPU file source's per-block run: one block reads them in
  /// order, so its reads of the file run sequentially); returns the first.
  XF_HOST_DEVICE std::uint64_t claim_offsets(std::uint64_t n) const {
    return fetch_add_relaxed(claim->value, n);
  }

  XF_HOST_DEVICE std::uint32_t slot_of(std::uint64_t offset) const {
    return static_cast<std::uint32_t>(offset % capacity);
  }

  /// True when every group released the slot's previous occupant (offset - capacity), so offset may be
  /// written there. Acquire pairs with the subscribers' release: their reads of the old frame happened
  /// before we overwrite it.
  XF_HOST_DEVICE bool slot_free(std::uint64_t offset) const {
    const std::uint64_t want = offset >= capacity ? offset - capacity + 1 : 0;
    const std::uint32_t s = slot_of(offset);
    for (std::uint32_t g = 0; g < groups; ++g)
      if (load_acquire(released[std::uint64_t{g} * capacity + s]) != want) return false;
    return true;
  }

  /// After slot_free(offset): returns the previous occupant's frame to the heap. Only the publisher of
  /// `offset` touches the slot now (the next occupant waits for offset's release), so plain reads suffice.
  XF_HOST_DEVICE void reclaim(std::uint64_t offset) const {
    index_slot& slot = slots[slot_of(offset)];
    if (load_relaxed(slot.seq) != 0 && slot.frame != no_frame) free_frame(slot.frame);
  }

  /// Takes a free frame from the heap, preferably frame hint % heap_frames. Never fails while each slot holds
  /// at most one frame and the heap has `capacity` frames; returns no_frame only if that invariant is broken.
  XF_HOST_DEVICE std::uint32_t alloc_frame(std::uint64_t hint) const {
    // First choice: frame hint % heap_frames. Publishers pass their offset, and the slot's previous
    // occupant (offset - capacity) had that frame, freed by reclaim just before: so each offset gets the
    // same frame every time round, and a source publishing in place finds its bytes still there.
    {
      const std::uint32_t preferred = static_cast<std::uint32_t>(hint % heap_frames);
      const std::uint64_t mask = std::uint64_t{1} << (preferred % 64);
      if ((fetch_or_acq_rel(heap_bitmap[preferred / 64], mask) & mask) == 0) return preferred;
    }
    for (std::uint32_t pass = 0; pass < 64; ++pass) {
      for (std::uint32_t i = 0; i < heap_words; ++i) {
        const std::uint32_t w = static_cast<std::uint32_t>((hint / 64 + i) % heap_words);
        std::uint64_t seen = load_relaxed(heap_bitmap[w]);
        while (~seen != 0) {
          const std::uint32_t bit = lowest_zero_bit(seen);
          const std::uint64_t index = std::uint64_t{w} * 64 + bit;
          if (index >= heap_frames) break;
          const std::uint64_t mask = std::uint64_t{1} << bit;
          const std::uint64_t before = fetch_or_acq_rel(heap_bitmap[w], mask);
          if ((before & mask) == 0) return static_cast<std::uint32_t>(index);
          seen = before | mask;
        }
      }
    }
    return no_frame;
  }

  XF_HOST_DEVICE void free_frame(std::uint32_t frame) const {
    fetch_and_release(heap_bitmap[frame / 64], ~(std::uint64_t{1} << (frame % 64)));
  }

  XF_HOST_DEVICE std::byte* frame_data(std::uint32_t frame) const {
    return frames + std::uint64_t{frame} * frame_bytes;
  }

  /// The frame a slot-indexed publisher writes for `offset`: frame slot_of(offset). A topic whose only
  /// publisher is a 1:1 map (validation enforces it for maps) needs no heap: the slot's previous frame is
  /// free exactly when the slot is (slot_free), so frame = slot never collides. The GPU kernel publishes
  /// this way, without touching the bitmap.
  XF_HOST_DEVICE std::uint32_t slot_frame(std::uint64_t offset) const { return slot_of(offset); }

  /// The word whose value offset + 1 publishes `offset`: the slot's seq, or in the kernel's view of a
  /// bridged topic the bridge's.
  XF_HOST_DEVICE std::uint64_t& seq_word(std::uint64_t offset) const {
    return bridge_seq != nullptr ? bridge_seq[slot_of(offset)] : slots[slot_of(offset)].seq;
  }

  /// The publish protocol, split for publishers that order many slots with one fence. While offset's
  /// slot is owned (after slot_free(offset), before its seq says offset + 1) nobody reads its fields, so
  /// prepare_slot writes them with plain stores. A commit then makes them and the frame's bytes visible:
  /// a subscriber that acquires seq == offset + 1 sees everything written before the commit.
  XF_HOST_DEVICE void prepare_slot(std::uint64_t offset, std::uint32_t frame, std::uint64_t bytes,
                                   std::uint64_t tag, std::uint32_t flags = 0,
                                   std::uint64_t born_ns = 0) const {
    index_slot& slot = slots[slot_of(offset)];
    slot.frame = frame;
    slot.bytes = bytes;
    slot.tag = tag;
    slot.flags = flags;
    slot.born_ns = born_ns;
  }
  /// prepare_slot's fields for "no frame at offset".
  XF_HOST_DEVICE void prepare_void(std::uint64_t offset) const {
    prepare_slot(offset, no_frame, 0, offset, slot_void);
  }

  /// Commits offset with release order: its slot's fields and frame bytes happen before the seq word.
  XF_HOST_DEVICE void commit(std::uint64_t offset) const { store_release(seq_word(offset), offset + 1); }

  /// Commits offset with a relaxed store. The caller issued a release fence of the publishing side's scope
  /// (the kernel: one system-scope fence a round for all its slots) after every write the publish covers,
  /// which orders them before this store as commit's release would; one fence per round instead of one
  /// per store, each a PCIe round trip.
  XF_HOST_DEVICE void commit_relaxed(std::uint64_t offset) const {
    store_relaxed(seq_word(offset), offset + 1);
  }

  /// Makes `frame` (bytes valid) visible at `offset`: prepare_slot, then commit.
  XF_HOST_DEVICE void publish(std::uint64_t offset, std::uint32_t frame, std::uint64_t bytes,
                              std::uint64_t tag, std::uint32_t flags = 0, std::uint64_t born_ns = 0) const {
    prepare_slot(offset, frame, bytes, tag, flags, born_ns);
    commit(offset);
  }

  /// Publishes "no frame at offset" (after reclaim): subscribers release it without seeing data.
  XF_HOST_DEVICE void publish_void(std::uint64_t offset) const {
    prepare_void(offset);
    commit(offset);
  }

  /// A publisher worker is done; `end` is one past the last offset it published (0 if none). When the
  /// last worker closes, the end of stream becomes max(end) over workers. Every offset below it has been
  /// published (frame or void) by then, because each worker closes after its own publishes.
  /// Returns true for the closing call that ended the stream.
  XF_HOST_DEVICE bool close(std::uint64_t end) const {
    fetch_max_acq_rel(end_max->value, end);
    const std::uint64_t done = fetch_add_acq_rel(closed->value, std::uint64_t{1}) + 1;
    if (done != publishers) return false;
    store_release(end_offset->value, load_acquire(end_max->value));
    return true;
  }

  // ---- subscriber side ------------------------------------------------------------------------------

  /// Hands the next offset of group g to one of its workers (each offset to exactly one worker).
  XF_HOST_DEVICE std::uint64_t take(std::uint32_t group) const {
    return fetch_add_relaxed(group_cursor[std::uint64_t{group} * cursor_stride].value, std::uint64_t{1});
  }

  /// Whether `offset` is published: its seq word says offset + 1 (acquire: its slot and frame are
  /// visible after a true answer).
  XF_HOST_DEVICE bool published(std::uint64_t offset) const {
    return load_acquire(seq_word(offset)) == offset + 1;
  }

  /// Is `offset` published (ready), not yet (pending), or beyond the end of stream (ended)? seq is read
  /// before end_offset: end is stored after every publish below it, so pending-then-ended is exact.
  XF_HOST_DEVICE poll_result poll(std::uint64_t offset) const {
    if (published(offset)) return poll_result::ready;
    if (offset >= load_acquire(end_offset->value)) return poll_result::ended;
    return poll_result::pending;
  }

  /// The slot of a ready offset (valid until this group releases it).
  XF_HOST_DEVICE const index_slot& slot(std::uint64_t offset) const { return slots[slot_of(offset)]; }

  /// Group g is done with `offset`: the publisher of offset + capacity may reuse the slot and frame.
  XF_HOST_DEVICE void release(std::uint32_t group, std::uint64_t offset) const {
    store_release(released_word(group, offset), offset + 1);
  }
  /// release with a relaxed store, after a release fence of the caller's (as commit_relaxed): the group's
  /// reads of the frame happen before the publisher of offset + capacity may overwrite it.
  XF_HOST_DEVICE void release_relaxed(std::uint32_t group, std::uint64_t offset) const {
    store_relaxed(released_word(group, offset), offset + 1);
  }
  /// Whether group g released `offset` (acquire: its reads of the frame happened before).
  XF_HOST_DEVICE bool released_by(std::uint32_t group, std::uint64_t offset) const {
    return load_acquire(released_word(group, offset)) == offset + 1;
  }

  /// Whether group g released `offset` or a later occupant of its slot (which it can only have taken once
  /// `offset` was released): a look that later releases cannot make false.
  XF_HOST_DEVICE bool released_or_later(std::uint32_t group, std::uint64_t offset) const {
    return load_acquire(released_word(group, offset)) >= offset + 1;
  }

  /// The end of stream if known, else no_offset.
  XF_HOST_DEVICE std::uint64_t end() const { return load_acquire(end_offset->value); }

 private:
  XF_HOST_DEVICE std::uint64_t& released_word(std::uint32_t group, std::uint64_t offset) const {
    return released[std::uint64_t{group} * capacity + slot_of(offset)];
  }
  XF_HOST_DEVICE static std::uint32_t lowest_zero_bit(std::uint64_t word) {
#if XF_DEVICE_PASS
    return static_cast<std::uint32_t>(__ffsll(static_cast<long long>(~word)) - 1);
#else
    return static_cast<std::uint32_t>(__builtin_ctzll(~word));
#endif
  }
};

static_assert(std::is_trivially_copyable_v<topic_view>, "the catalog replica is copied to each side");

}  // namespace xf
