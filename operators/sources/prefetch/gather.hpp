// The prefetch source's data assembly (the BigKernel paper's stage 2 and §IV-B): CPU threads read the
// bytes a chunk's address streams name from the host dataset and lay them out in a pinned prefetch buffer
// in the order the consumer warps read them — item k of GPU thread t at (k · threads + t) · item_bytes, so
// a warp's 32 threads read 32 adjacent items (coalesced). Each GPU thread's items are gathered in turn
// (its addresses tend to be consecutive: the CPU's caches and prefetchers see one stream at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "operators/sources/prefetch/address_stream.hpp"
#include "operators/sources/prefetch/record_layout.hpp"

namespace xf::prefetch {

/// One chunk: `threads` GPU threads' encoded address streams, and where their items go.
struct gather_chunk {
  std::span<const address_words> streams;  ///< [threads]
  std::uint32_t item_bytes = 4;            ///< bytes each address names (1, 2, 4, 8 or 16)
  std::uint32_t max_items = 0;             ///< items per thread the prefetch buffer holds
  std::span<std::byte> prefetch;           ///< ≥ max_items · threads · item_bytes
  std::span<std::uint32_t> items;          ///< [threads]: items gathered per thread (written)
};

/// A thread's addresses that cannot be gathered: past the dataset's end, more items than the buffer
/// holds, or malformed words. `thread` and `item` name the first bad one.
struct gather_fault {
  std::uint32_t thread = 0;
  std::uint64_t item = 0;
  std::string reason;
};

/// Gathers GPU threads [first_thread, end_thread) of `chunk` from `dataset` (CPU assembler threads
/// each take a range). Returns the bytes gathered, or throws gather_fault.
std::uint64_t gather(std::span<const std::byte> dataset, const gather_chunk& chunk,
                     std::uint32_t first_thread, std::uint32_t end_thread);

/// Gathers the fields `layout` reads of records [first, first + count) of a dataset of fixed-length records
/// into `out` field item by field item (structure of arrays): item i of record r (i over the layout's items,
/// fields in order) at (i · count + r) · item_bytes. Whatever number of GPU threads consumes the frame, a
/// thread per record reads each item coalesced with its warp's neighbours, which the per-thread layout above
/// cannot promise once the consumer's warps change between rounds (partition auto). The records are read
/// front to back, one after the other (one stream for the CPU's prefetchers). Preconditions (checked by
/// the caller): layout_problem(layout) is empty, the records lie inside `dataset`, and `out` holds
/// count · layout.bytes_read_per_record() bytes.
void gather_records(std::span<const std::byte> dataset, const record_layout& layout, std::uint64_t first,
                    std::uint64_t count, std::span<std::byte> out);

/// gather_records for records of any length: record r starts at byte starts[r] of `dataset`, and the
/// layout's record_bytes is the least every record has (its fields lie within it). Preconditions as
/// gather_records', with each record's first record_bytes inside `dataset`.
void gather_records_at(std::span<const std::byte> dataset, const record_layout& layout,
                       std::span<const std::uint64_t> starts, std::span<std::byte> out);

/// The inverse of gather_records: stores item i of record r from `in` at (i · count + r) · item_bytes into
/// the fields `layout` names of records [first, first + count) of `dataset`. Same preconditions, with `in`
/// holding at least count · layout.bytes_read_per_record() bytes.
void scatter_records(std::span<std::byte> dataset, const record_layout& layout, std::uint64_t first,
                     std::uint64_t count, std::span<const std::byte> in);

}  // namespace xf::prefetch
