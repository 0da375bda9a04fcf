// The device's copy of a committed type: plan, limits of the current device, and one upload.
#include "framework/datatype/device_type.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <utility>

namespace xf::dt {

namespace {

device_limits read_device_limits() {
  device_limits l;
  XF_CUDA_TRY(cudaGetDevice(&l.device));
  XF_CUDA_TRY(cudaDeviceGetAttribute(&l.sm_count, cudaDevAttrMultiProcessorCount, l.device));
  XF_CUDA_TRY(
      cudaDeviceGetAttribute(&l.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, l.device));
  XF_CUDA_TRY(cudaDeviceGetAttribute(&l.max_threads_per_block, cudaDevAttrMaxThreadsPerBlock, l.device));
  int value = 0;
  XF_CUDA_TRY(cudaDeviceGetAttribute(&value, cudaDevAttrMaxPitch, l.device));
  l.max_pitch = value;
  XF_CUDA_TRY(cudaDeviceGetAttribute(&value, cudaDevAttrPageableMemoryAccess, l.device));
  l.pageable_memory_access = value != 0;
  return l;
}

std::uint64_t next_serial() {
  static std::atomic<std::uint64_t> last{0};
  return ++last;
}

}  // namespace

device_type::device_type(committed_type t, const plan_options& plan)
    : type_(std::move(t)),
      plan_(plan_packing(type_, plan)),
      limits_(read_device_limits()),
      serial_(next_serial()) {
  const auto bytes = type_.bytes();
  const std::size_t serialized_words = bytes.size() / sizeof(std::int64_t);
  words_ = device_buffer<std::int64_t>(serialized_words + plan_.tables.size());
  // On the legacy default stream, behind the allocation's cudaMemset, and waited for there: a copy from
  // pageable memory may return before its DMA ends, and kernels on non-blocking streams do not wait for
  // the legacy stream. The persistent kernels run on non-blocking streams, so this wait never meets them.
  XF_CUDA_TRY(
      cudaMemcpyAsync(words_.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, cudaStreamLegacy));
  if (!plan_.tables.empty())
    XF_CUDA_TRY(cudaMemcpyAsync(words_.get() + serialized_words, plan_.tables.data(),
                                plan_.tables.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice,
                                cudaStreamLegacy));
  XF_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
  const serialized_header h = type_.header();
  const auto* device_bytes = reinterpret_cast<const std::byte*>(words_.get());
  view_ = serialized_view{device_bytes + h.records_offset, device_bytes + h.lookaside_offset, h.record_count};
  tables_ = words_.get() + serialized_words;
}

}  // namespace xf::dt
