// The memory the benchmark's non-library host sides allocate: the explicit versions' host copies (pageable
// or pinned) and managed memory, never more of it than the GPU has free. Device memory is
// xf::device_buffer (cudaMalloc).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>

#include "framework/core/cuda_check.hpp"

namespace xf::shared_bench {

/// A host copy of `count` zero Ts: pageable (every page touched here, as the library's and cudaMalloc's
/// allocations leave theirs ready) or pinned (cudaMallocHost). Move-only.
template <class T>
class host_array {
 public:
  host_array(std::size_t count, bool pinned) : count_(count), pinned_(pinned) {
    if (pinned_) {
      void* p = nullptr;
      XF_CUDA_TRY(cudaMallocHost(&p, count * sizeof(T)));
      std::memset(p, 0, count * sizeof(T));
      data_ = static_cast<T*>(p);
    } else {
      data_ = new T[count]();
    }
  }
  ~host_array() {
    if (data_ == nullptr) return;
    if (pinned_)
      cuda_ok(cudaFreeHost(data_));
    else
      delete[] data_;
  }
  host_array(host_array&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(o.count_), pinned_(o.pinned_) {}
  host_array& operator=(host_array&&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  T& operator[](std::size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  std::size_t count_;
  bool pinned_;
};

/// Books `bytes` of managed memory against what the GPU has free, or throws std::runtime_error naming both:
/// the managed variants never oversubscribe the GPU (a run that pages managed memory in and out of a full
/// GPU measures the driver's eviction, and can take minutes). Conservative: what this program has booked
/// counts in full even where part of it already sits in the GPU's memory (then counted twice).
void book_managed(std::size_t bytes);
void unbook_managed(std::size_t bytes) noexcept;

/// `count` Ts of managed memory (cudaMallocManaged, attached globally); contents undefined until written.
template <class T>
class managed_array {
 public:
  explicit managed_array(std::size_t count) : count_(count) {
    book_managed(count_ * sizeof(T));
    void* p = nullptr;
    if (const cudaError_t e = cudaMallocManaged(&p, count_ * sizeof(T), cudaMemAttachGlobal);
        e != cudaSuccess) {
      unbook_managed(count_ * sizeof(T));
      XF_CUDA_TRY(e);
    }
    data_ = static_cast<T*>(p);
  }
  ~managed_array() {
    if (data_ == nullptr) return;
    cuda_ok(cudaFree(data_));
    unbook_managed(count_ * sizeof(T));
  }
  managed_array(managed_array&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(o.count_) {}
  managed_array& operator=(managed_array&&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

/// Where cudaMemPrefetchAsync and cudaMemAdvise send or keep pages.
cudaMemLocation gpu_location(int device);
cudaMemLocation cpu_location();

}  // namespace xf::shared_bench
