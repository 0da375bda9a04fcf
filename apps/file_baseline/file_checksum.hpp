// The file benchmarks' check that the bytes on the GPU are the file's (issue 6): the sum of the file's
// 64-bit little-endian words, a short tail zero-padded — order-free, so a device sums with atomics in any
// order and the host in one pass.
#pragma once

#include <cstdint>
#include <string>

#include "framework/files/file_table.hpp"

namespace xf::file_baseline {

/// The checksum of file `id` of `files` (its first `size` bytes), read `request` bytes at a time (a
/// multiple of 4 KiB). A failed read throws run_error naming `who`, the path and the byte offset.
std::uint64_t file_checksum(const file_table& files, std::uint32_t id, std::uint64_t size, std::uint64_t request,
                            const std::string& who);

}  // namespace xf::file_baseline
