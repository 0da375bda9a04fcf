// tpacf's pair arithmetic, shared by the kernel and the CPU reference so that both bin every pair alike.
// The dot product of two float unit vectors in double is exact in its products (24-bit by 24-bit fits in
// 53 bits), so contracting a product and a sum into a fused multiply-add rounds the same as not: the GPU
// and the CPU get the same bits, and the histograms must match exactly.
#pragma once

#include "framework/core/exec_space.hpp"

namespace xf::shared_bench {

inline constexpr unsigned tpacf_max_bins = 64;

/// The bins' edges as cosines of the separation angle, largest first (the smallest angle): bin 0 counts
/// pairs closer than the first edge, bin k pairs between edges k − 1 and k, bin `count` pairs beyond the
/// last. Passed to the kernel by value.
struct tpacf_edges {
  double cosine[tpacf_max_bins + 1];
  unsigned count;  ///< bins + 1
};

XF_HOST_DEVICE inline double tpacf_dot(float ax, float ay, float az, float bx, float by, float bz) {
  return (static_cast<double>(ax) * bx + static_cast<double>(ay) * by) + static_cast<double>(az) * bz;
}

/// The bin of a pair whose unit vectors' dot product is `dot`: how many edges exceed it.
XF_HOST_DEVICE inline unsigned tpacf_bin(double dot, const double* edge, unsigned count) {
  unsigned low = 0, high = count;
  while (low < high) {
    const unsigned middle = (low + high) / 2;
    if (edge[middle] > dot)
      low = middle + 1;
    else
      high = middle;
  }
  return low;
}

}  // namespace xf::shared_bench
