// The launchers of tpacf's kernels (tpacf_kernels.cu), which every variant's host side calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "apps/shared_objects/tpacf/binning.hpp"

namespace xf::shared_bench {

/// counts[0, count) = 0. Default stream.
void launch_tpacf_clear(std::uint64_t* counts, std::size_t count);

/// Adds to histogram[0, edges.count] the pairs of points (one from set a, one from set b; each set
/// `points` unit vectors as x[points] | y[points] | z[points]) by separation angle; where `same_set` (a is
/// b) each unordered pair of distinct points once. Default stream.
void launch_tpacf_pairs(const float* a, const float* b, std::size_t points, bool same_set,
                        const tpacf_edges& edges, std::uint64_t* histogram);

}  // namespace xf::shared_bench
