// The chunked pipeline between a device type's data and pinned host memory: two staging buffers, the
// caller's stream for the kernels, the packer's stream for the copies, two events per buffer between them.
#include "framework/datatype/chunked_packer.hpp"

#include <algorithm>
#include <string>

#include "framework/core/cuda_check.hpp"
#include "framework/core/errors.hpp"
#include "framework/datatype/pack.hpp"

namespace xf::dt {

chunked_packer::chunked_packer(std::int64_t chunk_bytes) : chunk_bytes_(chunk_bytes) {
  XF_EXPECTS(chunk_bytes >= 16 && chunk_bytes % 16 == 0,
             "chunk_bytes is " + std::to_string(chunk_bytes) + ": a positive multiple of 16 is needed");
  for (auto& s : staging_) s = device_buffer<std::byte>(static_cast<std::size_t>(chunk_bytes));
  // device_buffer zeroes new memory on the legacy default stream, which the kernels filling the staging
  // buffers on other streams do not wait for: the zeroing ends here, before the first chunk.
  XF_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
}

pack_choice chunked_packer::pack(const device_type& t, std::int64_t count, const void* user,
                                 void* host_packed, cudaStream_t stream, const gpu_pack_options& options) {
  return run(t, count, user, host_packed, false, stream, options);
}

pack_choice chunked_packer::unpack(const device_type& t, std::int64_t count, const void* host_packed,
                                   void* user, cudaStream_t stream, const gpu_pack_options& options) {
  return run(t, count, user, host_packed, true, stream, options);
}

pack_choice chunked_packer::run(const device_type& t, std::int64_t count, const void* user,
                                const void* host_packed, bool unpack, cudaStream_t stream,
                                const gpu_pack_options& options) {
  XF_EXPECTS(options.path != pack_path::copy_engine,
             "the chunked pipeline packs with a kernel, not the copy engine");
  pack_choice choice;
  choice.bytes = packed_bytes(t.host(), count);
  last_chunks_ = 0;
  if (choice.bytes == 0) return choice;
  XF_EXPECTS(user != nullptr && host_packed != nullptr, "chunked_packer: a null buffer");
  detail::expect_device_of(t);
  const detail::pointer_place user_place = detail::place_of_user(t, count, user);
  const detail::pointer_place packed_place = detail::place_of(host_packed, t.limits());
  choice.user = user_place.kind;
  choice.packed = packed_place.kind;
  XF_EXPECTS(user_place.device_address != nullptr, "a packing kernel cannot reach the user buffer: it is " +
                                                       std::string(name_of(user_place.kind)) + " memory");
  // Copies from pageable memory are staged by the driver and do not overlap the kernels.
  XF_EXPECTS(packed_place.kind == memory_kind::pinned_host,
             "the chunked pipeline's host buffer must be pinned host memory; it is " +
                 std::string(name_of(packed_place.kind)) + " memory");
  choice.path = options.path == pack_path::point_kernel ? pack_path::point_kernel : pack_path::kernel;
  choice.method = choice.path == pack_path::point_kernel ? pack_method::elements : t.plan().method;
  const detail::kernel_work work(t, count, choice.method, user_place.device_address, nullptr);
  choice.unit_bytes = work.unit_bytes();

  // The host side by its own pointer: the copy engine reaches pinned memory at its host address.
  auto* host = static_cast<std::byte*>(const_cast<void*>(host_packed));  // written only when packing
  const std::int64_t step = work.items_within(chunk_bytes_);
  int b = 0;
  for (std::int64_t first = 0; first < work.items(); first += step, b ^= 1) {
    const std::int64_t last = std::min(first + step, work.items());
    const std::int64_t at = work.packed_offset(first), bytes = work.packed_offset(last) - at;
    std::byte* const staging = staging_[b].get();
    // Buffer b is written only after its last reader is done, and read only after its writer is.
    if (!unpack) {
      XF_CUDA_TRY(cudaStreamWaitEvent(stream, read_[b].get(), 0));
      work.pack_range(first, last, user_place.device_address, staging, stream);
      XF_CUDA_TRY(cudaEventRecord(written_[b].get(), stream));
      XF_CUDA_TRY(cudaStreamWaitEvent(copy_stream_.get(), written_[b].get(), 0));
      XF_CUDA_TRY(cudaMemcpyAsync(host + at, staging, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost,
                                  copy_stream_.get()));
      XF_CUDA_TRY(cudaEventRecord(read_[b].get(), copy_stream_.get()));
    } else {
      XF_CUDA_TRY(cudaStreamWaitEvent(copy_stream_.get(), read_[b].get(), 0));
      XF_CUDA_TRY(cudaMemcpyAsync(staging, host + at, static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice,
                                  copy_stream_.get()));
      XF_CUDA_TRY(cudaEventRecord(written_[b].get(), copy_stream_.get()));
      XF_CUDA_TRY(cudaStreamWaitEvent(stream, written_[b].get(), 0));
      work.unpack_range(first, last, staging, user_place.device_address, stream);
      XF_CUDA_TRY(cudaEventRecord(read_[b].get(), stream));
    }
    ++last_chunks_;
  }
  // Packing ends with a copy on the copy stream, which runs its copies in order: the caller's stream waits
  // for the last one. Unpacking ends with a kernel on the caller's stream already.
  if (!unpack) XF_CUDA_TRY(cudaStreamWaitEvent(stream, read_[b ^ 1].get(), 0));
  return choice;
}

}  // namespace xf::dt
