// The generators' common loop: a dataset is a sequence of blocks whose content depends only on the seed and
// the block's index; threads fill blocks in rounds while the calling thread writes the previous round, so
// the file is the same for any thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "apps/dataset_support/dataset_file.hpp"

namespace xf::apps {

/// One block of a dataset as a filler produces it. Both vectors arrive empty (capacity kept between uses).
struct generated_block {
  std::vector<std::byte> data;
  /// Offsets, within `data`, of the records that start in this block; only generators that write an index
  /// file fill it.
  std::vector<std::uint64_t> record_offsets;
};

/// Fills block `block` (0-based). Called concurrently for distinct blocks; must depend only on `block` and
/// state shared read-only.
using block_filler = std::function<void(std::uint64_t block, generated_block& out)>;

struct generated_totals {
  std::uint64_t data_bytes = 0;
  std::uint64_t records = 0;  ///< index entries written (0 without an index)
};

/// Generates blocks 0 .. block_count-1 with `threads` filler threads and appends them in order to `data`.
/// With `index`, also appends every record's offset in the data file as a u64 (little-endian). Errors of
/// fillers and writers propagate (the first by block order for fillers); the writers are not closed here.
generated_totals write_generated_blocks(std::uint64_t block_count, unsigned threads, const block_filler& fill,
                                        dataset_writer& data, dataset_writer* index = nullptr);

}  // namespace xf::apps
