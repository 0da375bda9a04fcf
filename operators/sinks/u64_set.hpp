// A set of u64 keys in a GPU sink's accumulator: open addressing with linear probing, key 0 marking a free
// slot, insertion by compare-exchange so every block and host thread may insert at once. What the
// affinity sinks keep (cards, merchant–card pairs); usable on both sides.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"

namespace xf::u64_set {

/// The slot a key's probe starts at: splitmix64's finaliser, so clustered keys spread.
XF_HOST_DEVICE XF_FORCE_INLINE std::uint64_t home(std::uint64_t key, std::uint64_t capacity) {
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ull;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebull;
  key ^= key >> 31;
  return key & (capacity - 1);
}

inline constexpr std::uint64_t not_found = ~std::uint64_t{0};

/// Inserts `key` (≠ 0) into `slots` (`capacity` of them, a power of two): the slot that holds it, with
/// `*inserted` telling whether this call put it there; not_found when every slot holds another key.
/// Thread-safe against other inserts.
XF_HOST_DEVICE inline std::uint64_t insert(std::uint64_t* slots, std::uint64_t capacity, std::uint64_t key,
                                           bool* inserted) {
  *inserted = false;
  for (std::uint64_t probe = 0, i = home(key, capacity); probe < capacity;
       ++probe, i = (i + 1) & (capacity - 1)) {
    accumulator_atomic_ref<std::uint64_t> slot(slots[i]);
    std::uint64_t seen = slot.load(mo::memory_order_relaxed);
    if (seen == 0 && slot.compare_exchange_strong(seen, key, mo::memory_order_relaxed)) {
      *inserted = true;
      return i;
    }
    if (seen == key) return i;  // there already, or claimed by another thread meanwhile
  }
  return not_found;
}

/// The slot holding `key` (≠ 0), or not_found. For a set nobody inserts into meanwhile (plain loads).
XF_HOST_DEVICE inline std::uint64_t find(const std::uint64_t* slots, std::uint64_t capacity,
                                         std::uint64_t key) {
  for (std::uint64_t probe = 0, i = home(key, capacity); probe < capacity;
       ++probe, i = (i + 1) & (capacity - 1)) {
    if (slots[i] == key) return i;
    if (slots[i] == 0) return not_found;
  }
  return not_found;
}

}  // namespace xf::u64_set
