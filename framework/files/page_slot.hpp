// One page slot of the file cache: which file page it holds, whether its bytes are there, and how
// many readers are using them, kept so that a reader's pin and the owning block's reuse of the slot can
// never both succeed. Lock-free; the same code on the GPU (device scope: only the kernel's blocks touch
// the cache) and on the host executor's threads.
//
// Protocol (every access through kernel_atomic_ref):
// - The owner (the block whose replacement queue holds the slot) claims it to load a page: only when no
//   reader holds a pin and no load is in flight; the claim leaves the slot `loading` with one pin, the
//   loader's. It then writes the new key, fetches the bytes, and finishes the load (release), keeping its
//   pin until its item is done.
// - A reader that found the slot through the page table pins it (acquire) only while it is `valid`, then
//   checks the key: between its table lookup and its pin the slot may have been claimed and refilled with
//   another page (the pin itself cannot race a claim: a claim needs no pins). A wrong key unpins and
//   reports `stale`, and the reader looks the page up again.
// - The bytes are read only under a pin, so a claim can never overwrite bytes a reader is using.
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"

namespace xf {

enum class page_state : std::uint32_t {
  free = 0,     ///< holds no page
  loading = 1,  ///< claimed: its page's bytes are on the way (the loader holds the one pin)
  valid = 2,    ///< holds its page's bytes
  failed = 3,   ///< its page could not be read (the I/O error is reported by the host's I/O service)
};

/// What a pin found.
enum class pin_status : std::uint32_t {
  pinned,   ///< the slot holds the page and stays so until unpin_page
  loading,  ///< the slot is being (re)filled: try again later (the page may or may not be the one asked)
  failed,   ///< the page could not be read
  stale,    ///< the slot holds another page, or none: look the page up again
};

struct page_slot {
  /// pins (low 32 bits) | page_state (high 32 bits). Written by pinners (pin, unpin) and by the owner
  /// (claim, finish, abandon); a state change by the owner happens only when it holds the slot's only pin
  /// or none.
  std::uint64_t word;
  /// The page held (page key: the page's index among all open files' pages + 1), 0 when free. Written by
  /// the owner between its claim and the end of the load; read by pinners after their acquiring pin.
  std::uint64_t key;
};

static_assert(std::is_trivially_copyable_v<page_slot>, "page slots live in device memory");

namespace page_slot_detail {
XF_HOST_DEVICE constexpr std::uint64_t make_word(std::uint32_t pins, page_state state) {
  return (std::uint64_t{static_cast<std::uint32_t>(state)} << 32) | pins;
}
XF_HOST_DEVICE constexpr std::uint32_t pins_of(std::uint64_t word) {
  return static_cast<std::uint32_t>(word);
}
XF_HOST_DEVICE constexpr page_state state_of(std::uint64_t word) {
  return static_cast<page_state>(word >> 32);
}
}  // namespace page_slot_detail

/// The slot's state and pins, for reports and tests (relaxed: a snapshot).
XF_HOST_DEVICE inline page_state slot_state(page_slot& slot) {
  return page_slot_detail::state_of(
      kernel_atomic_ref<std::uint64_t>(slot.word).load(mo::memory_order_relaxed));
}
XF_HOST_DEVICE inline std::uint32_t slot_pins(page_slot& slot) {
  return page_slot_detail::pins_of(
      kernel_atomic_ref<std::uint64_t>(slot.word).load(mo::memory_order_relaxed));
}

/// Pins `slot` if it holds the page `key` with its bytes. On `pinned` the bytes are visible to the caller
/// (acquire) and stay until unpin_page.
XF_HOST_DEVICE inline pin_status pin_page(page_slot& slot, std::uint64_t key) {
  using namespace page_slot_detail;
  kernel_atomic_ref<std::uint64_t> word(slot.word);
  std::uint64_t seen = word.load(mo::memory_order_acquire);
  while (true) {
    switch (state_of(seen)) {
      case page_state::valid:
        break;
      case page_state::loading:
        return pin_status::loading;
      case page_state::failed:
        return kernel_atomic_ref<std::uint64_t>(slot.key).load(mo::memory_order_relaxed) == key
                   ? pin_status::failed
                   : pin_status::stale;
      case page_state::free:
        return pin_status::stale;
    }
    // Acquire on success: the loader's bytes and key, released by finish_load, are visible.
    if (word.compare_exchange_weak(seen, seen + 1, mo::memory_order_acquire, mo::memory_order_acquire)) break;
  }
  if (kernel_atomic_ref<std::uint64_t>(slot.key).load(mo::memory_order_relaxed) == key)
    return pin_status::pinned;
  word.fetch_sub(1, mo::memory_order_relaxed);  // another page: nothing of it was read
  return pin_status::stale;
}

/// Ends a pin (the reader's or the loader's). Release: the reader's last reads of the bytes happen before
/// the owner may claim the slot again.
XF_HOST_DEVICE inline void unpin_page(page_slot& slot) {
  kernel_atomic_ref<std::uint64_t>(slot.word).fetch_sub(1, mo::memory_order_release);
}

/// The owner claims `slot` for the page `key` if no reader holds it and no load is in flight. On success
/// the slot is `loading` with the loader's pin and its key is `key`; `*old_key` is the page it held (0 if
/// none), whose page-table entry the owner removes. Acquire: the last reader's unpin happened before.
XF_HOST_DEVICE inline bool claim_slot(page_slot& slot, std::uint64_t key, std::uint64_t* old_key) {
  using namespace page_slot_detail;
  kernel_atomic_ref<std::uint64_t> word(slot.word);
  std::uint64_t seen = word.load(mo::memory_order_acquire);
  while (pins_of(seen) == 0 && state_of(seen) != page_state::loading) {
    if (word.compare_exchange_weak(seen, make_word(1, page_state::loading), mo::memory_order_acquire,
                                   mo::memory_order_acquire)) {
      kernel_atomic_ref<std::uint64_t> held(slot.key);
      *old_key = held.load(mo::memory_order_relaxed);
      held.store(key, mo::memory_order_relaxed);  // published by finish_load's release
      return true;
    }
  }
  return false;
}

/// The loader's bytes are in the slot (`ok`) or could not be read: the slot becomes `valid` or `failed`,
/// and the loader keeps its pin. Release: on the GPU the warp that wrote the bytes must have met a
/// __syncwarp (and, for bytes written by other warps, a barrier) before this call.
XF_HOST_DEVICE inline void finish_load(page_slot& slot, bool ok) {
  using namespace page_slot_detail;
  // Only the loader's pin exists while loading (pins need `valid`), so the state changes by addition.
  const std::uint64_t delta =
      make_word(0, ok ? page_state::valid : page_state::failed) - make_word(0, page_state::loading);
  kernel_atomic_ref<std::uint64_t>(slot.word).fetch_add(delta, mo::memory_order_release);
}

/// The owner gives a claimed slot back without loading it (another block installed the page first): the
/// slot holds no page and no pin.
XF_HOST_DEVICE inline void abandon_claim(page_slot& slot) {
  kernel_atomic_ref<std::uint64_t>(slot.key).store(0, mo::memory_order_relaxed);
  kernel_atomic_ref<std::uint64_t>(slot.word).store(page_slot_detail::make_word(0, page_state::free),
                                                    mo::memory_order_release);
}

}  // namespace xf
