// The two ends of a topic carried between processes (a bridge): on the writer's side one subscriber
// group of the topic, on the reader's side the topic's only publisher. Each end is a non-blocking state
// machine over topic_view, so what carries the frames (MPI, or a test's loopback) only moves bytes and
// three kinds of message: a frame with its offset and slot fields, a credit, the end of stream. The
// topic's own protocol orders everything else. The writer's side releases a frame only once the carrier
// is done with its bytes, and sends an offset only below the reader's credit (the slots the reader has
// free), so a slow reader holds the writer's publishers back as a slow local group would, and nothing
// queues without bound in between. The reader's side publishes each frame at the same offset with the
// same fields (a void stays void), so offsets, per-group order and the end of stream are the same on
// both sides.
//
// Writer's side:  f = sender.next(credit) → carry f (its bytes stay valid) → sender.sent(f.offset)
//                 … until f.ended: carry the end (f.offset)
// Reader's side:  credit = receiver.credit() → tell the writer's side
//                 frame carried for o: receiver.frame_for(o) ← its bytes → receiver.publish(o, fields)
//                 end carried: receiver.end(e)
//
// Each end belongs to one thread (the carrier's); the topic's other publishers and subscribers run
// concurrently, as the protocol allows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "topics/topic_view.hpp"

namespace xf {

/// A frame the writer's side may carry now, or the end of stream.
struct outgoing_frame {
  std::uint64_t offset = 0;
  bool ended = false;  ///< no frame: the stream ended at `offset`
  std::uint64_t bytes = 0, tag = 0, born_ns = 0;
  std::uint32_t flags = 0;          ///< the slot's: slot_void means no bytes
  const std::byte* data = nullptr;  ///< `bytes` valid bytes (null for a void); valid until sent(offset)

  bool is_void() const noexcept { return (flags & slot_void) != 0; }
};

/// The writer's side: group `group` of the topic, which has no other worker.
class bridge_sender {
 public:
  bridge_sender(const topic_view& view, std::uint32_t group) : view_(view), group_(group) {}

  /// The next offset in order, when it is published and below `credit`; nothing when it is not yet (call
  /// again). Once the stream has ended, the end (every call after, the same).
  std::optional<outgoing_frame> next(std::uint64_t credit);

  /// The carrier is done with `offset`'s bytes (a frame next() returned): the group releases it.
  void sent(std::uint64_t offset) const { view_.release(group_, offset); }

  /// The offset next() returns next (frames before it were returned).
  std::uint64_t next_offset() const noexcept { return next_; }
  /// Whether the last next() returned nothing only for want of credit: its offset is published, and the
  /// reader has no slot free for it.
  bool credit_bound() const noexcept { return credit_bound_; }

 private:
  topic_view view_;
  std::uint32_t group_;
  std::uint64_t next_ = 0;
  bool taken_ = false;  ///< next_ was taken from the group's cursor and not yet returned
  bool credit_bound_ = false;
};

/// The reader's side: the topic's only publisher (its config has one publisher worker). Offsets land in
/// frame slot_of(offset) (no heap: the slot's previous frame is free exactly when the slot is).
class bridge_receiver {
 public:
  /// `topic` names the topic in errors.
  bridge_receiver(const topic_view& view, std::string topic);

  /// Reserves, in order from the first unreserved offset, every slot whose previous occupant every group
  /// has released; returns one past the last reserved: the writer's side may carry any offset below it.
  std::uint64_t credit();

  /// Where a carried frame's bytes go: offset's frame (reserved by credit(), not yet published).
  /// Throws precondition_error for an offset outside the reserved window.
  std::byte* frame_for(std::uint64_t offset) const;

  /// Publishes a carried offset with the writer's slot fields, `bytes` of its frame valid (a void when
  /// `flags` has slot_void). Offsets are published in order. Throws precondition_error, naming the topic
  /// and offset, for an offset out of order or unreserved, or more bytes than a frame holds.
  void publish(std::uint64_t offset, std::uint64_t bytes, std::uint64_t tag, std::uint32_t flags,
               std::uint64_t born_ns);

  /// The writer's stream ended at `end`: every offset below it was published here. Closes the topic.
  /// Throws precondition_error when an offset below `end` was not published.
  void end(std::uint64_t end);

  std::uint64_t published() const noexcept { return published_; }
  std::uint64_t frame_bytes() const noexcept { return view_.frame_bytes; }

 private:
  topic_view view_;
  std::string topic_;
  std::uint64_t published_ = 0;  ///< offsets below it are published
  std::uint64_t reserved_ = 0;   ///< offsets below it are reserved
};

}  // namespace xf
