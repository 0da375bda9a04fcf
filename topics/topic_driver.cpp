// The blocking topic steps of CPU threads: waits with backoff and an abort flag around topic_view's steps.
#include "topics/topic_driver.hpp"

#include <string>

#include "framework/core/backoff.hpp"
#include "framework/core/errors.hpp"

namespace xf {
namespace {

void add_to(std::uint64_t* counter, std::uint64_t ns) {
  if (counter != nullptr) *counter += ns;
}

/// Waits until every group released the slot's previous occupant, then returns its frame to the heap.
void wait_and_reclaim(const topic_view& view, std::uint64_t offset, const std::atomic<bool>& abort,
                      std::uint64_t* blocked_ns) {
  add_to(blocked_ns, wait_until([&] { return view.slot_free(offset); }, abort));
  view.reclaim(offset);
}

}  // namespace

publish_ticket reserve_claimed(const topic_view& view, std::string_view topic, const std::atomic<bool>& abort,
                               std::uint64_t* blocked_ns) {
  return reserve_at(view, topic, view.claim_offset(), abort, blocked_ns);
}

publish_ticket reserve_at(const topic_view& view, std::string_view topic, std::uint64_t offset,
                          const std::atomic<bool>& abort, std::uint64_t* blocked_ns) {
  wait_and_reclaim(view, offset, abort, blocked_ns);
  const std::uint32_t frame = view.alloc_frame(offset);
  XF_EXPECTS(frame != no_frame, "topic '" + std::string(topic) + "': no free frame at offset " +
                                    std::to_string(offset) + " (broken invariant: one frame per slot, " +
                                    std::to_string(view.heap_frames) + " frames for " +
                                    std::to_string(view.capacity) + " slots)");
  return publish_ticket{offset, frame, view.frame_data(frame)};
}

publish_ticket reserve_void_at(const topic_view& view, std::uint64_t offset, const std::atomic<bool>& abort,
                               std::uint64_t* blocked_ns) {
  wait_and_reclaim(view, offset, abort, blocked_ns);
  return publish_ticket{offset, no_frame, nullptr};
}

void publish_frame(const topic_view& view, const publish_ticket& ticket, std::uint64_t bytes,
                   std::uint64_t tag, std::uint64_t born_ns) {
  XF_EXPECTS(ticket.has_frame(),
             "publish_frame needs a ticket with a frame; a void reservation ends in publish_void");
  view.publish(ticket.offset, ticket.frame, bytes, tag, 0, born_ns);
}

void publish_void(const topic_view& view, const publish_ticket& ticket) {
  // The slot does not name this frame yet, so it can go back to the heap before the publish.
  if (ticket.has_frame()) view.free_frame(ticket.frame);
  view.publish_void(ticket.offset);
}

delivery next_frame(const topic_view& view, std::uint32_t group, const std::atomic<bool>& abort,
                    std::uint64_t* waited_ns) {
  const std::uint64_t offset = view.take(group);
  poll_result state = poll_result::pending;
  add_to(waited_ns, wait_until([&] { return (state = view.poll(offset)) != poll_result::pending; }, abort));
  if (state == poll_result::ended) return delivery{offset, true, nullptr};
  return delivery{offset, false, &view.slot(offset)};
}

}  // namespace xf
