// The update step of Lloyd's algorithm, one piece of code for the CPU reference (kmeans.cpp) and
// xeflow-kmeans: per-block sums of each centre's particles, added in block order into the new centres.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "apps/dataset_support/parallel.hpp"
#include "apps/kmeans/kmeans.hpp"

namespace xf::apps::kmeans {

/// Lloyd's initial centres: the first `clusters` particles (0 particles assigned each). Precondition:
/// particles.size() >= clusters.
std::vector<centre> initial_centres(std::span<const particle> particles, std::uint32_t clusters);

/// Sum of the particles one block assigned to one centre.
struct partial_sum {
  double x = 0, y = 0, z = 0;
  std::uint64_t n = 0;
};

/// The sums of Lloyd's update step, kept per reduction block of `block_particles` particles (the last block
/// may be short), and the move of the centres to their means. Whoever assigns the particles fills a block's
/// sums (start_block, then add() for each of its particles in particle order) — the reference while it
/// assigns, xeflow-kmeans from the ids written back — and move_centres adds the blocks in block order, so
/// the centres are bit-identical whichever threads filled which blocks. Different blocks may be filled
/// concurrently; move_centres must not overlap with that.
class centre_update {
 public:
  /// std::invalid_argument when particles, clusters or block_particles is 0.
  centre_update(std::uint64_t particles, std::uint32_t clusters, std::uint64_t block_particles);

  std::uint64_t blocks() const noexcept { return blocks_; }
  /// The particles of block `b`.
  index_range block(std::uint64_t b) const noexcept {
    const std::uint64_t first = b * block_particles_;
    return {first, first + block_particles_ < particles_ ? first + block_particles_ : particles_};
  }

  /// Block `b`'s sums, one per centre, zeroed.
  std::span<partial_sum> start_block(std::uint64_t b);

  /// Adds a particle assigned to centre `c` (< clusters) to its block's `sums` (summed in double).
  static void add(std::span<partial_sum> sums, std::uint32_t c, float x, float y, float z) noexcept {
    partial_sum& s = sums[c];
    s.x += x;
    s.y += y;
    s.z += z;
    ++s.n;
  }

  /// Moves each centre with particles to their mean (every block's sums in block order, divided in double,
  /// rounded to float); a centre without particles stays. Sets every centre's `particles`. Precondition:
  /// centres.size() == clusters and every block filled.
  void move_centres(std::span<centre> centres) const;

 private:
  std::uint64_t particles_;
  std::uint32_t clusters_;
  std::uint64_t block_particles_;
  std::uint64_t blocks_;
  std::vector<partial_sum> sums_;  // block b's sums at [b · clusters, (b + 1) · clusters)
};

}  // namespace xf::apps::kmeans
