// A data page's bloom filter: lets a point predicate (column = value, IN) skip a page that cannot hold
// the value. No false negatives: every value added answers "may contain"; a value never added answers it
// with probability about (1 − e^(−k·n/m))^k for n values in m bits with k hashes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "framework/core/exec_space.hpp"

namespace xf {

/// A 64-bit hash of a value's bytes: FNV-1a, then splitmix64's finaliser so every bit depends on every
/// byte (the filter takes two 32-bit halves of it).
XF_HOST_DEVICE inline std::uint64_t bloom_hash(const std::byte* bytes, std::uint32_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint32_t i = 0; i < n; ++i) h = (h ^ static_cast<std::uint64_t>(bytes[i])) * 0x100000001b3ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

/// The hash of a scalar value. Floats hash their canonical form: −0.0 as +0.0 (they compare equal, so a
/// point predicate on one must find the other).
template <class T>
XF_HOST_DEVICE std::uint64_t bloom_hash_of(T value) {
  static_assert(std::is_arithmetic_v<T>);
  if constexpr (std::is_floating_point_v<T>) {
    if (value == T(0)) value = T(0);
  }
  std::byte bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  return bloom_hash(bytes, sizeof(T));
}

/// Bit i of the k probes for hash h in a filter of `bits` bits (a power of two): double hashing.
XF_HOST_DEVICE inline std::uint32_t bloom_probe(std::uint64_t h, std::uint32_t i, std::uint32_t bits) {
  const std::uint32_t h1 = static_cast<std::uint32_t>(h), h2 = static_cast<std::uint32_t>(h >> 32) | 1u;
  return (h1 + i * h2) & (bits - 1);
}

/// Adds hash h to the filter `words` of `bits` bits with k probes. Single writer (the page's indexer).
XF_HOST_DEVICE inline void bloom_add(std::uint64_t* words, std::uint32_t bits, std::uint32_t k,
                                     std::uint64_t h) {
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t b = bloom_probe(h, i, bits);
    words[b / 64] |= std::uint64_t{1} << (b % 64);
  }
}

/// Whether the filter may hold hash h: false means certainly not.
XF_HOST_DEVICE inline bool bloom_may_contain(const std::uint64_t* words, std::uint32_t bits, std::uint32_t k,
                                             std::uint64_t h) {
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t b = bloom_probe(h, i, bits);
    if ((words[b / 64] & (std::uint64_t{1} << (b % 64))) == 0) return false;
  }
  return true;
}

}  // namespace xf
