// An open-addressing hash map keyed by u64 for the affinity reference (card → dense id): linear probing,
// load <= 1/2, key and value in one slot (one cache line per probe), no per-key allocation, and lookups
// that take a precomputed hash so callers can prefetch a batch of slots first. Not thread-safe: build on
// one thread, then read from any.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace xf::apps::affinity {

/// murmur3's 64-bit finalizer: every key bit reaches every hash bit. The map indexes by the low bits; the
/// affinity reference picks partitions by the high bits.
constexpr std::uint64_t mix64(std::uint64_t k) noexcept {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

template <class Value>
class u64_map {
 public:
  explicit u64_map(std::size_t expected = 8) {
    std::size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    slots_.assign(capacity, slot{});
    mask_ = capacity - 1;
  }

  /// The value of `key` (whose mix64 is `hash`), or nullptr.
  const Value* find(std::uint64_t key, std::uint64_t hash) const noexcept {
    if (key == empty_key) return has_empty_key_ ? &empty_key_value_ : nullptr;
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == empty_key) return nullptr;
    }
  }
  const Value* find(std::uint64_t key) const noexcept { return find(key, mix64(key)); }

  /// Fetches the home slot of a key whose mix64 is `hash` into the cache.
  void prefetch(std::uint64_t hash) const noexcept { __builtin_prefetch(&slots_[hash & mask_]); }

  /// The value of `key`, inserted as `value` when absent; second: whether it was inserted. The pointer is
  /// valid until the next insertion.
  std::pair<Value*, bool> try_emplace(std::uint64_t key, const Value& value) {
    if (key == empty_key) {
      const bool inserted = !std::exchange(has_empty_key_, true);
      if (inserted) empty_key_value_ = value, ++size_;
      return {&empty_key_value_, inserted};
    }
    const std::uint64_t hash = mix64(key);
    std::size_t i = hash & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return {&slots_[i].value, false};
      if (slots_[i].key == empty_key) break;
    }
    if ((size_ + 1) * 2 > slots_.size()) {
      grow();
      for (i = hash & mask_; slots_[i].key != empty_key; i = (i + 1) & mask_) {
      }
    }
    slots_[i] = {key, value};
    ++size_;
    return {&slots_[i].value, true};
  }

  std::size_t size() const noexcept { return size_; }

 private:
  static constexpr std::uint64_t empty_key =
      ~std::uint64_t{0};  // marks a free slot; the key ~0 is kept aside
  struct slot {
    std::uint64_t key = empty_key;
    Value value{};
  };

  void grow() {
    std::vector<slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const slot& s : old) {
      if (s.key == empty_key) continue;
      std::size_t i = mix64(s.key) & mask_;
      while (slots_[i].key != empty_key) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  bool has_empty_key_ = false;
  Value empty_key_value_{};
};

}  // namespace xf::apps::affinity
