// Lloyd's update step, shared by the CPU reference and xeflow-kmeans (block-ordered sums: results that
// do not depend on the thread count).
#include "apps/kmeans/centre_update.hpp"

#include <algorithm>
#include <stdexcept>

namespace xf::apps::kmeans {

std::vector<centre> initial_centres(std::span<const particle> particles, std::uint32_t clusters) {
  std::vector<centre> centres(clusters);
  for (std::uint32_t c = 0; c < clusters; ++c)
    centres[c] = {particles[c].x, particles[c].y, particles[c].z, 0};
  return centres;
}

centre_update::centre_update(std::uint64_t particles, std::uint32_t clusters, std::uint64_t block_particles)
    : particles_(particles), clusters_(clusters), block_particles_(block_particles) {
  if (particles == 0 || clusters == 0 || block_particles == 0)
    throw std::invalid_argument("kmeans: particles, clusters and block_particles must be >= 1");
  blocks_ = (particles + block_particles - 1) / block_particles;
  sums_.resize(blocks_ * clusters);
}

std::span<partial_sum> centre_update::start_block(std::uint64_t b) {
  const std::span<partial_sum> sums(&sums_[b * clusters_], clusters_);
  std::fill(sums.begin(), sums.end(), partial_sum{});
  return sums;
}

void centre_update::move_centres(std::span<centre> centres) const {
  for (std::uint32_t c = 0; c < clusters_; ++c) {
    partial_sum total;
    for (std::uint64_t b = 0; b < blocks_; ++b) {  // block order: the same sums for any thread count
      const partial_sum& s = sums_[b * clusters_ + c];
      total.x += s.x;
      total.y += s.y;
      total.z += s.z;
      total.n += s.n;
    }
    centre& moved = centres[c];
    moved.particles = total.n;
    if (total.n > 0) {
      const double count = static_cast<double>(total.n);
      moved.x = static_cast<float>(total.x / count);
      moved.y = static_cast<float>(total.y / count);
      moved.z = static_cast<float>(total.z / count);
    }
  }
}

}  // namespace xf::apps::kmeans
