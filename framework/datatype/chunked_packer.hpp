// Packing a large type to host memory in chunks, so that the packing overlaps the transfer: chunk i is
// packed into one of two device staging buffers on the caller's stream while chunk i - 1 crosses PCIe
// with cudaMemcpyAsync on the packer's own copy stream (and the reverse for unpacking from the host).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "framework/core/cuda_buffer.hpp"
#include "framework/datatype/gpu_pack.hpp"

namespace xf::dt {

/// Owns the two staging buffers, the copy stream and the events that order them; neither copied nor
/// moved. One call at a time (calls on two threads would share the staging buffers), though calls may
/// follow each other on any streams without waiting: a staging buffer is written only after the stream
/// that last read it has, and read only after the one that wrote it. The destructor waits for nothing:
/// destroy the packer only after the streams of its calls are synchronized.
class chunked_packer {
 public:
  /// Default chunk: large enough that one chunk's transfer (about 19 µs at 55 GB/s) outlasts the few
  /// microseconds of launching its kernel, copy and event waits, small enough to fill the pipeline early.
  static constexpr std::int64_t default_chunk_bytes = 1 << 20;

  /// Allocates 2 × chunk_bytes of device memory on the current device; chunk_bytes a multiple of 16.
  explicit chunked_packer(std::int64_t chunk_bytes = default_chunk_bytes);

  /// Packs `count` instances of `t` at `user` (device memory) into `host_packed` (pinned host memory,
  /// packed_bytes(t.host(), count) bytes), asynchronously: complete once `stream` reaches this point.
  /// options.path: automatic or kernel (the plan's kernel) or point_kernel. Throws precondition_error for
  /// pageable host memory (the copies would not overlap) and cuda_error naming the failed call.
  pack_choice pack(const device_type& t, std::int64_t count, const void* user, void* host_packed,
                   cudaStream_t stream, const gpu_pack_options& options = {});

  /// The reverse: `host_packed` crosses to the device chunk by chunk, each unpacked on `stream` while the
  /// next crosses.
  pack_choice unpack(const device_type& t, std::int64_t count, const void* host_packed, void* user,
                     cudaStream_t stream, const gpu_pack_options& options = {});

  std::int64_t chunk_bytes() const noexcept { return chunk_bytes_; }
  /// Chunks the last call moved.
  std::int64_t last_chunks() const noexcept { return last_chunks_; }

 private:
  pack_choice run(const device_type& t, std::int64_t count, const void* user, const void* host_packed,
                  bool unpack, cudaStream_t stream, const gpu_pack_options& options);

  std::int64_t chunk_bytes_;
  device_buffer<std::byte> staging_[2];
  cuda_stream copy_stream_;
  cuda_event written_[2];  ///< recorded where a staging buffer's chunk was written (pack kernel, H2D copy)
  cuda_event read_[2];     ///< recorded where it was read (D2H copy, unpack kernel)
  std::int64_t last_chunks_ = 0;
};

}  // namespace xf::dt
