// The benchmark's own kernels (hand_kernels.cu): hand-written packing kernels, one per benchmarked type
// with its layout hard-coded, as a programmer writes one for a single shape (the paper's "hand-coded"
// contender); the traversal alone (its component time); a memory-bound vector add (the user's kernel that
// contends with packing); and the pattern the user buffers are filled with. Every launcher is asynchronous
// on `stream` and throws cuda_error when the launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "framework/datatype/serialized_type.hpp"

namespace xf::dt::bench {

/// Byte i of the buffer becomes a hash of (seed, i): data no two places of a buffer share by accident.
void launch_fill_pattern(std::byte* buffer, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);

/// vector / hvector of doubles: `elements` packed, `blocklength` per block, blocks `stride` doubles apart.
void launch_hand_vector(const double* in, double* out, std::int64_t elements, std::int64_t blocklength,
                        std::int64_t stride, cudaStream_t stream);
/// Doubles in order (contiguous): one per thread.
void launch_hand_contiguous(const double* in, double* out, std::int64_t elements, cudaStream_t stream);
/// indexed / indexed_block with one block length: block b at displacements[b] doubles (device memory).
void launch_hand_indexed(const double* in, double* out, std::int64_t elements, std::int64_t blocklength,
                         const std::int64_t* displacements, cudaStream_t stream);
/// indexed with blocks of different lengths: each element finds its block by binary search over
/// `prefix` (blocks + 1 entries: doubles before block b), block b at displacements[b] doubles.
void launch_hand_indexed_varied(const double* in, double* out, std::int64_t elements,
                                const std::int64_t* prefix, const std::int64_t* displacements,
                                std::int64_t blocks, cudaStream_t stream);
/// `count` C structs {double; int; int; char} (24 bytes apart) packed to 17 bytes each.
void launch_hand_struct(const std::byte* in, std::byte* out, std::int64_t count, cudaStream_t stream);
/// `count` structs {double at 0; int at 16; char at 24} (32 bytes apart) packed to 13 bytes each.
void launch_hand_gapped_struct(const std::byte* in, std::byte* out, std::int64_t count, cudaStream_t stream);
/// The n^4 cube at (start, start, start, start) of a size^4 array of doubles, C order.
void launch_hand_subarray4d(const double* in, double* out, int n, int size, int start, cudaStream_t stream);
/// `outer` copies, 256 bytes apart, of 3 blocks of 2 doubles 3 doubles apart (a vector of vectors).
void launch_hand_nested(const double* in, double* out, std::int64_t outer, cudaStream_t stream);

/// The point-based traversal alone: locate() of each of count × elements elements over the records in
/// shared memory, adding up (in + out) into *sum (set to 0 first), which the host checks.
void launch_traverse(const serialized_view& device_type, std::int64_t count, std::int64_t elements,
                     unsigned long long* sum, cudaStream_t stream);

/// c = a + b over n floats in `blocks` blocks of 256 threads, grid-stride: a user's memory-bound kernel.
void launch_vector_add(const float* a, const float* b, float* c, std::int64_t n, int blocks,
                       cudaStream_t stream);

}  // namespace xf::dt::bench
