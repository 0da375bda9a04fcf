// The blocking topic steps of CPU threads, written once on top of the non-blocking topic_view protocol:
// the host executor's workers and the topic tests share them. GPU blocks never block; they keep a step
// pending across rounds instead (see topic_view.hpp).
//
// Publisher:   t = reserve_claimed(...) | reserve_at(..., o) | reserve_void_at(..., o)
//              → fill t.data → publish_frame(v, t, bytes, tag)   (or publish_void(v, t))  … v.close(end)
// Subscriber:  d = next_frame(v, g, ...) → d.ended: stop → read d.slot / d.data(v) → v.release(g, d.offset)
//
// Thread safety: every function may run concurrently on any number of threads, as the protocol allows
// (any number of publishers, any number of workers per group). A ticket belongs to the thread that
// reserved it and must be finished exactly once (publish_frame or publish_void) before that thread closes.
// Waits spin, yield, then sleep (framework/core/backoff.hpp) and throw run_aborted once `abort` is set; a
// step that need not wait never throws run_aborted. Waited nanoseconds are added (a plain add) to the
// optional counter, which must therefore belong to the calling thread; fold it into shared stats afterwards.
// The view (and the topic owning it) must outlive every call; tickets and deliveries point into it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "topics/topic_view.hpp"

namespace xf {

/// An output slot reserved at `offset`: every group released its previous occupant (offset - capacity)
/// and that occupant's frame went back to the heap. `frame`/`data` is the frame allocated for it, or
/// no_frame/nullptr for a void reservation. Until the ticket is published, only its holder touches the
/// slot: the next occupant (offset + capacity) waits for this offset to be published and released.
struct publish_ticket {
  std::uint64_t offset;
  std::uint32_t frame;  ///< heap frame index, or no_frame
  std::byte* data;      ///< frame_bytes writable bytes, or nullptr; valid until published

  bool has_frame() const noexcept { return frame != no_frame; }
};

/// A source's step: claims the next offset of the topic, waits for its slot (backpressure), reclaims the
/// old frame and allocates one. `topic` names the topic in errors. Throws run_aborted when aborted while
/// waiting (the claimed offset is then never published: only valid when the whole run unwinds), and
/// precondition_error if the heap has no free frame (a broken invariant: one frame per slot).
publish_ticket reserve_claimed(const topic_view& view, std::string_view topic, const std::atomic<bool>& abort,
                               std::uint64_t* blocked_ns = nullptr);

/// A 1:1 operator's step: as reserve_claimed, at the given offset (its input's offset).
publish_ticket reserve_at(const topic_view& view, std::string_view topic, std::uint64_t offset,
                          const std::atomic<bool>& abort, std::uint64_t* blocked_ns = nullptr);

/// Reserves the slot at `offset` for a void publish: waits and reclaims like reserve_at, allocates no
/// frame. For a 1:1 operator whose input at `offset` is void.
publish_ticket reserve_void_at(const topic_view& view, std::uint64_t offset, const std::atomic<bool>& abort,
                               std::uint64_t* blocked_ns = nullptr);

/// Publishes the ticket's frame with `bytes` valid bytes (≤ frame_bytes: the caller checks and names the
/// operator at fault) and the source offset `tag`. Release order: the frame's contents written before
/// are visible to every subscriber that sees the offset ready.
void publish_frame(const topic_view& view, const publish_ticket& ticket, std::uint64_t bytes,
                   std::uint64_t tag, std::uint64_t born_ns = 0);

/// Publishes "nothing at this offset", returning the ticket's frame (if any) to the heap: a source that
/// claimed an offset and then found its input ended, or a 1:1 operator passing a void input on.
void publish_void(const topic_view& view, const publish_ticket& ticket);

/// What a subscriber worker got from next_frame.
struct delivery {
  std::uint64_t offset;
  bool ended;              ///< offset ≥ end of stream: nothing more for this worker; do not release
  const index_slot* slot;  ///< the published slot (nullptr when ended); valid until released

  bool is_void() const noexcept { return slot != nullptr && (slot->flags & slot_void) != 0; }
  /// The frame's bytes (slot->bytes of them valid); nullptr when ended or void. Valid until released.
  const std::byte* data(const topic_view& view) const noexcept {
    return slot == nullptr || slot->frame == no_frame ? nullptr : view.frame_data(slot->frame);
  }
};

/// Takes group `group`'s next offset and waits until it is published (ready) or beyond the end of
/// stream (ended). Unless ended, the caller must release it (view.release(group, d.offset)) once done
/// reading, after which the slot and frame may be reused. Each offset goes to exactly one worker of the
/// group. Throws run_aborted when aborted while waiting (the taken offset is then lost to the group).
delivery next_frame(const topic_view& view, std::uint32_t group, const std::atomic<bool>& abort,
                    std::uint64_t* waited_ns = nullptr);

}  // namespace xf
