// The K-means dataset (BigKernel §V "K-means"): a file of fixed 64-byte particle records, read in place
// through a memory map by the CPU reference and streamed to the GPU by the prefetch source.
//
// File layout (little-endian, no header): record i is bytes [64 i, 64 i + 64); the file size is a multiple
// of 64 (anything else is a truncated last record). Each record is a `particle`:
//
//   offset  size  field     written by the generator        touched by the reference
//        0     4  x         float32, centre + N(0, spread)   read every iteration
//        4     4  y         float32                          read every iteration
//        8     4  z         float32                          read every iteration
//       12     4  cluster   u32, 0xffffffff (unassigned)     written every iteration: the nearest centre
//       16    48  payload   pseudo-random bytes              never
//
// So each pass reads 12 and writes 4 of every 64 bytes: the sparse access (16 of 64 bytes touched) that
// the prefetch source exists to exploit. After a reference run, `cluster` holds each particle's nearest
// centre in the last iteration's assignment step.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace xf::apps::kmeans {

struct particle {
  float x, y, z;
  std::uint32_t cluster;
  std::byte payload[48];
};

inline constexpr std::uint64_t particle_bytes = 64;
inline constexpr std::uint32_t unassigned_cluster = 0xffffffffu;

static_assert(sizeof(particle) == particle_bytes);
static_assert(offsetof(particle, x) == 0 && offsetof(particle, y) == 4 && offsetof(particle, z) == 8);
static_assert(offsetof(particle, cluster) == 12 && offsetof(particle, payload) == 16);
static_assert(std::is_trivially_copyable_v<particle> && std::is_standard_layout_v<particle>);
static_assert(std::endian::native == std::endian::little,
              "records are read in place: little-endian hosts only");

}  // namespace xf::apps::kmeans
