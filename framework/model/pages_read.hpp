// What a columnar topic's page readers read of each frame, chosen on the host: by the copy engines'
// bridge (only these parts cross PCIe) and by a table source (only these parts are read from the file).
//
// Choosing reads a frame's index pages and judges every row range of it for every reader: three threads
// choosing 6-11 queries' pages keep the bridge of a Set Query family waiting 55-89 % of a dma stream
// where the index rules nothing out and every page crosses anyway (H200, 10 M rows). So a reader whose
// index has left (almost) nothing of its columns behind for `rest_after` frames in a row may rest: its
// columns are taken whole (pages_bound, no index read) but for one frame in probe_every, where its index
// is read again and wakes it if it now leaves enough behind. Taking more than a reader reads never changes
// an answer: the reader judges the index pages itself, and they always cross. Measured there, resting
// cut the bridge's wait to 1-3 % of the stream but not the pass (the kernel sets it; Q4B dma 8.7 ms
// reading every index, 10.3 ms resting, medians of 3), so runtime.index_rest is off unless asked for.
#pragma once

#include <cstdint>
#include <vector>

#include "framework/core/frame.hpp"
#include "framework/model/host_kernel_op.hpp"

namespace xf {

/// A resting reader's index is read again for one frame in this many.
inline constexpr std::uint32_t index_probe_every = 32;
/// The index helps a frame when it leaves at least this share (1/n) of the reader's bound behind: less
/// saves the link less than reading the index costs the host.
inline constexpr std::uint64_t index_helps_share = 16;

/// The parts of a frame that page readers read together: the union of their pages_read (or, for a
/// resting reader, its pages_bound), joined. Every reader must be one (reads_pages) and outlive the
/// selector, which is safe to call from several threads at once; `rest_after` 0 never rests. Empty for
/// no readers.
frame_selector pages_read_by(std::vector<const host_kernel_op*> readers, std::uint32_t rest_after);

}  // namespace xf
