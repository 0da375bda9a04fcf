// A topic carried between two ranks (topic_link.hpp): the two ends' message exchange over the bridge's
// endpoints.
#include "framework/mpi/topic_link.hpp"

#include <chrono>
#include <utility>

#include "framework/core/errors.hpp"
#include "framework/mpi/mpi_error.hpp"

namespace xf::mpi {

namespace {

int rank_in(MPI_Comm comm) {
  int rank = -1;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

/// True when the request completed (or was none). MPI_Test frees a completed request.
bool done(MPI_Request& request, const call_site& site) {
  if (request == MPI_REQUEST_NULL) return true;
  int flag = 0;
  XF_MPI_TRY(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), site);
  return flag != 0;
}

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

/// Cancels and frees a request left in flight (a link destroyed mid-stream: the run is unwinding).
void abandon(MPI_Request& request) {
  if (request == MPI_REQUEST_NULL) return;
  MPI_Cancel(&request);
  MPI_Request_free(&request);
}

}  // namespace

// ---- the writer's end -------------------------------------------------------------------------------

topic_link_sender::topic_link_sender(const topic_view& view, std::uint32_t group, MPI_Comm comm, int peer)
    : sender_(view, group), comm_(comm), peer_(peer), rank_(rank_in(comm)) {
  post_credit_receive();
}

topic_link_sender::~topic_link_sender() {
  abandon(credit_request_);
  for (in_flight& f : sends_)
    for (MPI_Request& r : f.requests) abandon(r);
}

void topic_link_sender::post_credit_receive() {
  XF_MPI_TRY(MPI_Irecv(&credit_word_, 1, MPI_UINT64_T, peer_, link_credit_tag, comm_, &credit_request_),
             (call_site{rank_, peer_, link_credit_tag}));
}

bool topic_link_sender::step() {
  // Credits arrive in order and only grow: keep the latest, until the closing word.
  while (!last_credit_ && done(credit_request_, call_site{rank_, peer_, link_credit_tag})) {
    if (credit_word_ == link_closed) {
      last_credit_ = true;
      break;
    }
    credit_ = std::max(credit_, credit_word_);
    ++counters_.credit_messages;
    post_credit_receive();
  }
  // Sends complete in order on one peer and tag; a frame's bytes may be reused once both of its are done.
  while (!sends_.empty()) {
    in_flight& f = sends_.front();
    if (!done(f.requests[0], call_site{rank_, peer_, link_header_tag}) ||
        !done(f.requests[1], call_site{rank_, peer_, link_data_tag}))
      break;
    if (!f.ended) sender_.sent(f.offset);
    sends_.pop_front();
  }
  while (!end_sent_) {
    const std::optional<outgoing_frame> f = sender_.next(credit_);
    if (!f) break;
    in_flight& s = sends_.emplace_back(
        in_flight{f->offset,
                  f->ended,
                  link_header{f->offset, f->bytes, f->tag, f->born_ns, f->flags, f->ended ? 1u : 0u},
                  {MPI_REQUEST_NULL, MPI_REQUEST_NULL}});
    XF_MPI_TRY(MPI_Isend(&s.header, sizeof s.header, MPI_BYTE, peer_, link_header_tag, comm_, &s.requests[0]),
               (call_site{rank_, peer_, link_header_tag}));
    if (f->data != nullptr && f->bytes > 0)
      XF_MPI_TRY(MPI_Isend(f->data, static_cast<int>(f->bytes), MPI_BYTE, peer_, link_data_tag, comm_,
                           &s.requests[1]),
                 (call_site{rank_, peer_, link_data_tag}));
    if (f->ended) {
      end_sent_ = true;
    } else {
      if (counters_.frames++ == 0) counters_.first_ns = steady_ns();
      counters_.bytes += f->bytes;
    }
  }
  if (sender_.credit_bound() && !end_sent_) {
    if (credit_wait_since_ == 0) credit_wait_since_ = steady_ns();
  } else if (credit_wait_since_ != 0) {
    counters_.credit_wait_ns += steady_ns() - credit_wait_since_;
    credit_wait_since_ = 0;
  }
  const bool finished = end_sent_ && sends_.empty() && last_credit_;
  if (finished && counters_.end_ns == 0) counters_.end_ns = steady_ns();
  return finished;
}

// ---- the reader's end -------------------------------------------------------------------------------

topic_link_receiver::topic_link_receiver(const topic_view& view, std::string topic, MPI_Comm comm, int peer)
    : receiver_(view, std::move(topic)), comm_(comm), peer_(peer), rank_(rank_in(comm)) {
  post_header_receive();
}

topic_link_receiver::~topic_link_receiver() {
  abandon(header_request_);
  abandon(credit_request_);
  for (arriving& a : arrivals_) abandon(a.data);
}

void topic_link_receiver::post_header_receive() {
  XF_MPI_TRY(MPI_Irecv(&next_header_, sizeof next_header_, MPI_BYTE, peer_, link_header_tag, comm_,
                       &header_request_),
             (call_site{rank_, peer_, link_header_tag}));
}

bool topic_link_receiver::step() {
  const call_site credit_site{rank_, peer_, link_credit_tag}, data_site{rank_, peer_, link_data_tag};
  // The credit, when it grew and the last one has left (one word in flight at a time); after the end,
  // the closing word.
  if (!last_credit_sent_ && done(credit_request_, credit_site)) {
    const std::uint64_t credit = ended_ ? link_closed : receiver_.credit();
    if (credit > credit_sent_) {
      credit_word_ = credit_sent_ = credit;
      XF_MPI_TRY(MPI_Isend(&credit_word_, 1, MPI_UINT64_T, peer_, link_credit_tag, comm_, &credit_request_),
                 credit_site);
      ++counters_.credit_messages;
      last_credit_sent_ = ended_;
    }
  }
  // Headers, in order: each frame's bytes go straight into its frame.
  while (header_request_ != MPI_REQUEST_NULL &&
         done(header_request_, call_site{rank_, peer_, link_header_tag})) {
    arriving& a = arrivals_.emplace_back(arriving{next_header_});
    const link_header& h = a.header;
    if (h.ended == 0) {
      post_header_receive();
      if (h.bytes > 0 && (h.flags & slot_void) == 0) {
        XF_EXPECTS(h.bytes <= receiver_.frame_bytes(), "a link carried " + std::to_string(h.bytes) +
                                                           " bytes at offset " + std::to_string(h.offset) +
                                                           " into frames of " +
                                                           std::to_string(receiver_.frame_bytes()));
        XF_MPI_TRY(MPI_Irecv(receiver_.frame_for(h.offset), static_cast<int>(h.bytes), MPI_BYTE, peer_,
                             link_data_tag, comm_, &a.data),
                   data_site);
      }
    }
  }
  // Publish in order what has arrived whole.
  while (!arrivals_.empty() && done(arrivals_.front().data, data_site)) {
    const link_header h = arrivals_.front().header;
    arrivals_.pop_front();
    if (h.ended != 0) {
      receiver_.end(h.offset);
      ended_ = true;
      counters_.end_ns = steady_ns();
      break;
    }
    receiver_.publish(h.offset, h.bytes, h.tag, h.flags, h.born_ns);
    if (counters_.frames++ == 0) counters_.first_ns = steady_ns();
    counters_.bytes += h.bytes;
  }
  // Done once the closing word (sent by a later step than the one that saw the end) has left.
  return last_credit_sent_ && done(credit_request_, credit_site);
}

}  // namespace xf::mpi
