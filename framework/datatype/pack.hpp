// Packing and unpacking on the host with the point-based traversal (traversal.hpp): each run of elements
// that lies contiguously in both buffers is one memcpy, so a dense type is one copy and a vector one copy a
// block.
#pragma once

#include <cstdint>
#include <optional>

#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/pack_plan.hpp"

namespace xf::dt {

/// Bytes that `count` instances pack into: count × size. Throws precondition_error for a negative count or
/// one whose bytes, elements or extent overflow 64 bits.
std::int64_t packed_bytes(const committed_type& t, std::int64_t count);

/// Copies the data of `count` instances of `t` at `user` (MPI's buf: displacements count from it, and may
/// be negative) into `packed`, in type-map order: packed_bytes(t, count) bytes. The buffers must not
/// overlap.
void pack(const committed_type& t, std::int64_t count, const void* user, void* packed);

/// The reverse of pack(). Where the type map names a byte twice, the later element's bytes stay there, as
/// MPI leaves a receive into such a type undefined; first_overlap() finds that case.
void unpack(const committed_type& t, std::int64_t count, const void* packed, void* user);

/// pack() and unpack() with the type's plan (plan_packing(t), made once and kept by the caller): a strided
/// plan walks its shape's segments with an odometer and copies each at its fixed width, where the
/// traversal would locate every run (8-byte blocks: one lookup per 8 bytes); other plans take the
/// traversal. The same bytes as pack() and unpack().
void pack(const committed_type& t, const pack_plan& plan, std::int64_t count, const void* user, void* packed);
void unpack(const committed_type& t, const pack_plan& plan, std::int64_t count, const void* packed,
            void* user);

/// The lowest displacement that two elements of `count` instances both cover, if any: a receive into such
/// a type is erroneous in MPI. Walks every run once and sorts them: O(runs log runs) time and memory, for a
/// caller to run once per type and count, not per message.
std::optional<std::int64_t> first_overlap(const committed_type& t, std::int64_t count);

}  // namespace xf::dt
