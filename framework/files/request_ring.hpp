// The doorbell between the GPU's blocks and the host's I/O threads: a bounded ring of request
// slot numbers with many producers (blocks that need file pages) and many consumers (I/O threads), in
// pinned host memory. Each cell carries a sequence number (Vyukov's bounded MPMC queue): a producer writes
// a cell only once the consumer of the cell's previous round has read it, and a consumer reads it only once
// its producer has finished writing it, so a producer that stalls between taking a position and writing
// the cell can never be overtaken by one a whole ring ahead. Neither side blocks: a full ring or an empty
// one is a `false` to try again later (a block in a later round, a thread after its backoff).
//
// Memory: `cells` are read and written by both processors (system scope). `head` is taken only by
// producers (the GPU's blocks: device memory, device scope; host threads in host mode), `tail` only by
// consumers (host threads, always).
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"

namespace xf {

/// One position of the ring, a cache line to itself: its producer and its consumer write it in turn.
struct alignas(64) request_ring_cell {
  /// position + 1 once the producer wrote the cell for `position`; position + capacity once the consumer
  /// read it (free for the next round); starts at the cell's index.
  std::uint64_t seq;
  /// The request slot whose request is ready (written by the producer before its release of `seq`).
  std::uint32_t request_slot;
};

struct request_ring_view {
  request_ring_cell* cells;  ///< `capacity` cells (pinned host memory on the GPU executor)
  std::uint64_t capacity;    ///< a power of two
  std::uint64_t* head;       ///< the next position a producer takes
  std::uint64_t* tail;       ///< the next position a consumer takes (host memory)
};

static_assert(std::is_trivially_copyable_v<request_ring_view>, "passed to the kernel by value");

/// Puts every cell at its first round (before producers and consumers start; not thread-safe).
inline void reset_request_ring(request_ring_view ring) {
  for (std::uint64_t i = 0; i < ring.capacity; ++i) ring.cells[i] = request_ring_cell{i, 0};
  *ring.head = 0;
  *ring.tail = 0;
}

/// A producer rings for `request_slot`, whose request it has written. Release: the request's fields,
/// written by this thread before the call, are visible to the consumer that pops it (on the GPU, fields
/// written by other threads of the block must have met a barrier and a system fence first). False: the
/// ring is full (every cell holds a request no consumer has read yet).
XF_HOST_DEVICE inline bool try_push_request(request_ring_view ring, std::uint32_t request_slot) {
  kernel_atomic_ref<std::uint64_t> head(*ring.head);
  std::uint64_t position = head.load(mo::memory_order_relaxed);
  while (true) {
    request_ring_cell& cell = ring.cells[position & (ring.capacity - 1)];
    const std::uint64_t seq = system_atomic_ref<std::uint64_t>(cell.seq).load(mo::memory_order_acquire);
    const auto lag = static_cast<std::int64_t>(seq - position);
    if (lag == 0) {
      if (head.compare_exchange_weak(position, position + 1, mo::memory_order_relaxed,
                                     mo::memory_order_relaxed)) {
        system_atomic_ref<std::uint32_t>(cell.request_slot).store(request_slot, mo::memory_order_relaxed);
        system_atomic_ref<std::uint64_t>(cell.seq).store(position + 1, mo::memory_order_release);
        return true;
      }
    } else if (lag < 0) {
      return false;  // the cell still holds position - capacity, unread
    } else {
      position = head.load(mo::memory_order_relaxed);  // another producer took this position
    }
  }
}

/// A consumer (a host I/O thread) takes the oldest request rung. Acquire: its fields are visible. False:
/// nothing rung.
inline bool try_pop_request(request_ring_view ring, std::uint32_t* request_slot) {
  std::atomic_ref<std::uint64_t> tail(*ring.tail);
  std::uint64_t position = tail.load(std::memory_order_relaxed);
  while (true) {
    request_ring_cell& cell = ring.cells[position & (ring.capacity - 1)];
    const std::uint64_t seq = system_atomic_ref<std::uint64_t>(cell.seq).load(mo::memory_order_acquire);
    const auto lag = static_cast<std::int64_t>(seq - (position + 1));
    if (lag == 0) {
      if (tail.compare_exchange_weak(position, position + 1, std::memory_order_relaxed,
                                     std::memory_order_relaxed)) {
        *request_slot = system_atomic_ref<std::uint32_t>(cell.request_slot).load(mo::memory_order_relaxed);
        // Release: the read of the cell happens before its next producer overwrites it.
        system_atomic_ref<std::uint64_t>(cell.seq).store(position + ring.capacity, mo::memory_order_release);
        return true;
      }
    } else if (lag < 0) {
      return false;  // not rung yet (or its producer is still writing it)
    } else {
      position = tail.load(std::memory_order_relaxed);  // another consumer took this position
    }
  }
}

}  // namespace xf
