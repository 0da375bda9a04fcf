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
bool done(MPI_Request& request, const call_site& site, MPI_Status* status = MPI_STATUS_IGNORE) {
  if (request == MPI_REQUEST_NULL) return true;
  int flag = 0;
  XF_MPI_TRY(MPI_Test(&request, &flag, status), site);
  return flag != 0;
}

/// Cancels a receive no message will come for, and waits until MPI has let go of its buffer.
void cancel(MPI_Request& request, const call_site& site) {
  if (request == MPI_REQUEST_NULL) return;
  XF_MPI_TRY(MPI_Cancel(&request), site);
  XF_MPI_TRY(MPI_Wait(&request, MPI_STATUS_IGNORE), site);
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
    // Every offset but the end sends its bytes, none for a void or an empty frame: the reader posted a
    // receive for them, and the k-th message on the data tag is offset k's.
    if (!f->ended) {
      const bool has_bytes = f->data != nullptr && f->bytes > 0;
      XF_MPI_TRY(MPI_Isend(has_bytes ? f->data : nullptr, has_bytes ? static_cast<int>(f->bytes) : 0,
                           MPI_BYTE, peer_, link_data_tag, comm_, &s.requests[1]),
                 (call_site{rank_, peer_, link_data_tag}));
    }
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
    : receiver_(view, std::move(topic)), comm_(comm), peer_(peer), rank_(rank_in(comm)) {}

topic_link_receiver::~topic_link_receiver() {
  abandon(credit_request_);
  for (arriving& a : arrivals_) {
    abandon(a.header_request);
    abandon(a.data);
  }
}

void topic_link_receiver::post_receives(std::uint64_t credit) {
  for (; posted_ < credit; ++posted_) {
    arriving& a = arrivals_.emplace_back();
    a.offset = posted_;
    XF_MPI_TRY(
        MPI_Irecv(&a.header, sizeof a.header, MPI_BYTE, peer_, link_header_tag, comm_, &a.header_request),
        (call_site{rank_, peer_, link_header_tag}));
    XF_MPI_TRY(MPI_Irecv(receiver_.frame_for(posted_), static_cast<int>(receiver_.frame_bytes()), MPI_BYTE,
                         peer_, link_data_tag, comm_, &a.data),
               (call_site{rank_, peer_, link_data_tag}));
  }
}

bool topic_link_receiver::step() {
  const call_site credit_site{rank_, peer_, link_credit_tag}, data_site{rank_, peer_, link_data_tag},
      header_site{rank_, peer_, link_header_tag};
  // The credit, when it grew and the last one has left (one word in flight at a time), once the receives
  // below it are posted; after the end, the closing word.
  if (!last_credit_sent_ && done(credit_request_, credit_site)) {
    std::uint64_t credit = link_closed;
    if (!ended_) {
      credit = receiver_.credit();
      post_receives(credit);
    }
    if (credit > credit_sent_) {
      credit_word_ = credit_sent_ = credit;
      XF_MPI_TRY(MPI_Isend(&credit_word_, 1, MPI_UINT64_T, peer_, link_credit_tag, comm_, &credit_request_),
                 credit_site);
      ++counters_.credit_messages;
      last_credit_sent_ = ended_;
    }
  }
  // Publish in order what has arrived whole.
  while (!ended_ && !arrivals_.empty()) {
    arriving& a = arrivals_.front();
    if (!a.header_in) {
      if (!done(a.header_request, header_site)) break;
      a.header_in = true;
      const link_header& h = a.header;
      XF_EXPECTS(h.offset == a.offset, "a link's header for offset " + std::to_string(a.offset) +
                                           " says offset " + std::to_string(h.offset));
      if (h.ended != 0) {
        // The end takes the place of an offset: no bytes follow it, nor anything after it.
        receiver_.end(h.offset);
        ended_ = true;
        counters_.end_ns = steady_ns();
        for (arriving& rest : arrivals_) {
          cancel(rest.data, data_site);
          cancel(rest.header_request, header_site);
        }
        arrivals_.clear();
        break;
      }
    }
    MPI_Status status;
    if (!done(a.data, data_site, &status)) break;
    const link_header h = a.header;
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    const bool is_void = (h.flags & slot_void) != 0;
    XF_EXPECTS(static_cast<std::uint64_t>(received) == (is_void ? 0 : h.bytes),
               "a link's offset " + std::to_string(h.offset) + " carried " + std::to_string(received) +
                   " bytes where its header says " + std::to_string(is_void ? 0 : h.bytes));
    arrivals_.pop_front();
    receiver_.publish(h.offset, h.bytes, h.tag, h.flags, h.born_ns);
    if (counters_.frames++ == 0) counters_.first_ns = steady_ns();
    counters_.bytes += h.bytes;
  }
  // Done once the closing word (sent by a later step than the one that saw the end) has left.
  return last_credit_sent_ && done(credit_request_, credit_site);
}

}  // namespace xf::mpi
