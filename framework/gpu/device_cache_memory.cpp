// device_cache_memory: cudaMalloc for the blocks' parts, mapped pinned memory for what the I/O threads share.
#include "framework/gpu/device_cache_memory.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "framework/core/cuda_check.hpp"
#include "framework/core/errors.hpp"
#include "framework/core/units.hpp"

namespace xf {

device_cache_memory::~device_cache_memory() {
  for (const block& b : blocks_) cuda_ok(b.place == cache_place::kernel ? cudaFree(b.p) : cudaFreeHost(b.p));
}

void* device_cache_memory::allocate(std::size_t bytes, cache_place place, bool zero) {
  const std::size_t rounded = std::max<std::size_t>((bytes + 4095) / 4096 * 4096, 4096);
  void* p = nullptr;
  if (device_ != current_device) XF_CUDA_TRY(cudaSetDevice(device_));
  if (place == cache_place::kernel) {
    // Ask for no more than the card has free (a cudaMalloc past it fails with a bare "out of memory").
    std::size_t free = 0, total = 0;
    XF_CUDA_TRY(cudaMemGetInfo(&free, &total));
    if (rounded > free)
      throw run_error(fault_site{}, "the file cache needs " + format_bytes(rounded) +
                                        " more of device memory, and " + format_bytes(free) + " of " +
                                        format_bytes(total) + " are free: lower runtime.file_cache.size");
    XF_CUDA_TRY(cudaMalloc(&p, rounded));  // 256-byte aligned at least; page-sized blocks come page-aligned
    blocks_.push_back({p, place});
    if (zero) XF_CUDA_TRY(cudaMemset(p, 0, rounded));
  } else {
    XF_CUDA_TRY(cudaHostAlloc(&p, rounded, cudaHostAllocMapped | cudaHostAllocPortable));
    blocks_.push_back({p, place});
    if (zero) std::memset(p, 0, rounded);
  }
  return p;
}

void device_cache_memory::upload(void* kernel_dst, const void* host_src, std::size_t bytes) {
  if (bytes != 0) XF_CUDA_TRY(cudaMemcpy(kernel_dst, host_src, bytes, cudaMemcpyHostToDevice));
}

void device_cache_memory::download(void* host_dst, const void* kernel_src, std::size_t bytes) {
  if (bytes != 0) XF_CUDA_TRY(cudaMemcpy(host_dst, kernel_src, bytes, cudaMemcpyDeviceToHost));
}

}  // namespace xf
