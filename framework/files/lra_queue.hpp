// Which cache slot a block fills next: the GPUfs readahead paper's replacement (§5). Each block
// owns a fixed share of the page cache's slots (cache slots / resident blocks) and reuses them in the order
// it allocated them, least recently allocated first, in place: no free list, no global queue, no lock, and
// no other block's allocations on its hot path. The plain global policy it is measured against shares one
// hand over every slot among all blocks.
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"
#include "framework/files/page_slot.hpp"
#include "framework/files/page_table.hpp"

namespace xf {

/// A block's queue over the slots [first_slot, first_slot + slot_count). The hand points at the slot
/// allocated longest ago; one block owns the queue (on the GPU its hand lives in shared memory or with
/// the block's thread 0), so it needs no atomics of its own.
struct lra_queue {
  std::uint32_t first_slot = 0;
  std::uint32_t slot_count = 0;
  std::uint32_t hand = 0;  ///< 0 .. slot_count - 1

  /// Claims the least recently allocated slot that no reader pins and no load holds, for page `key`
  /// (claim_slot: the slot is `loading` with the caller's pin and `*old_key` is the page it held). The hand
  /// moves past slots in use, which come round again after the rest of the share. Returns no_page_slot
  /// when every slot of the share is in use: the caller tries again in a later round.
  XF_HOST_DEVICE std::uint32_t allocate(page_slot* slots, std::uint64_t key, std::uint64_t* old_key) {
    for (std::uint32_t tries = 0; tries < slot_count; ++tries) {
      const std::uint32_t slot = first_slot + hand;
      hand = hand + 1 == slot_count ? 0 : hand + 1;
      if (claim_slot(slots[slot], key, old_key)) return slot;
    }
    return no_page_slot;
  }
};

static_assert(std::is_trivially_copyable_v<lra_queue>, "one per block, kept in device memory between runs");

/// The plain global policy: one hand over all `slot_count` slots, advanced by every block with an atomic
/// add (the word lives in device memory). Tries at most `slot_count` slots.
XF_HOST_DEVICE inline std::uint32_t allocate_global(page_slot* slots, std::uint32_t slot_count,
                                                    std::uint64_t& global_hand, std::uint64_t key,
                                                    std::uint64_t* old_key) {
  for (std::uint32_t tries = 0; tries < slot_count; ++tries) {
    const auto slot = static_cast<std::uint32_t>(
        kernel_atomic_ref<std::uint64_t>(global_hand).fetch_add(1, mo::memory_order_relaxed) % slot_count);
    if (claim_slot(slots[slot], key, old_key)) return slot;
  }
  return no_page_slot;
}

}  // namespace xf
