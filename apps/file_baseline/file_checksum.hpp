// The file benchmarks' check that the bytes on the GPU are the file's: the sum of the file's
// 64-bit little-endian words, a short tail zero-padded — order-free, so a device sums with atomics in any
// order and the host in one pass. For xeflow-file-read's random pattern the host walks the blocks' chains
// (read_chain.hpp) itself, with pread, and sums what they read.
#pragma once

#include <cstdint>
#include <string>

#include "framework/files/file_table.hpp"

namespace xf::file_baseline {

/// The checksum of file `id` of `files` (its first `size` bytes), read `request` bytes at a time (a
/// multiple of 4 KiB). A failed read throws run_error naming `who`, the path and the byte offset.
std::uint64_t file_checksum(const file_table& files, std::uint32_t id, std::uint64_t size,
                            std::uint64_t request, const std::string& who);

/// What the host's walk of the random pattern's chains read: the sum of the words (each read zero-padded to
/// a multiple of 8 bytes, as the device pads it) and the bytes.
struct chain_sum {
  std::uint64_t sum = 0;
  std::uint64_t bytes = 0;
};

/// Walks the chains of blocks [0, blocks) of file `id` (its first `size` bytes, > 0): `reads` reads of
/// `request` bytes each (the first at chain_first_offset with `page_bytes`, each next one at
/// chain_next_offset of the word just read) with pread through `files`, on up to `threads` host threads
/// (each its own blocks). A failed read throws run_error naming `who`, the path and the byte offset.
chain_sum chain_checksum(const file_table& files, std::uint32_t id, std::uint64_t size, std::uint32_t blocks,
                         std::uint32_t reads, std::uint64_t request, std::uint64_t page_bytes,
                         unsigned threads, const std::string& who);

}  // namespace xf::file_baseline
