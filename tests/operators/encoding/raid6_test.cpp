// RAID-6 math: the field against ISA-L's, P and Q against ISA-L's pq_gen bit for bit, and every recovery
// of one or two lost blocks giving the stripe back.
#include <doctest/doctest.h>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "operators/encoding/gf256.hpp"
#include "operators/encoding/raid6.hpp"

namespace xf {
namespace {

/// A stripe of k data blocks then P and Q, 64-byte aligned (ISA-L's vector code asks for 32).
struct stripe {
  unsigned k;
  std::uint64_t block_bytes;
  std::unique_ptr<std::uint64_t[], decltype(&std::free)> words{nullptr, &std::free};

  stripe(unsigned k_, std::uint64_t block_bytes_) : k(k_), block_bytes(block_bytes_) {
    words.reset(static_cast<std::uint64_t*>(std::aligned_alloc(64, (k + 2) * block_bytes)));
    REQUIRE(words != nullptr);
  }
  std::uint64_t block_words() const { return block_bytes / 8; }
  std::uint64_t* block(unsigned i) const { return words.get() + i * block_words(); }
  void fill(std::mt19937_64& rng) const {
    for (std::uint64_t w = 0; w < k * block_words(); ++w) words[w] = rng();
  }
  /// P and Q by pq_word.
  void encode() const {
    for (std::uint64_t w = 0; w < block_words(); ++w)
      raid6::pq_word(words.get(), block_words(), k, w, block(k)[w], block(k + 1)[w]);
  }
};

TEST_CASE("raid6.field_products_and_inverses_equal_isa_l") {
  for (unsigned a = 0; a < 256; ++a) {
    CAPTURE(a);
    CHECK(gf256::inv(static_cast<std::uint8_t>(a)) == ::gf_inv(static_cast<unsigned char>(a)));
    for (unsigned b = 0; b < 256; ++b)
      REQUIRE(gf256::mul(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)) ==
              ::gf_mul(static_cast<unsigned char>(a), static_cast<unsigned char>(b)));
  }
  CHECK(gf256::exp2(0) == 1);
  CHECK(gf256::exp2(8) == 0x1d);
  CHECK(gf256::exp2(255) == 1);  // 2 generates the multiplicative group: order 255
}

TEST_CASE("raid6.word_products_are_eight_byte_products") {
  std::mt19937_64 rng(6);
  for (int n = 0; n < 200; ++n) {
    const std::uint64_t v = rng();
    for (unsigned c = 0; c < 256; ++c) {
      const std::uint64_t product = gf256::mul_word(static_cast<std::uint8_t>(c), v);
      for (unsigned byte = 0; byte < 8; ++byte)
        REQUIRE(static_cast<std::uint8_t>(product >> (8 * byte)) ==
                gf256::mul(static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(v >> (8 * byte))));
    }
    CHECK(gf256::mul2_word(v) == gf256::mul_word(2, v));
  }
}

TEST_CASE("raid6.p_and_q_equal_isa_l_pq_gen") {
  std::mt19937_64 rng(2026);
  // ISA-L takes two data blocks or more; one block's P and Q are the block itself.
  const stripe single(1, 64);
  single.fill(rng);
  single.encode();
  CHECK(std::memcmp(single.block(1), single.block(0), 64) == 0);
  CHECK(std::memcmp(single.block(2), single.block(0), 64) == 0);
  for (unsigned k : {2u, 3u, 4u, 8u, 16u, 61u, 255u}) {
    for (std::uint64_t block_bytes : {64ull, 192ull, 4096ull}) {
      CAPTURE(k);
      CAPTURE(block_bytes);
      const stripe s(k, block_bytes);
      s.fill(rng);
      s.encode();
      const stripe theirs(k, block_bytes);
      std::memcpy(theirs.words.get(), s.words.get(), k * block_bytes);
      std::vector<void*> array;
      for (unsigned i = 0; i < k + 2; ++i) array.push_back(theirs.block(i));
      REQUIRE(::pq_gen(static_cast<int>(k + 2), static_cast<int>(block_bytes), array.data()) == 0);
      CHECK(std::memcmp(s.block(k), theirs.block(k), block_bytes) == 0);
      CHECK(std::memcmp(s.block(k + 1), theirs.block(k + 1), block_bytes) == 0);
      CHECK(::pq_check(static_cast<int>(k + 2), static_cast<int>(block_bytes), array.data()) == 0);
    }
  }
}

/// Loses the blocks `lost` (overwritten with garbage), rebuilds them, and compares with the stripe.
void check_recovery(const stripe& s, const std::vector<unsigned>& lost, std::mt19937_64& rng) {
  CAPTURE(lost[0]);
  CAPTURE(lost.back());
  raid6::recovery r;
  REQUIRE(std::string(raid6::make_recovery(s.k, static_cast<unsigned>(lost.size()), lost.data(), r)).empty());
  const stripe damaged(s.k, s.block_bytes);
  std::memcpy(damaged.words.get(), s.words.get(), (s.k + 2) * s.block_bytes);
  for (unsigned i : lost)
    for (std::uint64_t w = 0; w < s.block_words(); ++w) damaged.block(i)[w] = rng();
  for (std::uint64_t w = 0; w < s.block_words(); ++w) {
    std::uint64_t rebuilt[2];
    raid6::recover_word(r, damaged.words.get(), s.block_words(), w, rebuilt);
    for (unsigned j = 0; j < r.lost_count; ++j) REQUIRE(rebuilt[j] == s.block(r.lost[j])[w]);
  }
}

TEST_CASE("raid6.any_one_or_two_lost_blocks_come_back") {
  std::mt19937_64 rng(77);
  for (unsigned k : {1u, 2u, 5u, 16u}) {
    CAPTURE(k);
    const stripe s(k, 128);
    s.fill(rng);
    s.encode();
    for (unsigned x = 0; x < k + 2; ++x) {
      check_recovery(s, {x}, rng);
      for (unsigned y = 0; y < k + 2; ++y)
        if (y != x) check_recovery(s, {x, y}, rng);
    }
  }
  // The widest stripe: a sample of pairs, the far ends included.
  const stripe wide(255, 64);
  wide.fill(rng);
  wide.encode();
  for (const std::vector<unsigned>& lost :
       std::vector<std::vector<unsigned>>{{0, 254}, {253, 254}, {254, 255}, {254, 256}, {0, 256}, {255, 256}})
    check_recovery(wide, lost, rng);
  for (int n = 0; n < 50; ++n) {
    const unsigned x = static_cast<unsigned>(rng() % 257), y = static_cast<unsigned>(rng() % 257);
    check_recovery(wide, x == y ? std::vector<unsigned>{x} : std::vector<unsigned>{x, y}, rng);
  }
}

TEST_CASE("raid6.impossible_recoveries_say_why") {
  raid6::recovery r;
  const unsigned none[] = {0};
  const unsigned three[] = {0, 1, 2};
  const unsigned twice[] = {3, 3};
  const unsigned past[] = {1, 6};
  CHECK(std::string(raid6::make_recovery(0, 1, none, r)) == "k must be between 1 and 255");
  CHECK(std::string(raid6::make_recovery(256, 1, none, r)) == "k must be between 1 and 255");
  CHECK(std::string(raid6::make_recovery(4, 3, three, r)) == "RAID-6 rebuilds one or two lost blocks");
  CHECK(std::string(raid6::make_recovery(4, 2, twice, r)) == "the same block is lost twice");
  CHECK(std::string(raid6::make_recovery(4, 2, past, r)) ==
        "a lost block is past the stripe's k data blocks, P and Q");
}

}  // namespace
}  // namespace xf
