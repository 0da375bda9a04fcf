// The seen-offsets bitmap: lazy leaves, atomic bit set, and the scan for missing offsets.
#include "operators/sinks/seen_offsets.hpp"

#include <algorithm>
#include <bit>

namespace xf {

seen_offsets::seen_offsets() : leaves_(new std::atomic<word*>[leaf_count]) {
  for (std::uint64_t i = 0; i < leaf_count; ++i) leaves_[i].store(nullptr, std::memory_order_relaxed);
}

seen_offsets::~seen_offsets() {
  for (std::uint64_t i = 0; i < leaf_count; ++i) delete[] leaves_[i].load(std::memory_order_relaxed);
}

seen_offsets::word* seen_offsets::leaf_for(std::uint64_t offset) {
  std::atomic<word*>& slot = leaves_[offset >> leaf_offsets_log2];
  word* leaf = slot.load(std::memory_order_acquire);
  if (leaf) return leaf;
  word* fresh = new word[leaf_words]();  // value-initialised: all bits clear
  if (slot.compare_exchange_strong(leaf, fresh, std::memory_order_acq_rel, std::memory_order_acquire))
    return fresh;
  delete[] fresh;  // another thread published its leaf first; `leaf` now holds it
  return leaf;
}

bool seen_offsets::insert(std::uint64_t offset) {
  if (offset >= bitmap_offsets) {
    std::lock_guard lock(overflow_mutex_);
    return overflow_.insert(offset).second;
  }
  word* leaf = leaf_for(offset);
  const std::uint64_t in_leaf = offset & (leaf_offsets - 1);
  const std::uint64_t bit = std::uint64_t{1} << (in_leaf % word_bits);
  // Relaxed suffices: the bit is the whole datum, and the on_stop scan runs after the executor joined the
  // inserting threads (a happens-before edge of its own).
  return (leaf[in_leaf / word_bits].fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
}

bool seen_offsets::contains(std::uint64_t offset) const {
  if (offset >= bitmap_offsets) {
    std::lock_guard lock(overflow_mutex_);
    return overflow_.contains(offset);
  }
  const word* leaf = leaves_[offset >> leaf_offsets_log2].load(std::memory_order_acquire);
  if (!leaf) return false;
  const std::uint64_t in_leaf = offset & (leaf_offsets - 1);
  return (leaf[in_leaf / word_bits].load(std::memory_order_relaxed) >> (in_leaf % word_bits)) & 1;
}

seen_offsets::missing_summary seen_offsets::missing_below(std::uint64_t limit) const {
  return missing_in(0, limit);
}

seen_offsets::missing_summary seen_offsets::missing_in(std::uint64_t from, std::uint64_t limit) const {
  missing_summary result;
  if (from >= limit) return result;
  const std::uint64_t bitmap_limit = std::min(limit, bitmap_offsets);
  for (std::uint64_t base = from / leaf_offsets * leaf_offsets; base < bitmap_limit; base += leaf_offsets) {
    const std::uint64_t low = std::max(from, base) - base;  // the leaf's bits [low, span) are asked about
    const std::uint64_t span = std::min(leaf_offsets, bitmap_limit - base);
    if (low >= span) continue;
    const word* leaf = leaves_[base >> leaf_offsets_log2].load(std::memory_order_acquire);
    if (!leaf) {
      result.count += span - low;
      if (!result.first) result.first = base + low;
      continue;
    }
    for (std::uint64_t w = low / word_bits; w * word_bits < span; ++w) {
      std::uint64_t missing = ~leaf[w].load(std::memory_order_relaxed);
      const std::uint64_t bits_here = std::min<std::uint64_t>(word_bits, span - w * word_bits);
      if (bits_here < word_bits) missing &= (std::uint64_t{1} << bits_here) - 1;
      if (w == low / word_bits) missing &= ~std::uint64_t{0} << (low % word_bits);
      if (missing == 0) continue;
      result.count += static_cast<std::uint64_t>(std::popcount(missing));
      if (!result.first)
        result.first = base + w * word_bits + static_cast<std::uint64_t>(std::countr_zero(missing));
    }
  }
  if (limit > bitmap_offsets) {
    const std::uint64_t low = std::max(from, bitmap_offsets);
    std::lock_guard lock(overflow_mutex_);
    std::uint64_t seen_here = 0;
    for (std::uint64_t o : overflow_) seen_here += o >= low && o < limit ? 1 : 0;
    result.count += (limit - low) - seen_here;
    if (!result.first && seen_here < limit - low) {
      // The smallest offset ≥ low not in the set: walk up from there (the set is small).
      std::uint64_t o = low;
      while (overflow_.contains(o)) ++o;
      result.first = o;
    }
  }
  return result;
}

}  // namespace xf
