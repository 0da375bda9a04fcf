// Move-only owners of CUDA memory (STYLE.md §3–4): device memory (cudaMalloc), pinned host memory mapped
// into the device's address space (cudaHostAlloc), and a stream. Destructors never throw; leak() gives
// the memory up on purpose when the device context is wedged (a hung or faulted kernel), where a free
// would block or fail.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "framework/gpu/cuda_check.hpp"

namespace xf {

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : count_(count) {
    if (count == 0) return;
    XF_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    XF_CUDA_TRY(cudaMemset(data_, 0, count * sizeof(T)));
  }
  ~device_buffer() {
    if (data_) cuda_ok(cudaFree(data_));
  }
  device_buffer(device_buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(o.count_) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    return *this;
  }
  T* get() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  void leak() noexcept { data_ = nullptr; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// Zero-filled pinned host memory that the device reads and writes directly over PCIe.
template <class T>
class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t count) : count_(count) {
    if (count == 0) return;
    XF_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&data_), count * sizeof(T), cudaHostAllocMapped));
    std::memset(static_cast<void*>(data_), 0, count * sizeof(T));
  }
  ~pinned_buffer() {
    if (data_) cuda_ok(cudaFreeHost(data_));
  }
  pinned_buffer(pinned_buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(o.count_) {}
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    return *this;
  }
  /// The host pointer; with unified addressing it is also the device's.
  T* get() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  void leak() noexcept { data_ = nullptr; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

class cuda_stream {
 public:
  cuda_stream() { XF_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~cuda_stream() {
    if (stream_) cuda_ok(cudaStreamDestroy(stream_));
  }
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }
  void leak() noexcept { stream_ = nullptr; }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace xf
