// The file cache's page table: for every page of every open file, the page slot that holds it
// (slot + 1) or 0. Direct-mapped by page key, one 32-bit word a page (10 MiB for 10 GB of 4 KiB pages), so
// a lookup is one load and an install one compare-and-swap: no hashing, no lock, no global structure on
// the hot path. An entry changes only while its page's slot is claimed (page_slot.hpp): the owner that
// claimed a slot for page K installs K's entry (0 → slot + 1) and, when it reuses the slot, removes it.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"

namespace xf {

/// No slot holds the page.
inline constexpr std::uint32_t no_page_slot = 0xffffffffu;

/// The slot holding the page whose entry this is, or no_page_slot. Acquire: pairs with install's release,
/// though the slot's own pin is what makes its bytes visible.
XF_HOST_DEVICE inline std::uint32_t page_table_lookup(std::uint32_t& entry) {
  return kernel_atomic_ref<std::uint32_t>(entry).load(mo::memory_order_acquire) - 1;
}

/// Points the entry at `slot` if no slot holds the page; otherwise returns the slot that does (the caller
/// abandons its claim and pins that one). Returns `slot` on success.
XF_HOST_DEVICE inline std::uint32_t page_table_install(std::uint32_t& entry, std::uint32_t slot) {
  std::uint32_t seen = 0;
  if (kernel_atomic_ref<std::uint32_t>(entry).compare_exchange_strong(
          seen, slot + 1, mo::memory_order_acq_rel, mo::memory_order_acquire))
    return slot;
  return seen - 1;
}

/// Clears the entry of a page whose slot the owner has claimed for another page. Only that owner can have
/// installed it (an install needs the entry clear), so it points at `slot`: false says the protocol broke.
XF_HOST_DEVICE inline bool page_table_remove(std::uint32_t& entry, std::uint32_t slot) {
  std::uint32_t seen = slot + 1;
  return kernel_atomic_ref<std::uint32_t>(entry).compare_exchange_strong(seen, 0, mo::memory_order_release,
                                                                         mo::memory_order_relaxed);
}

}  // namespace xf
