// A block's wide copies (device code, shared by the virtualised kernel and block_read.cuh): a topic's frame
// staged into a block's scratch and back, and the file cache's queued page moves.
#pragma once

#include <cuda/atomic>

#include <cstdint>

#include "framework/files/page_moves.hpp"
#include "framework/files/page_slot.hpp"

namespace xf {

/// Copies `bytes` between a topic's frame in host memory and a block's scratch (either way) with 16-byte
/// accesses, `unroll` loads in flight per thread before any store: a staged input waits on PCIe latency
/// once per `unroll·threads·16` bytes instead of once per element, and a staged output crosses PCIe in
/// 512-byte warp stores instead of the operator's element-sized ones. Both pointers are 16-byte aligned.
__device__ __forceinline__ void stage_copy(std::byte* dst, const std::byte* src, std::uint64_t bytes,
                                           std::uint32_t thread, std::uint32_t threads) {
  constexpr std::uint32_t unroll = 8;
  const auto* s = reinterpret_cast<const uint4*>(src);
  auto* d = reinterpret_cast<uint4*>(dst);
  const std::uint64_t vectors = bytes / sizeof(uint4);
  const std::uint64_t step = std::uint64_t{threads} * unroll;
  for (std::uint64_t base = thread; base < vectors; base += step) {
    uint4 v[unroll];
#pragma unroll
    for (std::uint32_t u = 0; u < unroll; ++u) {
      const std::uint64_t i = base + std::uint64_t{u} * threads;
      if (i < vectors) v[u] = s[i];
    }
#pragma unroll
    for (std::uint32_t u = 0; u < unroll; ++u) {
      const std::uint64_t i = base + std::uint64_t{u} * threads;
      if (i < vectors) d[i] = v[u];
    }
  }
  for (std::uint64_t i = vectors * sizeof(uint4) + thread; i < bytes; i += threads) dst[i] = src[i];
}

/// The queued page moves of a block's fetch (every thread of the block calls it, after a barrier that
/// follows the fetch, when any were queued): the copies out of staging, a barrier, the copies out of the
/// readahead buffer, a barrier, then thread 0 finishes the loads. 16-byte accesses, several in flight per
/// thread: staging is read over PCIe.
__device__ inline void run_moves(deferred_moves& moves, page_slot* slots) {
  const auto copy = [](std::byte* dst, const std::byte* src, std::uint32_t bytes, std::uint32_t zeros) {
    stage_copy(dst, src, bytes, threadIdx.x, blockDim.x);
    for (std::uint32_t i = threadIdx.x; i < zeros; i += blockDim.x) dst[bytes + i] = std::byte{0};
  };
  moves.run(0, copy);
  __syncthreads();
  if (moves.takes != 0) {
    moves.run(1, copy);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    // The pages were written by the block's threads (ordered to thread 0 by the barrier): a device-scope
    // release before the loads' own makes them visible to every block that pins them.
    cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);
    moves.finish(slots);
  }
}

}  // namespace xf
