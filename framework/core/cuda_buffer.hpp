// Move-only owners of CUDA memory: device memory (cudaMalloc), pinned host memory mapped
// into the device's address space (cudaHostAlloc), a stream and an event. Destructors never throw; leak()
// gives the memory up on purpose when the device context is wedged (a hung or faulted kernel), where a free
// would block or fail.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "framework/core/cuda_check.hpp"

namespace xf {

namespace detail {
/// Device memory: what bulk data on the GPU lives in (cudaMalloc, never managed memory).
struct device_memory_kind {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    XF_CUDA_TRY(cudaMalloc(&p, bytes));
    XF_CUDA_TRY(cudaMemset(p, 0, bytes));
    return p;
  }
  static void release(void* p) noexcept { cuda_ok(cudaFree(p)); }
};
/// Pinned host memory mapped into the device's address space (with unified addressing the host pointer
/// is also the device's): control words the device reads and writes directly over PCIe.
struct pinned_memory_kind {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    XF_CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocMapped));
    std::memset(p, 0, bytes);
    return p;
  }
  static void release(void* p) noexcept { cuda_ok(cudaFreeHost(p)); }
};
}  // namespace detail

/// `count` zero-filled objects of trivially copyable T in memory of the given kind.
template <class T, class Kind>
class cuda_array {
 public:
  cuda_array() = default;
  explicit cuda_array(std::size_t count) : count_(count) {
    if (count != 0) data_ = static_cast<T*>(Kind::allocate(count * sizeof(T)));
  }
  ~cuda_array() {
    if (data_) Kind::release(data_);
  }
  cuda_array(cuda_array&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(o.count_) {}
  cuda_array& operator=(cuda_array&& o) noexcept {
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

template <class T>
using device_buffer = cuda_array<T, detail::device_memory_kind>;
template <class T>
using pinned_buffer = cuda_array<T, detail::pinned_memory_kind>;

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

/// An event: a completion marker (no timestamps: recording and waiting stay cheap), or with `timing` one
/// end of an interval measured with cudaEventElapsedTime.
class cuda_event {
 public:
  explicit cuda_event(bool timing = false) {
    XF_CUDA_TRY(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~cuda_event() {
    if (event_) cuda_ok(cudaEventDestroy(event_));
  }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace xf
