// Packing kernels launched chunk by chunk, their events polled while MPI moves the chunks already packed;
// unpacking kernels launched as the chunks they read arrive.
#include "framework/mpi/device_transfer.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "framework/core/cuda_check.hpp"
#include "framework/datatype/device_type.hpp"
#include "framework/datatype/gpu_pack.hpp"
#include "framework/datatype/pack.hpp"

namespace xf::mpi::detail {

namespace {
using i64 = std::int64_t;

std::string describe_packing(const dt::detail::kernel_work& work) {
  dt::pack_choice c;
  c.path = dt::pack_path::kernel;
  c.method = work.method();
  c.unit_bytes = work.unit_bytes();
  return c.describe();
}
}  // namespace

bool on_device(const message_type& t, i64 count, const void* buf) {
  const dt::datatype& type = t.type();
  if (count <= 0 || type.size() == 0 || buf == nullptr) return false;
  // The lowest data byte: surely inside the caller's allocation, whatever the signs of the displacements.
  const i64 shift = (count - 1) * type.extent();
  const i64 lowest = type.true_lb() + std::min<i64>(0, shift);
  cudaPointerAttributes where{};
  const cudaError_t e = cudaPointerGetAttributes(&where, static_cast<const std::byte*>(buf) + lowest);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();
    return false;
  }
  XF_CUDA_TRY(e);
  return where.type == cudaMemoryTypeDevice || where.type == cudaMemoryTypeManaged;
}

std::byte* device_transfer::first_buffer(route r, i64 first_bytes, i64 capacity) {
  // The staged route unpacks from where the first message lands, so the room is for the whole message.
  const i64 room = r == route::cuda_aware ? first_bytes : std::max(first_bytes, header_bytes + capacity);
  return pinned_room(room);
}

std::byte* device_transfer::device_room(i64 bytes) {
  if (device_.size() < static_cast<std::size_t>(bytes)) {
    device_ = device_buffer<std::byte>(static_cast<std::size_t>(bytes));
    // device_buffer zeroes on the legacy default stream, which stream_ (non-blocking) does not wait for.
    XF_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
  }
  return device_.get();
}

std::byte* device_transfer::pinned_room(i64 bytes) {
  if (pinned_.size() < static_cast<std::size_t>(bytes))
    pinned_ = pinned_buffer<std::byte>(static_cast<std::size_t>(bytes));
  return pinned_.get();
}

std::string device_transfer::send(const message_type& t, i64 count, const void* buf, route r, i64 chunk_bytes,
                                  chunk_sender& out) {
  const dt::device_type& d = t.device();
  const i64 bytes = dt::packed_bytes(t.committed(), count);
  std::byte* const message =
      r == route::cuda_aware ? device_room(header_bytes + bytes) : pinned_room(header_bytes + bytes);
  std::byte* const staging = message + header_bytes;
  header_ = {bytes, chunk_bytes};
  if (r == route::cuda_aware)  // ordered before the packing kernels, so the first piece's event covers it
    XF_CUDA_TRY(cudaMemcpyAsync(message, &header_, sizeof header_, cudaMemcpyHostToDevice, stream_.get()));
  else
    std::memcpy(message, &header_, sizeof header_);
  out.start(message, header_);
  if (bytes == 0) {
    XF_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
    return "";
  }
  dt::detail::expect_device_of(d);
  const auto* user = static_cast<const std::byte*>(buf);
  // The staging memory at the address the device uses: pinned memory is mapped at its host address.
  const dt::detail::kernel_work work(d, count, d.plan().method, user, staging);
  const i64 step = work.items_within(chunk_bytes);  // a packed piece never outgrows a wire chunk
  const i64 pieces = (work.items() + step - 1) / step;
  while (static_cast<i64>(packed_.size()) < pieces) packed_.emplace_back();
  const auto end_of = [&](i64 k) { return work.packed_offset(std::min(work.items(), (k + 1) * step)); };
  // Launch a piece, then send every piece whose kernel is done; once all are launched, wait for the rest
  // while MPI moves the sends (a large send needs the sender's progress to hand its data over).
  i64 launched = 0, sent = 0;
  while (sent < pieces) {
    if (launched < pieces) {
      const i64 first = launched * step, last = std::min(work.items(), first + step);
      work.pack_range(first, last, user, staging + work.packed_offset(first), stream_.get());
      XF_CUDA_TRY(cudaEventRecord(packed_[static_cast<std::size_t>(launched)].get(), stream_.get()));
      ++launched;
    }
    for (; sent < launched; ++sent) {
      const cudaError_t e = cudaEventQuery(packed_[static_cast<std::size_t>(sent)].get());
      if (e == cudaErrorNotReady) break;
      XF_CUDA_TRY(e);
      out.packed_until(end_of(sent));
    }
    if (launched == pieces && sent < pieces) out.progress();
  }
  return describe_packing(work);
}

std::string device_transfer::recv(const message_type& t, i64 full, i64 tail_elements, void* buf, route r,
                                  staged_unpack unpack, const wire_header& header, chunk_receiver& in) {
  const dt::device_type& d = t.device();
  // `landing`: where MPI leaves the packed bytes; `source`: where the kernels read them. The first message
  // is in pinned memory (first_buffer()).
  std::byte* landing = pinned_.get() + header_bytes;
  std::byte* source = landing;
  if (r == route::cuda_aware) {
    // Chunk 0 came with the header into pinned memory; the rest goes to device memory behind it.
    const i64 first = first_message_bytes(header) - header_bytes;
    landing = source = device_room(header.bytes);
    if (first > 0)
      XF_CUDA_TRY(cudaMemcpyAsync(source, pinned_.get() + header_bytes, static_cast<std::size_t>(first),
                                  cudaMemcpyHostToDevice, stream_.get()));
  } else if (unpack == staged_unpack::device_copy) {
    source = device_room(header.bytes);
  }
  in.post(landing, header);
  if (header.bytes == 0) return "";
  dt::detail::expect_device_of(d);
  // Packed bytes [from, to) are in; on the device-copy path, copies them to where the kernels read.
  const auto arrived = [&](i64 from, i64 to) {
    in.wait_until(to);
    if (source != landing && to > from)
      XF_CUDA_TRY(cudaMemcpyAsync(source + from, landing + from, static_cast<std::size_t>(to - from),
                                  cudaMemcpyHostToDevice, stream_.get()));
  };
  auto* user = static_cast<std::byte*>(buf);
  std::string packing;
  if (full > 0) {
    const dt::detail::kernel_work work(d, full, d.plan().method, user, source);
    const i64 step = work.items_within(header.chunk_bytes);
    // Each piece's kernel is queued once its bytes are in, and runs while the next piece's arrive.
    for (i64 first = 0; first < work.items(); first += step) {
      const i64 last = std::min(work.items(), first + step);
      arrived(work.packed_offset(first), work.packed_offset(last));
      work.unpack_range(first, last, source + work.packed_offset(first), user, stream_.get());
    }
    packing = describe_packing(work);
  }
  if (tail_elements > 0) {
    // The message ends inside an instance: its elements one by one (a copy unit of the plan's kernels
    // could straddle the end).
    const i64 packed_at = full * t.type().size(), user_at = full * t.type().extent();
    const dt::detail::kernel_work tail(d, 1, dt::pack_method::elements, user + user_at, source + packed_at);
    arrived(packed_at, header.bytes);
    tail.unpack_range(0, tail_elements, source + packed_at, user + user_at, stream_.get());
    if (packing.empty()) packing = describe_packing(tail);
  }
  in.finish();
  XF_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
  return packing;
}

}  // namespace xf::mpi::detail
