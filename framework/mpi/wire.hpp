// The wire protocol of one message, whatever route moved it: a header (the packed bytes and the chunk
// size) on the messenger's header communicator, then the packed bytes in chunks of that size on its data
// communicator, all with the caller's tag. Chunks let the sender send what is packed while it packs the rest,
// and the receiver unpack what has arrived while the rest arrives; the receiver learns their size from the
// header, so both sides may use different routes and chunk sizes.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "framework/mpi/mpi_error.hpp"

namespace xf::mpi::detail {

/// Sent first, two int64 words (MPI_INT64_T).
struct wire_header {
  std::int64_t bytes = 0;        ///< packed bytes of the message
  std::int64_t chunk_bytes = 0;  ///< every chunk's size but the last one's
};
static_assert(sizeof(wire_header) == 2 * sizeof(std::int64_t));

/// Chunks of a message: chunk j holds bytes [j × chunk_bytes, min((j + 1) × chunk_bytes, bytes)).
inline std::int64_t chunk_count(std::int64_t bytes, std::int64_t chunk_bytes) {
  return bytes <= 0 ? 0 : (bytes + chunk_bytes - 1) / chunk_bytes;
}

/// The sending side of one message. start() sends the header; packed_until() sends each chunk once the
/// packed bytes cover it; finish() waits for every send. The packed buffer must stay unchanged until then.
/// `requests` is the messenger's, reused from call to call.
class chunk_sender {
 public:
  chunk_sender(MPI_Comm header_comm, MPI_Comm data_comm, int dest, int tag, const call_site& site,
               std::vector<MPI_Request>& requests);
  /// Sends the header (nonblocking): `bytes` packed bytes at `packed` (host memory, or device memory for a
  /// CUDA-aware library) will follow in chunks of `chunk_bytes`.
  void start(const std::byte* packed, std::int64_t bytes, std::int64_t chunk_bytes);
  /// The first `prefix` packed bytes are ready: sends every chunk they complete (nonblocking).
  void packed_until(std::int64_t prefix);
  /// Lets MPI move the sends already started (a large send needs the sender's progress to hand over).
  void progress();
  /// Waits for the header and every chunk. Requires packed_until(bytes) first.
  void finish();
  std::int64_t chunks() const { return chunk_count(header_.bytes, header_.chunk_bytes); }

 private:
  MPI_Comm header_comm_, data_comm_;
  int dest_, tag_;
  call_site site_;
  std::vector<MPI_Request>& requests_;
  wire_header header_;
  const std::byte* packed_ = nullptr;
  std::int64_t next_chunk_ = 0;
};

/// The receiving side once the header is in: post() receives every chunk (nonblocking); wait_until() returns
/// once the first `prefix` bytes have arrived; finish() waits for all.
class chunk_receiver {
 public:
  chunk_receiver(MPI_Comm data_comm, int source, int tag, const call_site& site,
                 std::vector<MPI_Request>& requests);
  void post(std::byte* packed, const wire_header& header);
  void wait_until(std::int64_t prefix);
  void finish() { wait_until(header_.bytes); }

 private:
  MPI_Comm data_comm_;
  int source_, tag_;
  call_site site_;
  std::vector<MPI_Request>& requests_;
  wire_header header_;
  std::int64_t arrived_chunks_ = 0;
};

/// Receives a message's chunks into `scratch` (at least one chunk) and drops them: what a receive that
/// refuses a message does, so that the next message on the tag is the next one sent.
void drain(MPI_Comm data_comm, int source, int tag, const call_site& site, const wire_header& header,
           std::vector<std::byte>& scratch);

/// Throws mpi_error (MPI_ERR_OTHER) for a header no sender of this protocol writes.
void check_header(const wire_header& header, const call_site& site);

}  // namespace xf::mpi::detail
