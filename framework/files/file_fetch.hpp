// Making one work item's file ranges resident and pinned, step by step and never waiting: the
// kernel's fetch sub-phase and the host executor's block call `fetch_step` once a round for an item, which
// either has every page pinned (`resolved`: compute may read them), or has asked for what it misses and
// comes back next round (`waiting`), or cannot have them (`failed`).
//
// One step:
//   1. Answers to the item's requests: the staged bytes are copied into their page slots (the bytes past
//      the end of a file zeroed), and the slots become valid, still pinned by the item; a failed answer
//      fails the slots, so every reader of those pages fails too.
//   2. Each page not yet pinned is looked up: a valid slot is pinned (a hit); a slot being loaded by
//      anyone is waited for; a page no slot holds gets a slot from the block's LRA share, its table entry,
//      and a place in a request. Consecutive missing pages of one range share a request up to the staging
//      size; a request is rung as soon as it is complete.
//   3. No request slot free: the rest waits for the next round. No page slot free in the share (all pinned
//      or loading): the item drops the pins it holds on valid pages and starts over next round, so items
//      never hold pages while waiting for pages (no deadlock between items or blocks), and a share of
//      `items × pages per item + 1` always lets some item finish.
//
// Readahead (the GPUfs readahead paper): a request asks, beyond its pages, for as many more as the block's
// readahead_window for that file says (all of them with `on`, none with `off`, while the misses run
// sequentially with `adaptive`). Those extra pages land in the block's private readahead buffer, not in
// the cache — prefetch nobody reads evicts nothing — and a later miss on one of them takes it from the
// buffer into a slot with no request at all.
// An item that failed still drains its requests before it says so: a slot it loads must not stay loading.
//
// The same protocol runs on both processors; `Moves` (page_moves.hpp) moves the bytes: at once on the host,
// queued for the block's threads on the GPU.
#pragma once

#include <bit>
#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "framework/files/file_cache_view.hpp"
#include "framework/files/lra_queue.hpp"
#include "framework/files/page_moves.hpp"
#include "framework/files/page_slot.hpp"
#include "framework/files/page_table.hpp"
#include "framework/files/readahead_window.hpp"
#include "framework/files/request_ring.hpp"
#include "framework/files/request_slot.hpp"

namespace xf {

/// Bytes [offset, offset + bytes) of file `file` (a run-global id); bytes > 0.
struct file_range {
  std::uint32_t file;
  std::uint64_t offset;
  std::uint64_t bytes;
};

/// A block's part of the cache: its LRA share of page slots, its request slots and its readahead. One
/// thread of control uses it at a time (a host block's thread; on the GPU, the block's fetching warp).
struct fetch_block {
  lra_queue lra;
  /// replacement: global — the one hand every block advances over all slots (device memory); null: lra.
  std::uint64_t* global_hand = nullptr;
  std::uint32_t first_request =
      0;  ///< the block's request slots: [first_request, first_request + request_count)
  std::uint32_t request_count = 0;  ///< at most 32
  std::uint32_t free_requests = 0;  ///< bit r: request slot first_request + r is free

  /// Readahead buffer of ahead_capacity pages; null: no readahead. It holds file ahead_file's pages
  /// [ahead_first, ahead_first + ahead_count), the last readahead that arrived.
  std::byte* ahead = nullptr;
  std::uint32_t ahead_capacity = 0;
  std::uint32_t ahead_count = 0;
  std::uint32_t ahead_file = 0;
  std::uint64_t ahead_first = 0;
  /// With `ahead`: the block's reader stream of each file (file_count of them).
  readahead_window* windows = nullptr;

  XF_HOST_DEVICE void reset_requests() {
    free_requests = request_count == 32 ? 0xffffffffu : (1u << request_count) - 1;
  }
};

/// Counted by the fetch, added into the run's statistics.
struct fetch_counters {
  std::uint64_t hits = 0;         ///< pages found valid
  std::uint64_t misses = 0;       ///< pages this item loaded
  std::uint64_t waits = 0;        ///< pages found loading by another reader
  std::uint64_t requests = 0;     ///< requests rung
  std::uint64_t no_page = 0;      ///< steps that found the block's share full and started over
  std::uint64_t ahead_pages = 0;  ///< pages that arrived in readahead buffers
  std::uint64_t ahead_hits = 0;   ///< misses served from the block's readahead buffer

  XF_HOST_DEVICE fetch_counters& operator+=(const fetch_counters& o) {
    hits += o.hits;
    misses += o.misses;
    waits += o.waits;
    requests += o.requests;
    no_page += o.no_page;
    ahead_pages += o.ahead_pages;
    ahead_hits += o.ahead_hits;
    return *this;
  }
};

enum class fetch_status : std::uint32_t { resolved, waiting, failed };

/// One item's fetch state for one stage: lives in per-item memory (device memory on the GPU executor).
struct fetch_item {
  static constexpr std::uint32_t max_ranges = 4;
  static constexpr std::uint32_t max_requests = 8;
  struct pending_request {
    std::uint32_t request;      ///< the request slot
    std::uint32_t first_entry;  ///< the page entries it loads: [first_entry, first_entry + pages)
    std::uint32_t pages;
    std::uint64_t seq;
    std::uint32_t ahead_pages;  ///< asked for beyond `pages`, for the block's readahead buffer
  };

  file_range ranges[max_ranges];
  std::uint32_t range_count = 0;
  std::uint32_t page_count = 0;  ///< entries: the pages of range 0, then of range 1, …
  std::uint32_t resolved = 0;    ///< entries pinned on a valid page
  std::uint32_t* entries =
      nullptr;  ///< page_count slots (no_page_slot: not pinned yet); capacity from the plan
  pending_request pending[max_requests];
  std::uint32_t pending_count = 0;
  bool failed = false;
  /// Readahead in file `ahead_limit_file` stops before page `ahead_end_page` (set after begin: a file
  /// source's blocks read runs of frames, and the pages past a run are another block's); by default it
  /// reaches the file's end.
  std::uint32_t ahead_limit_file = ~std::uint32_t{0};
  std::uint64_t ahead_end_page = 0;

  /// Starts a stage over `count` ranges; `entry_memory` holds at least pages_of(ranges) entries.
  XF_HOST_DEVICE void begin(const file_range* list, std::uint32_t count, std::uint32_t* entry_memory,
                            std::uint32_t page_shift) {
    range_count = count;
    page_count = 0;
    for (std::uint32_t r = 0; r < count; ++r) {
      ranges[r] = list[r];
      page_count += pages_in(list[r], page_shift);
    }
    entries = entry_memory;
    for (std::uint32_t i = 0; i < page_count; ++i) entries[i] = no_page_slot;
    resolved = 0;
    pending_count = 0;
    failed = false;
    ahead_limit_file = ~std::uint32_t{0};
  }

  XF_HOST_DEVICE static std::uint32_t pages_in(const file_range& r, std::uint32_t page_shift) {
    return static_cast<std::uint32_t>(((r.offset + r.bytes - 1) >> page_shift) - (r.offset >> page_shift) +
                                      1);
  }

  /// The file and the page's byte offset in it of entry `i`; `*range` its range.
  XF_HOST_DEVICE void locate(std::uint32_t i, std::uint32_t page_shift, std::uint32_t* file,
                             std::uint64_t* offset, std::uint32_t* range) const {
    std::uint32_t base = 0;
    for (std::uint32_t r = 0; r < range_count; ++r) {
      const std::uint32_t n = pages_in(ranges[r], page_shift);
      if (i < base + n) {
        *file = ranges[r].file;
        *offset = ((ranges[r].offset >> page_shift) + (i - base)) << page_shift;
        *range = r;
        return;
      }
      base += n;
    }
  }

  /// Entry `i` is a page this item is loading (its pin is the loader's).
  XF_HOST_DEVICE bool loading(std::uint32_t i) const {
    for (std::uint32_t p = 0; p < pending_count; ++p) {
      if (i >= pending[p].first_entry && i < pending[p].first_entry + pending[p].pages) return true;
    }
    return false;
  }
};

namespace fetch_detail {

/// A request being gathered in step 2 before it is rung.
struct open_request {
  std::uint32_t request = no_page_slot;
  std::uint32_t first_entry = 0;
  std::uint32_t pages = 0;
  std::uint32_t range = 0;
};

XF_HOST_DEVICE inline std::uint32_t take_request(fetch_block& block) {
  if (block.free_requests == 0) return no_page_slot;
#ifdef __CUDA_ARCH__
  const auto bit = static_cast<std::uint32_t>(__ffs(static_cast<int>(block.free_requests)) - 1);
#else
  const auto bit = static_cast<std::uint32_t>(std::countr_zero(block.free_requests));
#endif
  block.free_requests &= ~(1u << bit);
  return block.first_request + bit;
}

XF_HOST_DEVICE inline void give_back_request(fetch_block& block, std::uint32_t request) {
  block.free_requests |= 1u << (request - block.first_request);
}

/// A request slot whose staging was read (or never written) goes back to the block through the moves: on
/// the GPU only once the queued copies out of its staging have run.
template <class Moves>
XF_HOST_DEVICE void release_request(fetch_block& block, std::uint32_t request, Moves& moves) {
  moves.release_request(block.free_requests, request - block.first_request);
}

/// Rings the open request (or returns its unused request slot) and closes it. The block's readahead window
/// for the file decides how many pages after the request's last one it also asks for.
XF_HOST_DEVICE inline void ring_open(const file_cache_view& v, fetch_block& block, fetch_item& item,
                                     open_request& open, std::uint32_t op, std::uint64_t frame_offset,
                                     fetch_counters& counters) {
  if (open.request == no_page_slot) return;
  if (open.pages == 0) {
    give_back_request(block, open.request);
  } else {
    std::uint32_t file = 0, range = 0;
    std::uint64_t offset = 0;
    item.locate(open.first_entry, v.page_shift, &file, &offset, &range);
    std::uint32_t ahead = 0;
    if (block.ahead != nullptr) {
      readahead_window& window = block.windows[file];
      const std::uint64_t first_page = offset >> v.page_shift;
      ahead = window.on_miss(first_page);
      if (open.pages > 1) window.on_hit(first_page + open.pages - 1, false);  // the stream reads on to here
      // Clipped to the buffer, to the staging and to the file.
      std::uint64_t end_page = (v.file_size[file] + v.page_bytes() - 1) >> v.page_shift;
      if (file == item.ahead_limit_file && item.ahead_end_page < end_page) end_page = item.ahead_end_page;
      const std::uint64_t next_page = first_page + open.pages;
      const std::uint64_t after = end_page > next_page ? end_page - next_page : 0;
      const std::uint64_t room = (v.staging_bytes >> v.page_shift) - open.pages;
      if (ahead > block.ahead_capacity) ahead = block.ahead_capacity;
      if (ahead > room) ahead = static_cast<std::uint32_t>(room);
      if (ahead > after) ahead = static_cast<std::uint32_t>(after);
    }
    const std::uint64_t wanted = static_cast<std::uint64_t>(open.pages + ahead) << v.page_shift;
    const std::uint64_t left = v.file_size[file] - offset;
    const std::uint64_t seq = write_request(v.requests[open.request], file, offset,
                                            wanted < left ? wanted : left, op, frame_offset);
    // The ring has a cell for every request slot, so this push finds one (a retry covers a consumer
    // between its take and its release of the cell).
    while (!try_push_request(v.ring, open.request)) {
    }
    item.pending[item.pending_count++] = {open.request, open.first_entry, open.pages, seq, ahead};
    counters.requests += 1;
  }
  open = open_request{};
}

/// Whether the block's readahead buffer holds page `page` of `file`.
XF_HOST_DEVICE inline bool in_readahead(const fetch_block& block, std::uint32_t file, std::uint64_t page) {
  return block.ahead != nullptr && block.ahead_count > 0 && file == block.ahead_file &&
         page >= block.ahead_first && page < block.ahead_first + block.ahead_count;
}

enum class claim_status : std::uint32_t { claimed, no_slot, lost, broken };

/// Claims a slot of the block's share for page `key` and installs it in the table `entry`: `claimed` (the
/// slot is loading, pinned by the caller), `no_slot` (the share is all pinned or loading), `lost` (another
/// reader installed the page first: look it up again) or `broken` (the protocol failed: the slot's old
/// page was not where the table said).
XF_HOST_DEVICE inline claim_status claim_page(const file_cache_view& v, fetch_block& block, std::uint64_t key,
                                              std::uint32_t& entry, std::uint32_t* slot_out) {
  std::uint64_t old_key = 0;
  const std::uint32_t slot = block.global_hand != nullptr
                                 ? allocate_global(v.slots, v.slot_count, *block.global_hand, key, &old_key)
                                 : block.lra.allocate(v.slots, key, &old_key);
  if (slot == no_page_slot) return claim_status::no_slot;
  if (old_key != 0 && !page_table_remove(v.table[old_key - 1], slot)) {
    abandon_claim(v.slots[slot]);
    return claim_status::broken;
  }
  if (page_table_install(entry, slot) != slot) {
    abandon_claim(v.slots[slot]);
    return claim_status::lost;
  }
  *slot_out = slot;
  return claim_status::claimed;
}

/// Drops the item's pins on valid pages (not the ones it loads): it starts over next round.
XF_HOST_DEVICE inline void drop_valid_pins(const file_cache_view& v, fetch_item& item) {
  for (std::uint32_t i = 0; i < item.page_count; ++i) {
    if (item.entries[i] != no_page_slot && !item.loading(i)) {
      unpin_page(v.slots[item.entries[i]]);
      item.entries[i] = no_page_slot;
    }
  }
  item.resolved = 0;
}

}  // namespace fetch_detail

/// One step of the item's fetch (see the top of this file). `op` and `frame_offset` name the reader in
/// its requests (a failed read's run error names them). `moves` moves the pages' bytes (page_moves.hpp).
template <class Moves>
XF_HOST_DEVICE fetch_status fetch_step(const file_cache_view& v, fetch_block& block, fetch_item& item,
                                       std::uint32_t op, std::uint64_t frame_offset, fetch_counters& counters,
                                       Moves& moves) {
  using namespace fetch_detail;
  const std::uint64_t page_bytes = v.page_bytes();
  // 1. Answers.
  for (std::uint32_t p = 0; p < item.pending_count;) {
    const fetch_item::pending_request req = item.pending[p];
    request_outcome out{};
    if (!request_done(v.requests[req.request], req.seq, &out)) {
      ++p;
      continue;
    }
    const bool ok = out.status == file_status::ok;
    const std::uint64_t own = static_cast<std::uint64_t>(req.pages) << v.page_shift;
    const bool fills = ok && req.ahead_pages > 0 && out.bytes > own;
    if (ok && (!moves.room(req.pages + (fills ? 1 : 0)) || (fills && !moves.may_fill_ahead()))) {
      ++p;  // the moves are full this round: the answer keeps until the next
      continue;
    }
    const std::byte* staged = v.staging + req.request * v.staging_bytes;
    for (std::uint32_t k = 0; k < req.pages; ++k) {
      const std::uint32_t slot = item.entries[req.first_entry + k];
      if (ok) {
        const std::uint64_t first = static_cast<std::uint64_t>(k) << v.page_shift;
        const std::uint64_t have = out.bytes > first ? out.bytes - first : 0;
        moves.to_slot(v.slots, slot, v.page_of(slot), staged + first, have < page_bytes ? have : page_bytes,
                      page_bytes);
      } else {
        finish_load(v.slots[slot], false);
      }
    }
    if (fills) {
      // The readahead: into the block's buffer, replacing the one before.
      const std::uint64_t extra = out.bytes - own;
      const auto pages = static_cast<std::uint32_t>((extra + page_bytes - 1) >> v.page_shift);
      moves.fill_ahead(block.ahead, staged + own, extra, static_cast<std::uint64_t>(pages) << v.page_shift);
      std::uint32_t file = 0, range = 0;
      std::uint64_t offset = 0;
      item.locate(req.first_entry, v.page_shift, &file, &offset, &range);
      block.ahead_file = file;
      block.ahead_first = (offset >> v.page_shift) + req.pages;
      block.ahead_count = pages;
      block.windows[file].fetched(pages);
      counters.ahead_pages += pages;
    }
    release_request(block, req.request, moves);
    if (ok) {
      item.resolved += req.pages;
    } else {
      item.failed = true;
    }
    item.pending[p] = item.pending[--item.pending_count];
  }
  if (item.failed) return item.pending_count == 0 ? fetch_status::failed : fetch_status::waiting;

  // 2. Lookups, pins and loads.
  open_request open;
  bool stop = false;
  for (std::uint32_t i = 0; i < item.page_count && !stop; ++i) {
    if (item.entries[i] != no_page_slot) continue;
    std::uint32_t file = 0, range = 0;
    std::uint64_t offset = 0;
    item.locate(i, v.page_shift, &file, &offset, &range);
    const std::uint64_t key = v.key_of(file, offset);
    std::uint32_t& entry = v.table[key - 1];
    // A few rounds of lookup: a slot can change page between the lookup and the pin.
    for (int attempt = 0; attempt < 4; ++attempt) {
      const std::uint32_t held = page_table_lookup(entry);
      if (held != no_page_slot) {
        const pin_status pin = pin_page(v.slots[held], key);
        if (pin == pin_status::pinned) {
          item.entries[i] = held;
          item.resolved += 1;
          counters.hits += 1;
          if (block.ahead != nullptr) block.windows[file].on_hit(offset >> v.page_shift, false);
        } else if (pin == pin_status::loading) {
          counters.waits += 1;
        } else if (pin == pin_status::failed) {
          item.failed = true;
          stop = true;
        } else {
          continue;  // stale: the slot moved on; look again
        }
        break;
      }
      // A miss. A page in the block's readahead buffer needs no request; any other joins the open
      // request if it follows its last page, or starts one.
      const std::uint64_t page = offset >> v.page_shift;
      const bool from_ahead = in_readahead(block, file, page);
      if (from_ahead && !moves.room(1)) {
        stop = true;  // the moves are full this round
        break;
      }
      if (!from_ahead) {
        if (open.request != no_page_slot &&
            (open.range != range || open.first_entry + open.pages != i ||
             (static_cast<std::uint64_t>(open.pages + 1) << v.page_shift) > v.staging_bytes)) {
          ring_open(v, block, item, open, op, frame_offset, counters);
        }
        if (open.request == no_page_slot) {
          if (item.pending_count == fetch_item::max_requests) {
            stop = true;
            break;
          }
          open.request = take_request(block);
          if (open.request == no_page_slot) {
            stop = true;  // every request slot of the block is out: next round
            break;
          }
          open.first_entry = i;
          open.pages = 0;
          open.range = range;
        }
      }
      std::uint32_t slot = no_page_slot;
      const claim_status claim = claim_page(v, block, key, entry, &slot);
      if (claim == claim_status::no_slot) {
        counters.no_page += 1;
        ring_open(v, block, item, open, op, frame_offset, counters);
        drop_valid_pins(v, item);
        return fetch_status::waiting;
      }
      if (claim == claim_status::broken) {
        item.failed = true;
        stop = true;
        break;
      }
      if (claim == claim_status::lost) continue;  // another reader installed the page first: pin theirs
      item.entries[i] = slot;
      if (from_ahead) {
        // Valid once moved, and still pinned by this item.
        moves.from_ahead(v.slots, slot, v.page_of(slot),
                         block.ahead + ((page - block.ahead_first) << v.page_shift), page_bytes);
        item.resolved += 1;
        counters.ahead_hits += 1;
        block.windows[file].on_hit(page, true);
      } else {
        open.pages += 1;
        counters.misses += 1;
      }
      break;
    }
  }
  ring_open(v, block, item, open, op, frame_offset, counters);
  if (item.failed) return item.pending_count == 0 ? fetch_status::failed : fetch_status::waiting;
  return item.resolved == item.page_count ? fetch_status::resolved : fetch_status::waiting;
}

/// After the stage's compute (or a failure with nothing pending): unpins every page the item holds.
XF_HOST_DEVICE inline void fetch_release(const file_cache_view& v, fetch_item& item) {
  for (std::uint32_t i = 0; i < item.page_count; ++i) {
    if (item.entries[i] != no_page_slot) unpin_page(v.slots[item.entries[i]]);
    item.entries[i] = no_page_slot;
  }
  item.resolved = 0;
}

/// Where compute reads: byte `offset` of `file`, inside one of the item's resolved ranges. nullptr
/// outside them (the operator asked for bytes it did not declare).
XF_HOST_DEVICE inline const std::byte* fetched_byte(const file_cache_view& v, const fetch_item& item,
                                                    std::uint32_t file, std::uint64_t offset) {
  std::uint32_t base = 0;
  for (std::uint32_t r = 0; r < item.range_count; ++r) {
    const file_range& range = item.ranges[r];
    if (range.file == file && offset >= range.offset && offset < range.offset + range.bytes) {
      const std::uint32_t i =
          base + static_cast<std::uint32_t>((offset >> v.page_shift) - (range.offset >> v.page_shift));
      return v.page_of(item.entries[i]) + (offset & (v.page_bytes() - 1));
    }
    base += fetch_item::pages_in(range, v.page_shift);
  }
  return nullptr;
}

}  // namespace xf
