// The bridge's two ends over the topic protocol (bridge_endpoint.hpp).
#include "topics/bridge_endpoint.hpp"

#include <utility>

#include "framework/core/errors.hpp"

namespace xf {

std::optional<outgoing_frame> bridge_sender::next(std::uint64_t credit) {
  if (!taken_) {
    // The group's only worker: the cursor hands out next_, next_ + 1, … in order.
    const std::uint64_t offset = view_.take(group_);
    XF_EXPECTS(offset == next_, "a bridge's group has another worker: it took offset " +
                                    std::to_string(offset) + " where " + std::to_string(next_) + " was next");
    taken_ = true;
  }
  const poll_result state = view_.poll(next_);
  credit_bound_ = state == poll_result::ready && next_ >= credit;
  if (state == poll_result::ended) return outgoing_frame{.offset = next_, .ended = true};
  if (state == poll_result::pending || next_ >= credit) return std::nullopt;
  const index_slot& slot = view_.slot(next_);
  outgoing_frame f;
  f.offset = next_;
  f.bytes = slot.bytes;
  f.tag = slot.tag;
  f.born_ns = slot.born_ns;
  f.flags = slot.flags;
  f.data = slot.frame == no_frame ? nullptr : view_.frame_data(slot.frame);
  ++next_;
  taken_ = false;
  return f;
}

bridge_receiver::bridge_receiver(const topic_view& view, std::string topic)
    : view_(view), topic_(std::move(topic)) {
  XF_EXPECTS(view_.publishers == 1, "topic '" + topic_ + "': a bridge's receiving end must be its only " +
                                        "publisher (it has " + std::to_string(view_.publishers) + ")");
}

std::uint64_t bridge_receiver::credit() {
  while (reserved_ < published_ + view_.capacity && view_.slot_free(reserved_)) ++reserved_;
  return reserved_;
}

std::byte* bridge_receiver::frame_for(std::uint64_t offset) const {
  XF_EXPECTS(offset >= published_ && offset < reserved_,
             "topic '" + topic_ + "': a bridge carried offset " + std::to_string(offset) +
                 " outside its credit [" + std::to_string(published_) + ", " + std::to_string(reserved_) +
                 ")");
  return view_.frame_data(view_.slot_frame(offset));
}

void bridge_receiver::publish(std::uint64_t offset, std::uint64_t bytes, std::uint64_t tag,
                              std::uint32_t flags, std::uint64_t born_ns) {
  XF_EXPECTS(offset == published_ && offset < reserved_,
             "topic '" + topic_ + "': a bridge carried offset " + std::to_string(offset) + " where " +
                 std::to_string(published_) + " was next (credit up to " + std::to_string(reserved_) + ")");
  const bool is_void = (flags & slot_void) != 0;
  XF_EXPECTS(is_void ? bytes == 0 : bytes <= view_.frame_bytes,
             "topic '" + topic_ + "', offset " + std::to_string(offset) + ": a bridge carried " +
                 std::to_string(bytes) + " bytes " + (is_void ? "with a void" : "into a frame of ") +
                 (is_void ? std::string() : std::to_string(view_.frame_bytes)));
  view_.publish(offset, is_void ? no_frame : view_.slot_frame(offset), bytes, tag, flags, born_ns);
  ++published_;
}

void bridge_receiver::end(std::uint64_t end) {
  XF_EXPECTS(end == published_, "topic '" + topic_ + "': the stream ended at offset " + std::to_string(end) +
                                    " on the writer's side, and " + std::to_string(published_) +
                                    " offsets were carried");
  view_.close(end);
}

}  // namespace xf
