// A topic carried from one rank to another over MPI: the writer's rank runs a topic_link_sender over a
// bridge_sender (one subscriber group of its topic), the reader's rank a topic_link_receiver over a
// bridge_receiver (its topic's only publisher); topics/bridge_endpoint.hpp has the protocol. Each offset
// travels as two messages on the link's communicator: its 40-byte header (offset, bytes, tag, flags, born)
// and its valid bytes (none for a void or empty frame), sent from the writer's frame and received straight
// into the reader's. The reader's credit (the first offset it has no free slot for) travels back as one
// word whenever it grows; the writer sends only offsets below it, so MPI never holds more frames than the
// reader has slots, and a frame is released on the writer's side when its send completes. The reader posts
// both receives of every offset below its credit before it sends the credit, so every message arrives to a
// receive already posted (no unexpected-message copy, no wait for a header before its bytes can land): the
// link streams as MPI does with a window of receives. Once the end of stream has arrived the reader sends
// a last credit, all ones, and the writer waits for it: no message is left unmatched on the communicator
// when both ends are done.
//
// Both ends are non-blocking: step() tests the requests in flight and starts what it can, and returns
// whether the link is done (the end of stream sent / received and published). One thread a rank calls
// step() (with the MPI library at MPI_THREAD_FUNNELED at least); the topics' own publishers and
// subscribers run on other threads meanwhile. The communicator is the caller's: one per link (each pair of
// ends matches its messages by tag on it), the same on both ranks.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "framework/core/backoff.hpp"
#include "topics/bridge_endpoint.hpp"

namespace xf::mpi {

/// The link's message tags.
inline constexpr int link_header_tag = 1, link_data_tag = 2, link_credit_tag = 3;
/// The credit word that closes the link (the reader has the end of stream).
inline constexpr std::uint64_t link_closed = ~std::uint64_t{0};

/// A frame's header on the wire: the slot's fields, and whether it is the end of stream instead.
struct link_header {
  std::uint64_t offset = 0, bytes = 0, tag = 0, born_ns = 0;
  std::uint32_t flags = 0, ended = 0;
};
static_assert(sizeof(link_header) == 40);

/// Topics whose frames hold at most this many bytes carry each offset as one message: its header with its
/// bytes behind it, copied together on the writer's side, received by a datatype of two blocks straight
/// into the reader's slot (its header, its frame). Larger frames travel as two messages, the bytes straight
/// from the writer's frame: there a copy would cost more than a message. Measured on an H200 with Open MPI
/// 4.1.6 over shared memory, with two messages every offset: 81% of MPI's streaming at 4 KiB and 76% at
/// 16 KiB (100% at 64 KiB), and 1.4 µs one way beyond MPI's own at 4 KiB.
inline constexpr std::uint64_t link_one_message_bytes = 16 * 1024;
/// Whether a topic's link carries one message an offset (both ends decide alike: the topic's frame size
/// against the same threshold).
constexpr bool link_uses_one_message(std::uint64_t frame_bytes,
                                     std::uint64_t one_message_bytes = link_one_message_bytes) {
  return frame_bytes <= one_message_bytes;
}

/// What a link moved, for stats.
struct link_counters {
  std::uint64_t frames = 0;  ///< frames (void ones included)
  std::uint64_t bytes = 0;   ///< valid bytes
  std::uint64_t credit_messages = 0;
  /// The writer's end: time a published frame waited for the reader's credit.
  std::uint64_t credit_wait_ns = 0;
  /// Host clock (steady, ns) of the first frame sent or received, and of the end of stream; 0 before.
  std::uint64_t first_ns = 0, end_ns = 0;
};

/// The writer's rank's end.
class topic_link_sender {
 public:
  /// `view`'s group `group` is the bridge's (no other worker); `peer` the reader's rank on `comm`.
  /// `one_message_bytes`: the largest frames carried one message an offset (the reader's end must be given
  /// the same).
  topic_link_sender(const topic_view& view, std::uint32_t group, MPI_Comm comm, int peer,
                    std::uint64_t one_message_bytes = link_one_message_bytes);
  ~topic_link_sender();
  topic_link_sender(const topic_link_sender&) = delete;
  topic_link_sender& operator=(const topic_link_sender&) = delete;

  /// Tests what is in flight, releases frames whose bytes have left, sends what the credit allows.
  /// True once the end of stream has been sent and every send has completed. Throws mpi_error naming
  /// the call, rank, peer and tag.
  bool step();

  const link_counters& counters() const noexcept { return counters_; }

 private:
  struct in_flight {
    std::uint64_t offset;
    bool ended;
    link_header header;
    std::array<MPI_Request, 2> requests;  ///< header, data (MPI_REQUEST_NULL when none)
  };
  void post_credit_receive();

  bridge_sender sender_;
  bool one_message_;
  std::uint32_t capacity_;
  /// One message an offset: a header and a frame's room for each of the writer's slots (an offset in
  /// flight holds its slot until its send completes), and one header for the end.
  std::vector<std::byte> staging_;
  link_header end_staging_{};
  MPI_Comm comm_;
  int peer_, rank_ = -1;
  std::uint64_t credit_ = 0, credit_word_ = 0;
  MPI_Request credit_request_ = MPI_REQUEST_NULL;
  std::deque<in_flight> sends_;
  bool end_sent_ = false;
  bool last_credit_ = false;             ///< the reader's closing word arrived
  std::uint64_t credit_wait_since_ = 0;  ///< when the frame now waiting for credit began to (0: none)
  link_counters counters_;
};

/// The reader's rank's end.
class topic_link_receiver {
 public:
  /// `view` is the topic the link publishes (its only publisher), `topic` its name in errors; `peer` the
  /// writer's rank on `comm`; `one_message_bytes` as the writer's end.
  topic_link_receiver(const topic_view& view, std::string topic, MPI_Comm comm, int peer,
                      std::uint64_t one_message_bytes = link_one_message_bytes);
  ~topic_link_receiver();
  topic_link_receiver(const topic_link_receiver&) = delete;
  topic_link_receiver& operator=(const topic_link_receiver&) = delete;

  /// Sends the credit when it grew, receives headers and frames, publishes them in order. True once the
  /// end of stream has arrived and closed the topic. Throws mpi_error, or precondition_error for a
  /// header the protocol forbids (an offset out of order or beyond the credit, too many bytes).
  bool step();

  const link_counters& counters() const noexcept { return counters_; }

 private:
  /// An offset below the credit: its header's and its bytes' receives, posted ahead.
  struct arriving {
    std::uint64_t offset = 0;
    link_header header;
    MPI_Request header_request = MPI_REQUEST_NULL;
    MPI_Request data = MPI_REQUEST_NULL;
    bool header_in = false;
  };
  /// Posts the receives of every offset below `credit` not posted yet.
  void post_receives(std::uint64_t credit);
  /// One message an offset: the datatype that receives slot k's header and frame at once.
  MPI_Datatype slot_type(std::uint64_t offset);

  bridge_receiver receiver_;
  bool one_message_;
  std::uint32_t capacity_;
  std::vector<link_header> slot_headers_;  ///< one message an offset: where each slot's header lands
  std::vector<MPI_Datatype> slot_types_;   ///< made when first used
  MPI_Comm comm_;
  int peer_, rank_ = -1;
  std::uint64_t posted_ = 0;       ///< offsets below it have their receives posted
  std::deque<arriving> arrivals_;  ///< offsets posted and not yet published, in order
  std::uint64_t credit_sent_ = 0, credit_word_ = 0;
  MPI_Request credit_request_ = MPI_REQUEST_NULL;
  bool ended_ = false;
  bool last_credit_sent_ = false;
  link_counters counters_;
};

/// Runs step() until it returns true, waiting between steps that moved nothing with the framework's
/// backoff (restarted by every step that moved a frame or a credit, so a busy link never sleeps between
/// frames); throws run_aborted when `abort` is set first.
template <class End>
void run_link(End& end, const std::atomic<bool>& abort) {
  backoff idle;
  for (;;) {
    const link_counters before = end.counters();
    if (end.step()) return;
    if (abort.load(std::memory_order_relaxed)) throw run_aborted();
    const link_counters& after = end.counters();
    if (after.frames != before.frames || after.credit_messages != before.credit_messages)
      idle = backoff{};
    else
      idle.pause();
  }
}

}  // namespace xf::mpi
