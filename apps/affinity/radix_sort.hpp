// Sorting u64 keys for the affinity reference's distinct-pair counting: LSD radix sort, one pass per
// significant byte (passes where every key has the same byte are skipped), then duplicates dropped.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace xf::apps::affinity {

/// Sorts `keys` ascending and removes duplicates; `scratch` is working space (resized as needed, kept so a
/// thread can reuse it).
inline void sort_unique(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& scratch) {
  if (keys.size() < 2) return;
  if (keys.size() < 256) {
    std::sort(keys.begin(), keys.end());
  } else {
    std::uint64_t all_bits = 0;
    for (std::uint64_t k : keys) all_bits |= k;
    const int bytes = (std::bit_width(all_bits) + 7) / 8;
    scratch.resize(keys.size());
    for (int b = 0; b < bytes; ++b) {
      const int shift = 8 * b;
      std::size_t count[256] = {};
      for (std::uint64_t k : keys) ++count[(k >> shift) & 0xff];
      if (std::count(std::begin(count), std::end(count), keys.size()) == 1)
        continue;  // one byte value: no-op
      std::size_t sum = 0;
      for (std::size_t& c : count) sum += std::exchange(c, sum);
      for (std::uint64_t k : keys) scratch[count[(k >> shift) & 0xff]++] = k;
      keys.swap(scratch);
    }
  }
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

}  // namespace xf::apps::affinity
