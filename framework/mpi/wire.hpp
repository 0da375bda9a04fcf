// The wire protocol of one message, whatever route moved it: a first message on the messenger's header
// communicator holding a header (the packed bytes and the chunk size) and chunk 0 of the packed bytes, then
// chunks 1, 2, ... on its data communicator, all with the caller's tag. Chunks let the sender send what is
// packed while it packs the rest, and the receiver unpack what has arrived while the rest arrives; the
// receiver learns their size from the header, so both sides may use different routes and chunk sizes. The
// header rides with chunk 0 because a message of its own costs a whole small-message latency per call.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "framework/mpi/mpi_error.hpp"

namespace xf::mpi::detail {

/// The first message's first bytes, two int64 words in the sender's byte order (both ranks run this
/// protocol on one kind of machine).
struct wire_header {
  std::int64_t bytes = 0;        ///< packed bytes of the message
  std::int64_t chunk_bytes = 0;  ///< every chunk's size but the last one's
};
static_assert(sizeof(wire_header) == 16);
/// Where the packed bytes start in a buffer that holds a whole message as the wire carries it: 16, which
/// keeps them 16-byte aligned for the packing kernels' widest units.
inline constexpr std::int64_t header_bytes = sizeof(wire_header);

/// Chunks of a message: chunk j holds bytes [j × chunk_bytes, min((j + 1) × chunk_bytes, bytes)).
inline std::int64_t chunk_count(std::int64_t bytes, std::int64_t chunk_bytes) {
  return bytes <= 0 ? 0 : (bytes + chunk_bytes - 1) / chunk_bytes;
}
/// The chunk of a message of `bytes` packed bytes when the messenger chooses: a quarter of the message,
/// rounded up to 64 KiB, within [64 KiB, 4 MiB]. Four chunks overlap packing, the wire and unpacking at
/// every size, and each is large enough that its fixed costs (an MPI rendezvous, a kernel launch, the
/// receiver's wait) stay small beside its bytes: in the ping-pong of 8-byte blocks on one Hopper GPU, 16
/// chunks of 256 KiB took 771 µs one way for 4 MiB and 4 chunks of 1 MiB 580 µs, while 1 MiB in one chunk
/// took 336 µs and in 4 chunks 285 (bench/mpi).
inline std::int64_t automatic_chunk_bytes(std::int64_t bytes) {
  constexpr std::int64_t unit = 64 << 10, most = 4 << 20;
  const std::int64_t quarter = (bytes / 4 + unit - 1) / unit * unit;
  return quarter < unit ? unit : quarter > most ? most : quarter;
}

/// The first message's bytes: the header and chunk 0.
inline std::int64_t first_message_bytes(const wire_header& h) {
  return header_bytes + (h.bytes < h.chunk_bytes ? h.bytes : h.chunk_bytes);
}

/// The sending side of one message. start() takes the buffer the message goes out of: the header at its
/// start (the caller writes it there: host memory, or device memory for a CUDA-aware library), the packed
/// bytes from header_bytes on. packed_until() sends the first message, then each chunk, once the packed
/// bytes cover it; finish() waits for every send. The buffer must stay unchanged until then. `requests` is
/// the messenger's, reused from call to call.
class chunk_sender {
 public:
  chunk_sender(MPI_Comm header_comm, MPI_Comm data_comm, int dest, int tag, const call_site& site,
               std::vector<MPI_Request>& requests);
  /// A message of header.bytes packed bytes at `message` + header_bytes; an empty one goes at once.
  void start(const std::byte* message, const wire_header& header);
  /// The first `prefix` packed bytes are ready: sends every part they complete (nonblocking).
  void packed_until(std::int64_t prefix);
  /// Lets MPI move the sends already started (a large send needs the sender's progress to hand over).
  void progress();
  /// Waits for every send. Requires packed_until(bytes) first.
  void finish();
  std::int64_t chunks() const { return chunk_count(header_.bytes, header_.chunk_bytes); }

 private:
  void send(const std::byte* at, std::int64_t bytes, MPI_Comm comm);

  MPI_Comm header_comm_, data_comm_;
  int dest_, tag_;
  call_site site_;
  std::vector<MPI_Request>& requests_;
  wire_header header_;
  const std::byte* message_ = nullptr;
  std::int64_t next_chunk_ = 0;  // chunks sent; chunk 0 went with the header
};

/// A message's first part, matched (MPI_Mprobe) but not yet received: its size says how much memory to
/// receive it into, and its status the source and tag the rest comes with.
struct first_part {
  MPI_Message handle = MPI_MESSAGE_NULL;
  std::int64_t bytes = 0;  ///< the first message's bytes (header and chunk 0)
  int source = -1, tag = -1;
};
/// Matches the next message from `source` with `tag` (either may be MPI_ANY_*) on the header communicator.
/// Blocks until one is there.
first_part match_first(MPI_Comm header_comm, int source, int tag, const call_site& site);
/// Receives the matched first message into `into` (at least first.bytes bytes of host memory) and returns
/// its header, checked against the message's size. Throws mpi_error (MPI_ERR_OTHER) for a message no sender
/// of this protocol writes.
wire_header receive_first(first_part& first, std::byte* into, const call_site& site);

/// The receiving side once the first message is in: post() receives chunks 1, 2, ... after chunk 0
/// (nonblocking); wait_until() returns once the first `prefix` packed bytes have arrived; finish() waits for
/// all.
class chunk_receiver {
 public:
  chunk_receiver(MPI_Comm data_comm, int source, int tag, const call_site& site,
                 std::vector<MPI_Request>& requests);
  /// `packed`: the message's packed bytes, chunk 0 already there.
  void post(std::byte* packed, const wire_header& header);
  void wait_until(std::int64_t prefix);
  void finish() { wait_until(header_.bytes); }

 private:
  MPI_Comm data_comm_;
  int source_, tag_;
  call_site site_;
  std::vector<MPI_Request>& requests_;  // requests_[j - 1]: chunk j
  wire_header header_;
  std::int64_t arrived_chunks_ = 0;
};

/// Receives chunks 1, 2, ... of a message whose first part is in, into `scratch` (grown to a chunk), and
/// drops them: what a receive that refuses a message does, so that the next message on the tag is the next
/// one sent.
void drain(MPI_Comm data_comm, int source, int tag, const call_site& site, const wire_header& header,
           std::vector<std::byte>& scratch);

}  // namespace xf::mpi::detail
