// GPUfs's read at block granularity, for a user's own kernel: every thread of a block calls
// block_read with the same arguments, and it returns once the bytes are in `dst`. Outside the virtualised
// kernel a block may wait — inside it, readers declare their ranges by stages instead (advance_readers,
// framework/kernel/round_steps.hpp) — so this is the API of a plain kernel over a file_cache in device
// memory, and the driver of the GPUfs readahead paper's microbenchmark (apps/file_read_bench). The same fetch
// protocol: thread 0 steps the fetch, the block's threads run its page moves, and between looks the block
// sleeps.
#pragma once

#include <cstdint>

#include "framework/files/file_api.hpp"
#include "framework/files/file_cache_view.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/files/page_moves.hpp"
#include "framework/gpu/block_moves.cuh"

namespace xf {

/// A block's read state, in device memory (one per block): its fetch item and the page entries a read
/// may span.
struct block_reader {
  fetch_item item;
  std::uint32_t* entries;  ///< entry_capacity entries (device memory)
  std::uint32_t entry_capacity;
};

enum class block_read_status : std::uint32_t {
  ok,
  failed,     ///< a page could not be read (the file cache's I/O service says why: path and byte offset)
  too_large,  ///< the range spans more pages than the reader's entries or the block's share hold
};

/// Where a block's stream of reads ends by default: readahead may run on to the file's end.
inline constexpr std::uint64_t no_readahead_end = ~std::uint64_t{0};

/// Reads bytes [offset, offset + bytes) of `file` (a cache file id; bytes > 0, within the file) into
/// `dst`. `moves` is the block's (shared memory, cleared once before the first read); `room` the pages the
/// block may hold at once (file_cache::block_room). Every thread of the block calls it alike.
/// `readahead_end`: the byte offset where the block's stream of reads in this file ends (its stride, its
/// band of rows). Readahead stops at its page (the page that holds its last byte is still read) instead of
/// fetching the next block's bytes, which that block reads for itself; the read itself is not limited.
__device__ inline block_read_status block_read(const file_cache_view& v, fetch_block& block, block_reader& r,
                                               deferred_moves& moves, std::uint32_t room,
                                               fetch_counters& counters, std::uint32_t file,
                                               std::uint64_t offset, std::uint64_t bytes, std::byte* dst,
                                               std::uint64_t readahead_end = no_readahead_end) {
  __shared__ std::uint32_t status;  // thread 0's fetch_status (or too_large), read by all after a barrier
  constexpr std::uint32_t too_large = 0xffffffffu;
  if (threadIdx.x == 0) {
    const file_range range{file, offset, bytes};
    const std::uint32_t pages = fetch_item::pages_in(range, v.page_shift);
    if (pages > r.entry_capacity || pages > room) {
      status = too_large;
    } else {
      r.item.begin(&range, 1, r.entries, v.page_shift);
      if (readahead_end != no_readahead_end) {
        r.item.ahead_limit_file = file;
        r.item.ahead_end_page = (readahead_end + v.page_bytes() - 1) >> v.page_shift;
      }
      status = static_cast<std::uint32_t>(fetch_status::waiting);
    }
  }
  __syncthreads();
  if (status == too_large) {
    __syncthreads();  // everyone has read it before a later call's thread 0 writes it again
    return block_read_status::too_large;
  }
  std::uint32_t sleep_ns = 64;
  while (true) {
    if (threadIdx.x == 0)
      status = static_cast<std::uint32_t>(fetch_step(v, block, r.item, 0, offset, counters, moves));
    __syncthreads();
    const auto seen = static_cast<fetch_status>(status);
    if (moves.count != 0) run_moves(moves, v.slots);  // its barriers: every thread sees the same count
    if (seen == fetch_status::failed) {
      __syncthreads();
      if (threadIdx.x == 0) fetch_release(v, r.item);
      __syncthreads();
      return block_read_status::failed;
    }
    if (seen == fetch_status::resolved) break;
    if (threadIdx.x == 0) {
      __nanosleep(sleep_ns);
      sleep_ns = sleep_ns < 4096 ? sleep_ns * 2 : sleep_ns;
    }
    __syncthreads();  // everyone has read `status` before thread 0's next step writes it
  }
  const file_pages pages = file_pages::paged(&v, &r.item);
  pages.copy(dst, file_id{file}, offset, bytes, threadIdx.x, blockDim.x);
  __syncthreads();  // every thread's last read of the pages before they are unpinned
  if (threadIdx.x == 0) fetch_release(v, r.item);
  __syncthreads();
  return block_read_status::ok;
}

}  // namespace xf
