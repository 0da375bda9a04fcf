// The GPU side of a message (CUDA builds): pack on the GPU chunk by chunk into staging memory while the
// chunks already packed are sent, and unpack each chunk received while the next arrives. The staging memory
// is pinned host memory (the staged route: the kernels write and read it across PCIe themselves, zero copy)
// or device memory (the CUDA-aware route: the MPI library moves it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "framework/core/cuda_buffer.hpp"
#include "framework/mpi/message_type.hpp"
#include "framework/mpi/messenger.hpp"
#include "framework/mpi/wire.hpp"

namespace xf::mpi::detail {

/// Whether the data of `count` instances of `t` at `buf` lies in memory the GPU packs (device or managed),
/// as the CUDA runtime says of its lowest byte. False for host memory and where no CUDA device is usable
/// (then no pointer is device memory). Throws cuda_error for other failures.
bool on_device(const message_type& t, std::int64_t count, const void* buf);

/// The staging memory, the stream and the chunks' events of a messenger's device routes, kept between calls.
/// One call at a time. The destructor waits for nothing: every call ends synchronized.
class device_transfer {
 public:
  device_transfer() = default;

  /// Packs `count` instances of `t` at `buf` (device memory of the current device, which `t` was uploaded
  /// to) into the route's staging memory chunk by chunk, and hands each chunk to `out` once its kernel is
  /// done. Starts `out` (the header goes with chunk 0); returns how the kernels packed.
  std::string send(const message_type& t, std::int64_t count, const void* buf, route r,
                   std::int64_t chunk_bytes, chunk_sender& out);

  /// Host memory for the first message of a receive by route `r` (first_bytes: its size), with room for
  /// all `capacity` packed bytes behind it where the route unpacks from there (staged).
  std::byte* first_buffer(route r, std::int64_t first_bytes, std::int64_t capacity);

  /// Posts the receives of the rest of the message `header` announces (its first message in first_buffer())
  /// into the route's staging memory, then unpacks
  /// `full` instances and `tail_elements` elements of one more into `buf`, each piece once its chunks are
  /// in (on the staged route with staged_unpack::device_copy, each piece copied to device memory first).
  /// Returns when the data is in `buf` (the stream synchronized).
  std::string recv(const message_type& t, std::int64_t full, std::int64_t tail_elements, void* buf, route r,
                   staged_unpack unpack, const wire_header& header, chunk_receiver& in);

 private:
  /// The staging memory, grown to at least `bytes` (its contents are not kept when it grows).
  std::byte* device_room(std::int64_t bytes);
  std::byte* pinned_room(std::int64_t bytes);

  cuda_stream stream_;
  pinned_buffer<std::byte>
      pinned_;  // the staged route's messages (header, packed bytes), grown to the largest
  device_buffer<std::byte> device_;  // the CUDA-aware route's, and the device copies of staged_unpack
  std::deque<cuda_event> packed_;    // packed_[k]: chunk k's kernel is done (a deque: events do not move)
  wire_header header_;               // a send's header, the source of its copy to device memory
};

}  // namespace xf::mpi::detail
