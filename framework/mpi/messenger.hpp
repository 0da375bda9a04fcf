// Send and receive of `count` instances of a datatype between MPI ranks, the data packed by the datatype
// engine: on the host for host memory, on the GPU for device memory (CUDA builds), the packed bytes moved
// through pinned host memory or, with a CUDA-aware MPI library, straight from device memory (DESIGN.md).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/mpi/cuda_awareness.hpp"
#include "framework/mpi/message_type.hpp"

namespace xf::mpi {

/// How a call moved the data.
enum class route : std::uint8_t {
  host,        ///< host memory: packed on the CPU, the packed bytes sent from host memory
  staged,      ///< device memory: packed on the GPU straight into pinned host memory, chunk by chunk
  cuda_aware,  ///< device memory: packed on the GPU into device memory, which the MPI library sends
};
std::string_view name_of(route r);

/// Which route device memory takes.
enum class device_route : std::uint8_t {
  automatic,   ///< cuda_aware where the library is (detect_cuda_awareness), else staged
  staged,      ///< always through pinned host memory
  cuda_aware,  ///< always device to device; refused (precondition_error) where the library is not aware
};

/// How the staged route's receiver unpacks the packed bytes that MPI left in pinned host memory.
enum class staged_unpack : std::uint8_t {
  zero_copy,    ///< the unpacking kernels read pinned memory across PCIe themselves
  device_copy,  ///< each piece is first copied to device memory by the copy engine, then unpacked there
};

struct messenger_options {
  /// Bytes of each chunk but the last on the wire: the unit in which packing overlaps sending, and
  /// receiving overlaps unpacking. 0 (the default): each message's own, detail::automatic_chunk_bytes (a
  /// quarter of the message within [64 KiB, 4 MiB]). Otherwise at least 16, at most 2^31 - 17 (MPI's int
  /// count, less the header that rides with the first chunk). A receiver takes whatever chunk the sender
  /// used.
  std::int64_t chunk_bytes = 0;
  device_route device = device_route::automatic;
  /// The staged route's unpacking. zero_copy reads each packed byte across PCIe once, from the kernel's
  /// own loads; device_copy moves the piece in one copy-engine transfer first, so the kernel's narrow loads
  /// hit device memory. xeflow-mpi-pingpong times both (engine, engine_device_copy).
  staged_unpack unpack = staged_unpack::zero_copy;
};

/// What one send or receive did.
struct transfer_report {
  route taken = route::host;
  std::int64_t bytes = 0;      ///< packed bytes sent or received
  std::int64_t elements = 0;   ///< primitive elements (MPI_Get_elements)
  std::int64_t instances = 0;  ///< whole instances of the type (MPI_Get_count, where `partial` is false)
  bool partial = false;        ///< a receive ended inside an instance (MPI_Get_count would be MPI_UNDEFINED)
  std::int64_t chunks = 0;     ///< wire chunks
  int peer = -1;               ///< the destination, or the source that a receive matched
  int tag = -1;                ///< the tag (a receive's matched tag)
  /// "staged, 1048576 B in 4 chunks, kernel strided 8 B units": for logs and the benchmark's rows.
  std::string describe() const;
  std::string packing;  ///< how the GPU packed ("kernel strided, 8 B units"); empty on the host route
};

namespace detail {
class device_transfer;
}

/// One side of datatype messages over a communicator. Construction is collective over `comm` (it
/// duplicates it twice: one communicator for headers, one for data, so that neither the caller's messages
/// nor a receive by MPI_ANY_TAG can match a chunk), and so is destruction; every rank constructs its
/// messengers in the same order. Keeps its staging memory, stream and requests between calls, so repeated
/// calls (ping-pong) allocate nothing once the largest message has been seen. One call at a time: not
/// thread-safe.
///
/// Both calls block until the user's buffer may be reused, as MPI_Send and MPI_Recv do. Device data must be
/// complete when send() is called (the stream that wrote it synchronized); a receive's device data is
/// complete when recv() returns. Errors are exceptions: mpi_error naming the MPI call, rank, peer and tag;
/// cuda_error naming the CUDA call; precondition_error for a call that breaks a rule before anything is
/// sent or received. After an mpi_error or cuda_error in the middle of a message the communicators may
/// hold parts of it: discard the messenger. A refused message (truncation, an end inside an element) is
/// received whole and dropped first, so the messenger stays usable.
class messenger {
 public:
  explicit messenger(MPI_Comm comm, messenger_options options = {});
  ~messenger();
  messenger(const messenger&) = delete;
  messenger& operator=(const messenger&) = delete;

  /// Sends `count` instances of `t` at `buf` (MPI's buf) to rank `dest` of the communicator with `tag`.
  transfer_report send(const message_type& t, std::int64_t count, const void* buf, int dest, int tag);

  /// Receives a message from `source` (or MPI_ANY_SOURCE) with `tag` (or MPI_ANY_TAG) into at most `count`
  /// instances of `t` at `buf`. A shorter message is fine: the report says how many bytes, elements and
  /// whole instances arrived, and the rest of the buffer is untouched. A longer one is received, dropped,
  /// and thrown as mpi_error with class MPI_ERR_TRUNCATE; one that ends inside an element as MPI_ERR_TYPE.
  /// A type whose `count` instances name a byte twice is refused with precondition_error before anything
  /// is received (MPI calls such a receive erroneous).
  transfer_report recv(const message_type& t, std::int64_t count, void* buf, int source, int tag);

  const cuda_awareness& awareness() const noexcept { return awareness_; }
  const messenger_options& options() const noexcept { return options_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// The route a call with these arguments takes. Throws precondition_error where the options force
  /// cuda_aware on a library that is not.
  route route_for(const message_type& t, std::int64_t count, const void* buf) const;
  /// The chunk a message of `bytes` packed bytes goes in (the option's, or the automatic one).
  std::int64_t chunk_for(std::int64_t bytes) const;

 private:
  messenger_options options_;
  MPI_Comm header_comm_ = MPI_COMM_NULL, data_comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 0;
  cuda_awareness awareness_;
  std::vector<MPI_Request> requests_;
  std::vector<std::byte> host_staging_;  // the host route's packed bytes; a drained message's chunks
  // The GPU side (CUDA builds), made on the first call with device memory. shared_ptr: destroyable here,
  // where builds without CUDA have no definition of it.
  std::shared_ptr<detail::device_transfer> device_;
};

}  // namespace xf::mpi
