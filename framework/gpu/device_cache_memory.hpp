// The file cache's memory on the GPU executor (files/cache_memory.hpp): kernel memory is device
// memory (cudaMalloc: the blocks reach slots, pages and table at L2 speed), shared memory is pinned host
// memory mapped into the device (the I/O threads pread into staging, the blocks read it over PCIe).
#pragma once

#include <cstddef>
#include <vector>

#include "framework/files/cache_memory.hpp"

namespace xf {

class device_cache_memory final : public cache_memory {
 public:
  /// On GPU `device` (a CUDA ordinal: the run's).
  explicit device_cache_memory(int device) : device_(device) {}
  /// On the current device of the thread that allocates (programs that chose one themselves). Makes no
  /// CUDA call here: a program without a GPU may make one and fail only when it allocates.
  device_cache_memory() : device_(current_device) {}
  ~device_cache_memory() override;
  device_cache_memory(const device_cache_memory&) = delete;
  device_cache_memory& operator=(const device_cache_memory&) = delete;

  /// Throws run_error naming the bytes asked and the device memory free when the device cannot hold them.
  /// Makes `device` (when one was given) the calling thread's current device (cudaMalloc and
  /// cudaMemGetInfo take no device).
  void* allocate(std::size_t bytes, cache_place place, bool zero) override;
  void upload(void* kernel_dst, const void* host_src, std::size_t bytes) override;
  void download(void* host_dst, const void* kernel_src, std::size_t bytes) override;
  const char* kernel_name() const override { return "device memory"; }
  bool kernel_on_host() const override { return false; }
  /// Gives the memory up without freeing it (a wedged device context: a free would block or fail).
  void leak() noexcept { blocks_.clear(); }

 private:
  struct block {
    void* p;
    cache_place place;
  };
  static constexpr int current_device = -1;
  int device_;
  std::vector<block> blocks_;
};

}  // namespace xf
