// frame_checksum: the vectorised path equals the scalar definition at every length and alignment, and the
// checksum notices the changes a corrupted frame shows.
#include "operators/frame_checksum.hpp"
#include "tests/operators/random_bytes.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using xf::testing::random_bytes;

}  // namespace

TEST_CASE("frame_checksum equals its scalar definition at every length and alignment") {
  const std::string path = xf::frame_checksum_vectorized() ? "AVX-512" : "scalar (no AVX-512 on this CPU)";
  MESSAGE("frame_checksum path: " << path);
  const auto bytes = random_bytes(70000, 7);
  for (std::size_t shift = 0; shift < 9; ++shift)
    for (std::size_t n : {0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 1000, 4096, 16384, 65536}) {
      CAPTURE(shift);
      CAPTURE(n);
      CHECK(xf::frame_checksum(bytes.data() + shift, n) ==
            xf::frame_checksum_scalar(bytes.data() + shift, n));
    }
}

TEST_CASE("frame_checksum covers the length, every bit, and the words' order") {
  auto bytes = random_bytes(16384, 11);
  const std::uint64_t base = xf::frame_checksum(bytes.data(), bytes.size());
  CHECK(xf::frame_checksum(bytes.data(), bytes.size() - 8) != base);
  for (std::size_t bit : {0u, 7u, 511u, 4096u * 8 + 3, 16383u * 8 + 7}) {
    bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    CHECK(xf::frame_checksum(bytes.data(), bytes.size()) != base);
    bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  }
  // Two words swapped (same multiset of words, other positions).
  for (int i = 0; i < 8; ++i) std::swap(bytes[64 + i], bytes[4096 + i]);
  CHECK(xf::frame_checksum(bytes.data(), bytes.size()) != base);
  // A zero frame and an empty one differ (the length is part of the sum).
  const std::vector<unsigned char> zeros(64, 0);
  CHECK(xf::frame_checksum(zeros.data(), 64) != xf::frame_checksum(zeros.data(), 0));
}
