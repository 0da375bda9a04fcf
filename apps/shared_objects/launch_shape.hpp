// Grid sizes for the benchmark's kernels, from the device's multiprocessor count: enough resident blocks to
// fill it, fewer where the work is smaller.
#pragma once

#include <cstddef>

namespace xf::shared_bench {

/// Blocks of `threads` for `items` work items, one each (grid-stride loops take the rest): at most
/// `blocks_per_sm` blocks on every multiprocessor of the current device, at least one.
unsigned grid_for(std::size_t items, unsigned threads, unsigned blocks_per_sm);

}  // namespace xf::shared_bench
