// xeflow-file-read's data-dependent random reads (`--pattern random`, the GPUfs paper's Mosaic case): where
// a block's chain of reads starts and where the bytes a read returned send it next. One definition for the
// kernel and for the host's check of it, so the check walks the very chain the blocks walked.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"

namespace xf::file_baseline {

/// splitmix64's finaliser: a bijection on 64-bit words in which every output bit depends on every input
/// bit, so neighbouring blocks, steps and words land far apart.
XF_HOST_DEVICE constexpr std::uint64_t chain_mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Where block `block`'s chain starts: a whole page of the file picked by the block's index (0 where the
/// file is shorter than a page). `page_bytes` > 0.
XF_HOST_DEVICE constexpr std::uint64_t chain_first_offset(std::uint32_t block, std::uint64_t file_bytes,
                                                          std::uint64_t page_bytes) {
  const std::uint64_t pages = file_bytes / page_bytes;
  return pages == 0 ? 0 : chain_mix(0x6a09e667f3bcc909ull + block) % pages * page_bytes;
}

/// Where the read after read number `step` of block `block` goes, `word` being the first 64-bit word (little
/// endian, zero-padded past the file's end) that read returned: a multiple of `request` that has a whole
/// request of the file after it (0 where the file is shorter than a request). `request` > 0.
///
/// The word makes the order data-dependent — no prefetcher can know the next offset before the read has
/// returned. The step is mixed in too: with only (word, block) a chain is a walk on a fixed function of its
/// offset, which cycles after about √(file / request) reads (a file whose aligned words repeat cycles at
/// once), and a revisited request would be a cache hit the benchmark never meant to measure.
XF_HOST_DEVICE constexpr std::uint64_t chain_next_offset(std::uint64_t word, std::uint32_t block,
                                                         std::uint32_t step, std::uint64_t file_bytes,
                                                         std::uint64_t request) {
  const std::uint64_t requests = file_bytes / request;
  if (requests == 0) return 0;
  const std::uint64_t key = chain_mix(word ^ chain_mix((std::uint64_t{block} << 32) | step));
  return key % requests * request;
}

/// The bytes of the read at `offset` (< file_bytes): a request, or what the file has left after `offset`.
XF_HOST_DEVICE constexpr std::uint64_t chain_read_bytes(std::uint64_t offset, std::uint64_t file_bytes,
                                                        std::uint64_t request) {
  return file_bytes - offset < request ? file_bytes - offset : request;
}

}  // namespace xf::file_baseline
