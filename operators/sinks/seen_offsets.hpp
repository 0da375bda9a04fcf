// A set of frame offsets that many threads insert into at once without locks: a two-level bitmap whose
// leaves are allocated on first touch. Verify sinks use it to find duplicated and lost offsets over streams
// of millions of frames at one bit per offset.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_set>

namespace xf {

class seen_offsets {
 public:
  /// A leaf covers 2^22 offsets (512 KiB of bits): small enough to allocate on demand, large enough that a
  /// long stream touches few of them. 2^16 leaves cover 2^38 offsets (1 PiB of 4 KiB frames); offsets beyond
  /// go to a locked overflow set, so every offset works.
  static constexpr unsigned leaf_offsets_log2 = 22;
  static constexpr unsigned leaf_count_log2 = 16;
  static constexpr std::uint64_t leaf_offsets = std::uint64_t{1} << leaf_offsets_log2;
  static constexpr std::uint64_t leaf_count = std::uint64_t{1} << leaf_count_log2;
  static constexpr std::uint64_t bitmap_offsets = leaf_offsets * leaf_count;

  seen_offsets();
  ~seen_offsets();
  seen_offsets(const seen_offsets&) = delete;
  seen_offsets& operator=(const seen_offsets&) = delete;

  /// Marks `offset` seen; true when it was not seen before. Thread-safe, lock-free below bitmap_offsets.
  bool insert(std::uint64_t offset);
  bool contains(std::uint64_t offset) const;

  struct missing_summary {
    std::uint64_t count = 0;
    std::optional<std::uint64_t> first;
  };
  /// Offsets in [0, limit) never inserted. Call when no thread inserts any more (at on_stop).
  missing_summary missing_below(std::uint64_t limit) const;
  /// Offsets in [from, limit) never inserted (a resumed stream's: those below `from` belong to an earlier
  /// run). Call when no thread inserts any more.
  missing_summary missing_in(std::uint64_t from, std::uint64_t limit) const;

 private:
  using word = std::atomic<std::uint64_t>;
  static constexpr unsigned word_bits = 64;
  static constexpr std::uint64_t leaf_words = leaf_offsets / word_bits;

  word* leaf_for(std::uint64_t offset);

  /// Leaf pointers, published once with a compare-exchange (release) and read with acquire, so a reader
  /// of a pointer also sees the zeroed leaf behind it.
  std::unique_ptr<std::atomic<word*>[]> leaves_;
  mutable std::mutex overflow_mutex_;
  std::unordered_set<std::uint64_t> overflow_;
};

}  // namespace xf
