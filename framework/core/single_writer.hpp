// Counters that one thread writes and others only read (stats): a relaxed load and store, no
// read-modify-write, since no other thread adds to them.
#pragma once

#include <atomic>
#include <cstdint>

namespace xf {

inline void add_single_writer(std::atomic<std::uint64_t>& counter, std::uint64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace xf
