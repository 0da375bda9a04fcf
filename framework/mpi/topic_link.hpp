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
// link streams as MPI does with a window of receives. Small frames as one message each (header and bytes
// copied together by the writer, received by a two-block datatype into the reader's slot) were measured
// against this on an H200 with Open MPI 4.1.6 over shared memory, alternated: no faster at 4 KiB (73-82% of
// MPI's streaming against 81%), slower from 8 KiB (57-77% against 76-91%; a datatype receive leaves MPI's
// single-copy path), and 0.1-0.2 us less one way at 4-8 KiB. Every offset stays two messages. Once the end of
// stream has arrived the reader sends a last credit, all ones, and the writer waits for it: no message is
// left unmatched on the communicator when both ends are done.
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
  topic_link_sender(const topic_view& view, std::uint32_t group, MPI_Comm comm, int peer);
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
  /// writer's rank on `comm`.
  topic_link_receiver(const topic_view& view, std::string topic, MPI_Comm comm, int peer);
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
  /// Posts both receives of every offset below `credit` not posted yet.
  void post_receives(std::uint64_t credit);

  bridge_receiver receiver_;
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
