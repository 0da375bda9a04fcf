// Atomic access to words that both the CPU and the GPU may touch (topic slots, cursors, heap bitmaps).
// Under nvcc this is libcu++'s system-scope atomic_ref, so the GPU executor speaks the same protocol over
// managed memory; in host-only builds it is std::atomic_ref. Every call names its memory order: the topic
// protocol documents, per field, which side writes it and why that order suffices.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"

#if defined(__CUDACC__)
#include <cuda/atomic>
#else
#include <atomic>
#endif

namespace xf {

#if defined(__CUDACC__)
template <class T>
using system_atomic_ref = cuda::atomic_ref<T, cuda::thread_scope_system>;
namespace mo = cuda::std;
#else
template <class T>
using system_atomic_ref = std::atomic_ref<T>;
namespace mo = std;
#endif

/// Words in device memory that only the kernel's blocks touch while it runs (a GPU sink's accumulator,
/// frame_task::state; the file cache's page slots): device scope suffices there; on the host executor,
/// whose threads play the blocks, it is std::atomic_ref.
#if defined(__CUDACC__)
template <class T>
using kernel_atomic_ref = cuda::atomic_ref<T, cuda::thread_scope_device>;
#else
template <class T>
using kernel_atomic_ref = std::atomic_ref<T>;
#endif
template <class T>
using accumulator_atomic_ref = kernel_atomic_ref<T>;

template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE T load_acquire(T& word) {
  return system_atomic_ref<T>(word).load(mo::memory_order_acquire);
}
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE T load_relaxed(T& word) {
  return system_atomic_ref<T>(word).load(mo::memory_order_relaxed);
}
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE void store_release(T& word, T value) {
  system_atomic_ref<T>(word).store(value, mo::memory_order_release);
}
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE void store_relaxed(T& word, T value) {
  system_atomic_ref<T>(word).store(value, mo::memory_order_relaxed);
}
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE T fetch_add_relaxed(T& word, T value) {
  return system_atomic_ref<T>(word).fetch_add(value, mo::memory_order_relaxed);
}
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE T fetch_add_acq_rel(T& word, T value) {
  return system_atomic_ref<T>(word).fetch_add(value, mo::memory_order_acq_rel);
}
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE T fetch_or_acq_rel(T& word, T value) {
  return system_atomic_ref<T>(word).fetch_or(value, mo::memory_order_acq_rel);
}
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE T fetch_and_release(T& word, T value) {
  return system_atomic_ref<T>(word).fetch_and(value, mo::memory_order_release);
}
/// Raises `word` to at least `value`; returns the value seen before.
template <class T>
XF_HOST_DEVICE XF_FORCE_INLINE T fetch_max_acq_rel(T& word, T value) {
  system_atomic_ref<T> ref(word);
  T seen = ref.load(mo::memory_order_relaxed);
  while (seen < value &&
         !ref.compare_exchange_weak(seen, value, mo::memory_order_acq_rel, mo::memory_order_relaxed)) {
  }
  return seen;
}

}  // namespace xf
