// The shape limits of one block of the virtualised kernel: the plan sizes every partition within them and
// the kernel's shared memory is laid out for them.
#pragma once

#include <cstdint>

namespace xf {

/// A block's warps are at most 32, and every kernel operator has at least one warp in each block.
inline constexpr std::uint32_t max_kernel_operators = 32;
/// Work items a block holds at once over all its operators: one per lane of its leader warp.
inline constexpr std::uint32_t max_block_items = 32;
/// Shared objects one GPU operator takes: each lane keeps a pointer to its item's version of each.
inline constexpr std::uint32_t max_operator_objects = 4;

}  // namespace xf
