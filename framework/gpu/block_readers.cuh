// The per-block readers of a plain kernel that reads files with block_read (block_read.cuh), set up on the
// host over a file_cache in device memory: each block's fetch item with page entries for the longest read
// it makes. The owner holds the device memory; the kernel takes the view by value. Shared by the programs
// that read files from their own kernels (xeflow-file-read, xeflow-file-kernels).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "framework/core/cuda_buffer.hpp"
#include "framework/core/cuda_check.hpp"
#include "framework/files/file_cache.hpp"
#include "framework/gpu/block_read.cuh"

namespace xf {

/// What a kernel's blocks need to call block_read: the cache, the blocks' fetch state (the cache's), their
/// readers and the pages a block may hold. Trivially copyable: a kernel argument.
struct block_readers_view {
  file_cache_view cache;
  fetch_block* blocks = nullptr;    ///< [blocks], the cache's (file_cache::blocks)
  block_reader* readers = nullptr;  ///< [blocks], device memory
  std::uint32_t room = 0;           ///< file_cache::block_room

  /// block_read for block blockIdx.x: bytes [offset, offset + bytes) of cache file `file` into `dst`,
  /// reading ahead no further than `readahead_end` (block_read's). Every thread of the block calls it
  /// alike; `moves` is the block's (shared memory, cleared once).
  __device__ block_read_status read(deferred_moves& moves, fetch_counters& counters, std::uint32_t file,
                                    std::uint64_t offset, std::uint64_t bytes, std::byte* dst,
                                    std::uint64_t readahead_end = no_readahead_end) const {
    return block_read(cache, blocks[blockIdx.x], readers[blockIdx.x], moves, room, counters, file, offset,
                      bytes, dst, readahead_end);
  }
};

static_assert(std::is_trivially_copyable_v<block_readers_view>, "passed to the kernel by value");

/// Device memory for one reader per block of `cache`, each with entries for a read of up to
/// `max_read_bytes` bytes at any offset (the pages it spans, one more where it straddles). The cache must
/// outlive it, and it must outlive the kernels that use its view.
class block_readers {
 public:
  /// Throws std::invalid_argument when such a read spans more pages than a block may hold (the cache's
  /// size shared among its blocks), cuda_error when the device memory cannot be had.
  block_readers(const file_cache& cache, std::uint64_t max_read_bytes) {
    const std::uint64_t page = cache.view().page_bytes();
    pages_per_read_ = static_cast<std::uint32_t>((max_read_bytes + page - 1) / page) + 1;
    if (pages_per_read_ > cache.block_room())
      throw std::invalid_argument("a read of " + std::to_string(max_read_bytes) + " bytes spans up to " +
                                  std::to_string(pages_per_read_) + " pages, more than a block's " +
                                  std::to_string(cache.block_room()) + " of the cache");
    const std::uint32_t blocks = cache.block_count();
    entries_ = device_buffer<std::uint32_t>(std::size_t{blocks} * pages_per_read_);
    std::vector<block_reader> host(blocks);
    for (std::uint32_t b = 0; b < blocks; ++b) {
      host[b].entries = entries_.get() + std::size_t{b} * pages_per_read_;
      host[b].entry_capacity = pages_per_read_;
    }
    readers_ = device_buffer<block_reader>(blocks);
    XF_CUDA_TRY(
        cudaMemcpy(readers_.get(), host.data(), sizeof(block_reader) * blocks, cudaMemcpyHostToDevice));
    view_.cache = cache.view();
    view_.blocks = cache.blocks();
    view_.readers = readers_.get();
    view_.room = cache.block_room();
  }

  const block_readers_view& view() const { return view_; }
  /// Entries per reader: the most pages one read may span.
  std::uint32_t pages_per_read() const { return pages_per_read_; }

 private:
  std::uint32_t pages_per_read_ = 0;
  device_buffer<std::uint32_t> entries_;
  device_buffer<block_reader> readers_;
  block_readers_view view_;
};

}  // namespace xf
