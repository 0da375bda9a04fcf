// How the fetch (file_fetch.hpp) moves a page's bytes, and what it does once they are moved: a
// page copied into its slot finishes the slot's load (valid, still pinned by the item that loaded it), and
// a request slot whose staged bytes were all read goes back to its block.
//
// - inline_moves: the calling thread moves the bytes at once (the host executor's blocks).
// - deferred_moves: the moves are queued, and the block's threads run them together before the round's
//   compute (the GPU kernel). One thread runs the fetch protocol for its block, but the bytes cross PCIe
//   out of pinned staging: a page needs the block's threads, each with a wide load in flight, not one
//   thread's loop. The queue runs in two batches with a barrier between them — first the copies out of
//   staging (into slots, and a readahead into the block's buffer), then the copies out of the readahead
//   buffer into slots — and then one thread finishes the loads and gives the request slots back. So:
//     * a page taken from the readahead buffer is copied after the buffer was filled, and the buffer is
//       refilled at most once a round and never after a page was taken from it that round
//       (`may_fill_ahead`: an answer that would refill it waits for the next round);
//     * a request slot is reused only after its staging was read (the give-back comes after the copies);
//     * nobody else pins a page before its bytes are there (the finish comes after the copies).
//   A step that finds the queue full leaves the rest for the next round, exactly like a step that finds no
//   request slot free.
#pragma once

#include <cstdint>
#include <cstring>

#include "framework/core/exec_space.hpp"
#include "framework/files/page_slot.hpp"
#include "framework/files/page_table.hpp"

namespace xf {

struct inline_moves {
  XF_HOST_DEVICE bool room(std::uint32_t) const { return true; }
  XF_HOST_DEVICE bool may_fill_ahead() const { return true; }
  /// Staged bytes [src, src + bytes) into `page`, the bytes of slot `slot` (the rest of the page zeroed:
  /// past the end of the file); the slot's load is finished.
  XF_HOST_DEVICE void to_slot(page_slot* slots, std::uint32_t slot, std::byte* page, const std::byte* src,
                              std::uint64_t bytes, std::uint64_t page_bytes) {
    std::memcpy(page, src, bytes);
    if (bytes < page_bytes) std::memset(page + bytes, 0, page_bytes - bytes);
    finish_load(slots[slot], true);
  }
  /// A readahead's staged bytes into the block's buffer, zeroed up to `whole`.
  XF_HOST_DEVICE void fill_ahead(std::byte* buffer, const std::byte* src, std::uint64_t bytes,
                                 std::uint64_t whole) {
    std::memcpy(buffer, src, bytes);
    if (bytes < whole) std::memset(buffer + bytes, 0, whole - bytes);
  }
  /// A page out of the block's readahead buffer into `slot`; the slot's load is finished.
  XF_HOST_DEVICE void from_ahead(page_slot* slots, std::uint32_t slot, std::byte* page, const std::byte* src,
                                 std::uint64_t page_bytes) {
    std::memcpy(page, src, page_bytes);
    finish_load(slots[slot], true);
  }
  /// Request slot `bit` of a block whose free mask is `free_requests`: its staging was read.
  XF_HOST_DEVICE void release_request(std::uint32_t& free_requests, std::uint32_t bit) {
    free_requests |= 1u << bit;
  }
};

struct deferred_moves {
  /// A request's pages and its readahead fill must fit at once: 128 pages (a 512 KiB request of 4 KiB
  /// pages, the plan's limit on the device) and one fill. 4 KiB of shared memory.
  static constexpr std::uint32_t capacity = 129;
  struct move {
    std::byte* dst;
    const std::byte* src;
    std::uint32_t bytes;  ///< copied
    std::uint32_t zeros;  ///< zeroed after them
    std::uint32_t slot;   ///< the page slot whose load the move finishes, or no_page_slot (a readahead)
    std::uint32_t batch;  ///< 0: out of staging; 1: out of the readahead buffer
  };

  move moves[capacity];
  std::uint32_t count;
  std::uint32_t fills;     ///< readahead fills queued
  std::uint32_t takes;     ///< copies out of the readahead buffer queued
  std::uint32_t released;  ///< request slots (bits of *free_requests) to give back
  std::uint32_t* free_requests;

  XF_HOST_DEVICE void clear() {
    count = fills = takes = released = 0;
    free_requests = nullptr;
  }
  XF_HOST_DEVICE bool room(std::uint32_t moves_wanted) const { return count + moves_wanted <= capacity; }
  XF_HOST_DEVICE bool may_fill_ahead() const { return fills == 0 && takes == 0; }
  XF_HOST_DEVICE void to_slot(page_slot*, std::uint32_t slot, std::byte* page, const std::byte* src,
                              std::uint64_t bytes, std::uint64_t page_bytes) {
    push(page, src, bytes, page_bytes - bytes, slot, 0);
  }
  XF_HOST_DEVICE void fill_ahead(std::byte* buffer, const std::byte* src, std::uint64_t bytes,
                                 std::uint64_t whole) {
    push(buffer, src, bytes, whole - bytes, no_page_slot, 0);
    ++fills;
  }
  XF_HOST_DEVICE void from_ahead(page_slot*, std::uint32_t slot, std::byte* page, const std::byte* src,
                                 std::uint64_t page_bytes) {
    push(page, src, page_bytes, 0, slot, 1);
    ++takes;
  }
  XF_HOST_DEVICE void release_request(std::uint32_t& free_requests_word, std::uint32_t bit) {
    free_requests = &free_requests_word;
    released |= 1u << bit;
  }
  /// Calls `copy(dst, src, bytes, zeros)` for every move of `batch`, in queue order. On the GPU every
  /// thread of the block calls it with a `copy` that does its share of each move.
  template <class Copy>
  XF_HOST_DEVICE void run(std::uint32_t batch, Copy&& copy) const {
    for (std::uint32_t i = 0; i < count; ++i)
      if (moves[i].batch == batch) copy(moves[i].dst, moves[i].src, moves[i].bytes, moves[i].zeros);
  }
  /// After both batches (on the GPU: after a barrier and, since other threads wrote the pages, a device
  /// fence), by one thread: the loads are finished and the request slots go back to the block.
  XF_HOST_DEVICE void finish(page_slot* slots) {
    for (std::uint32_t i = 0; i < count; ++i)
      if (moves[i].slot != no_page_slot) finish_load(slots[moves[i].slot], true);
    if (free_requests != nullptr) *free_requests |= released;
    clear();
  }

 private:
  XF_HOST_DEVICE void push(std::byte* dst, const std::byte* src, std::uint64_t bytes, std::uint64_t zeros,
                           std::uint32_t slot, std::uint32_t batch) {
    moves[count++] = {dst,  src,  static_cast<std::uint32_t>(bytes), static_cast<std::uint32_t>(zeros),
                      slot, batch};
  }
};

}  // namespace xf
