// What the prefetch source's tests share: encoding addresses into word buffers that are handed on when
// full, and decoding words back to addresses.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "operators/sources/prefetch/address_stream.hpp"

namespace xf::prefetch::test {

/// The addresses `words` encode (the decoder must accept them).
inline std::vector<std::uint64_t> decoded(const std::vector<std::uint64_t>& words) {
  std::vector<std::uint64_t> out;
  REQUIRE(decode_addresses(words.data(), static_cast<std::uint32_t>(words.size()),
                           [&](std::uint64_t a) { out.push_back(a); }));
  return out;
}

/// Runs `produce(encoder, buffer)` — which returns false when the buffer is full — and then the encoder's
/// finish, into buffers of `capacity` words handed on whenever full; returns all words in order.
template <class Produce>
std::vector<std::uint64_t> encode_in_buffers(std::uint32_t capacity, Produce&& produce) {
  std::vector<std::uint64_t> all, buffer(capacity);
  address_words out{buffer.data(), capacity, 0};
  address_encoder enc;
  auto hand_on = [&] {
    REQUIRE(out.used > 0);  // a record that never fits would loop forever
    all.insert(all.end(), buffer.begin(), buffer.begin() + out.used);
    out.used = 0;
  };
  while (!produce(enc, out)) hand_on();
  while (!enc.finish(out)) hand_on();
  all.insert(all.end(), buffer.begin(), buffer.begin() + out.used);
  return all;
}

}  // namespace xf::prefetch::test
