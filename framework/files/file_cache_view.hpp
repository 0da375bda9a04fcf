// The file cache as the fetch code sees it: where the page slots, their bytes, the page table,
// the files' geometry, the request slots and the ring live. Trivially copyable, so the kernel takes it by
// value; the owner (device memory on the GPU executor, host memory in host mode) fills it at start.
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/files/page_slot.hpp"
#include "framework/files/request_ring.hpp"
#include "framework/files/request_slot.hpp"

namespace xf {

struct file_cache_view {
  page_slot* slots = nullptr;  ///< slot_count slots
  std::byte* pages = nullptr;  ///< slot_count × page_bytes: slot s's page at s << page_shift
  std::uint32_t slot_count = 0;
  std::uint32_t page_shift = 12;   ///< page_bytes = 1 << page_shift
  std::uint32_t* table = nullptr;  ///< one entry per page of every file (page_table.hpp), by key - 1
  const std::uint64_t* file_first_page = nullptr;  ///< file_count + 1 prefix sums of pages per file
  const std::uint64_t* file_size = nullptr;        ///< bytes of each file at open
  std::uint32_t file_count = 0;
  request_slot* requests = nullptr;  ///< every block's request slots
  std::byte* staging = nullptr;      ///< request slot r's bytes at r × staging_bytes
  std::uint64_t staging_bytes = 0;   ///< per request slot: the longest request
  request_ring_view ring{};          ///< capacity ≥ the request slots, so a push always finds a cell

  XF_HOST_DEVICE std::uint64_t page_bytes() const { return std::uint64_t{1} << page_shift; }
  /// The page key (page_slot.hpp) of byte `offset` of `file`: its index among all files' pages + 1.
  XF_HOST_DEVICE std::uint64_t key_of(std::uint32_t file, std::uint64_t offset) const {
    return file_first_page[file] + (offset >> page_shift) + 1;
  }
  XF_HOST_DEVICE std::byte* page_of(std::uint32_t slot) const {
    return pages + (static_cast<std::uint64_t>(slot) << page_shift);
  }
};

static_assert(std::is_trivially_copyable_v<file_cache_view>, "passed to the kernel by value");

}  // namespace xf
