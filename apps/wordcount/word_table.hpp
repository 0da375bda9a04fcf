// A word → count hash table for one thread of the word-count reference: open addressing with linear
// probing over 48-byte slots; keys are (pointer, length) views into the mapped text, so counting a word
// never allocates.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace xf::apps::wordcount {

/// A word as the table compares it: its hash (word_hash_step over the word's bytes in 8-byte
/// little-endian chunks, the last one zero-padded, then word_hash_finish with the length) and its first two
/// chunks. Words of up to 16 bytes are compared without touching their text, which for a word seen before
/// lies wherever in the file it first appeared (a cache miss).
struct word_key {
  std::uint64_t hash = 0;
  std::uint64_t head[2] = {0, 0};
};

constexpr std::uint64_t word_hash_step(std::uint64_t h, std::uint64_t chunk) noexcept {
  return (std::rotl(h, 23) ^ chunk) * 0x9fb21c651e98df25ull;
}
constexpr std::uint64_t word_hash_finish(std::uint64_t h, std::uint64_t length) noexcept {
  h ^= length * 0x9e3779b97f4a7c15ull;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}
/// The key of a whole word, as the reference's scan computes it chunk by chunk.
inline word_key make_word_key(const char* text, std::uint64_t length) noexcept {
  word_key k;
  std::uint64_t h = 0;
  for (std::uint64_t i = 0; i < length; i += 8) {
    std::uint64_t chunk = 0;
    std::memcpy(&chunk, text + i, length - i < 8 ? length - i : 8);
    if (i < 16) k.head[i / 8] = chunk;
    h = word_hash_step(h, chunk);
  }
  k.hash = word_hash_finish(h, length);
  return k;
}

/// Counts per distinct word. The texts added must outlive the table. Not thread-safe: one per thread.
class word_table {
 public:
  struct entry {
    word_key key;
    const char* text = nullptr;  ///< nullptr: an empty slot
    std::uint64_t length = 0;
    std::uint64_t count = 0;
  };
  static_assert(sizeof(entry) == 48);

  /// Room for `expected` words before the first growth.
  explicit word_table(std::size_t expected = 4096) {
    std::size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    slots_.resize(capacity);
    mask_ = capacity - 1;
  }

  /// Adds `count` occurrences of the word (`key` = make_word_key(text, length)).
  void add(const char* text, std::uint64_t length, const word_key& key, std::uint64_t count = 1) {
    for (std::size_t i = key.hash & mask_;; i = (i + 1) & mask_) {
      entry& e = slots_[i];
      if (e.text == nullptr) {
        e = {key, text, length, count};
        if (++size_ * 2 > slots_.size()) grow();  // load factor <= 1/2
        return;
      }
      if (e.key.hash == key.hash && e.length == length && e.key.head[0] == key.head[0] &&
          e.key.head[1] == key.head[1] &&
          (length <= 16 || std::memcmp(e.text + 16, text + 16, length - 16) == 0)) {
        e.count += count;
        return;
      }
    }
  }

  /// Hints that `key` will be added soon: its home slot is fetched into the cache.
  void prefetch(const word_key& key) const noexcept { __builtin_prefetch(&slots_[key.hash & mask_]); }

  std::size_t size() const noexcept { return size_; }
  /// Every slot, empty ones (text == nullptr) included.
  std::span<const entry> slots() const noexcept { return slots_; }

 private:
  void grow() {
    std::vector<entry> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const entry& e : old) {
      if (e.text == nullptr) continue;
      std::size_t i = e.key.hash & mask_;
      while (slots_[i].text != nullptr) i = (i + 1) & mask_;
      slots_[i] = e;
    }
  }

  std::vector<entry> slots_;
  std::size_t mask_ = 0;  ///< slots_.size() - 1 (a power of two)
  std::size_t size_ = 0;
};

}  // namespace xf::apps::wordcount
