// The packing kernels' arguments and their launcher (pack_kernels.cu). Internal to the datatype layer:
// gpu_pack.cpp fills a kernel_launch from a type's plan and a call; users call gpu_pack and gpu_unpack.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "framework/datatype/pack_plan.hpp"
#include "framework/datatype/serialized_type.hpp"

namespace xf::dt::detail {

/// Items (copy units or elements) each thread of the runs and element kernels takes per tile, all loaded
/// before the first is stored. Those kernels load the type's records into shared memory once per block,
/// so their grid is at most what the device holds at once and each block walks many tiles.
inline constexpr int items_per_thread = 4;

/// Copy units each thread of the strided and run_list kernels takes per tile. They prepare nothing per
/// block, so their grid covers the whole range (one tile per block). Measured on fig4 at 16-64 MiB against
/// the hand-written kernels (one element per thread): with 4 units a thread and the grid capped, vector,
/// indexed and blockindexed took 1.09-1.17x their time; with 2 and no cap 1.04-1.08x, the 4-D subarray
/// and the nested vector 0.90-1.02x (1 unit: 1.01-1.10x).
inline constexpr int unit_items_per_thread = 2;

/// Threads per block: eight warps, so that a block's tile (threads × its items per thread) is a few KiB and
/// one multiprocessor holds several blocks (the launcher caps it by the device's maximum).
inline constexpr int pack_block_threads = 256;

/// The element kernel stages a tile's packed bytes in shared memory: at most this many per element.
inline constexpr int max_element_bytes = 8;

/// The records of a type up to this size are copied into each block's shared memory; a larger type (a
/// struct of very many member types) is read from global memory instead.
inline constexpr std::uint32_t max_shared_record_bytes = 32 * 1024;

/// Everything a packing kernel reads: passed by value, so trivially copyable.
struct kernel_launch {
  pack_method method = pack_method::strided;
  bool unpack = false;  ///< false: user → packed (from = user); true: packed → user (from = packed)
  const std::byte* from = nullptr;
  std::byte* to = nullptr;  ///< the user side is MPI's buf; the packed side points at item `first`'s bytes
  std::int64_t first = 0, last = 0;  ///< items: copy units (strided, runs) or elements
  /// elements: the packed offsets of items `first` and `last` (the tile that ends the range ends there).
  std::int64_t packed_first = 0, packed_last = 0;

  // runs and elements: the traversal's inputs
  serialized_view type{};  ///< device addresses
  std::int64_t count = 0;  ///< instances
  std::int64_t segment_elements = 0;

  // strided, run_list and runs: segments moved in units of unit_bytes (a power of two that divides every
  // offset); for run_list units_per_segment is the units of one instance
  int unit_bytes = 1;
  std::int64_t units_per_segment = 1;

  // strided: segment s lies at base + its digits' offsets, the innermost dimension last.
  // run_list: counts[0] runs, tables[0] their offsets from buf, tables[1] their packed offsets, tables[2]
  // the run of each bucket's first byte, counts[1] a bucket's bytes (log 2), strides[0] the instances' extent
  std::int64_t base = 0;
  int dims = 0;
  std::int64_t counts[max_strided_dims] = {};
  std::int64_t strides[max_strided_dims] = {};
  const std::int64_t* tables[max_strided_dims] = {};  ///< device addresses; null for an affine dimension

  // launch shape
  unsigned blocks = 1, threads = pack_block_threads;
  bool records_in_shared = false;
  std::uint32_t stage_offset = 0;  ///< elements: the staging area's start in dynamic shared memory
  std::uint32_t shared_bytes = 0;
};
static_assert(std::is_trivially_copyable_v<kernel_launch>);

/// Launches the kernel of a.method (and a.unit_bytes) on `stream`; asynchronous. Throws cuda_error when
/// the launch fails, naming the kernel.
void launch_pack_kernel(const kernel_launch& a, cudaStream_t stream);

}  // namespace xf::dt::detail
