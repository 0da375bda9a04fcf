// The ISA-L and OpenSSL wrappers against xeflow's own encoding code: isal_pq equals raid6::pq_word,
// evp_aes128 equals aes128.hpp's ECB and CTR frame by frame (CTR's counter of frame b at b · frame_blocks),
// decryption inverts encryption, and misuse throws instead of reaching the libraries.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "operators/encoding/aes128.hpp"
#include "operators/encoding/cpu_codecs.hpp"
#include "operators/encoding/raid6.hpp"
#include "tests/operators/random_bytes.hpp"

namespace xf {
namespace {

using testing::random_bytes;
using simd_aligned_bytes = std::unique_ptr<std::uint8_t[], decltype(&std::free)>;

/// `bytes` of 64-byte aligned memory, random (aligned_alloc takes whole multiples of the alignment).
simd_aligned_bytes random_aligned(std::mt19937_64& rng, std::size_t bytes) {
  simd_aligned_bytes buffer(static_cast<std::uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)),
                            &std::free);
  REQUIRE(buffer != nullptr);
  for (std::size_t i = 0; i < bytes; ++i) buffer[i] = static_cast<std::uint8_t>(rng());
  return buffer;
}

TEST_CASE("cpu_codecs.isal_pq_equals_pq_word") {
  std::mt19937_64 rng(41);
  for (unsigned k : {2u, 4u, 16u, 255u}) {
    for (std::size_t block_bytes : {32ul, 64ul, 192ul, 4096ul}) {
      CAPTURE(k);
      CAPTURE(block_bytes);
      const simd_aligned_bytes stripe = random_aligned(rng, k * block_bytes);
      const simd_aligned_bytes pq = random_aligned(rng, 2 * block_bytes);  // stale bytes: all must be written
      cpu_codecs::isal_pq(stripe.get(), k, block_bytes, pq.get(), pq.get() + block_bytes);
      const auto* data = reinterpret_cast<const std::uint64_t*>(stripe.get());
      const std::uint64_t block_words = block_bytes / 8;
      std::vector<std::uint64_t> p(block_words), q(block_words);
      for (std::uint64_t w = 0; w < block_words; ++w) raid6::pq_word(data, block_words, k, w, p[w], q[w]);
      CHECK(std::memcmp(pq.get(), p.data(), block_bytes) == 0);
      CHECK(std::memcmp(pq.get() + block_bytes, q.data(), block_bytes) == 0);
    }
  }
}

TEST_CASE("cpu_codecs.isal_pq_rejects_misuse") {
  std::mt19937_64 rng(42);
  const simd_aligned_bytes stripe = random_aligned(rng, 4 * 4096 + 64);
  const simd_aligned_bytes pq = random_aligned(rng, 2 * 4096 + 64);
  std::uint8_t* p = pq.get();
  std::uint8_t* q = pq.get() + 4096;
  CHECK_NOTHROW(cpu_codecs::isal_pq(stripe.get(), 4, 4096, p, q));
  CHECK_THROWS_AS(cpu_codecs::isal_pq(stripe.get() + 16, 4, 4096, p, q), std::invalid_argument);
  CHECK_THROWS_AS(cpu_codecs::isal_pq(stripe.get(), 4, 4096, p + 8, q), std::invalid_argument);
  CHECK_THROWS_AS(cpu_codecs::isal_pq(stripe.get(), 4, 4096, p, q + 1), std::invalid_argument);
  CHECK_THROWS_AS(cpu_codecs::isal_pq(stripe.get(), 4, 48, p, q), std::invalid_argument);
  CHECK_THROWS_AS(cpu_codecs::isal_pq(stripe.get(), 4, 0, p, q), std::invalid_argument);
  CHECK_THROWS_AS(cpu_codecs::isal_pq(stripe.get(), 1, 4096, p, q), std::invalid_argument);
  CHECK_THROWS_AS(cpu_codecs::isal_pq(stripe.get(), 256, 64, p, q), std::invalid_argument);
  CHECK_THROWS_AS(cpu_codecs::isal_pq(nullptr, 4, 4096, p, q), std::invalid_argument);
  CHECK_THROWS_AS(cpu_codecs::isal_pq(stripe.get(), 4, 4096, p, nullptr), std::invalid_argument);
}

TEST_CASE("cpu_codecs.ctr_counter_is_a_128_bit_big_endian_sum") {
  std::uint8_t iv[16] = {}, out[16];
  cpu_codecs::ctr_counter(iv, 0x0102030405060708ull, out);
  for (int i = 0; i < 8; ++i) CHECK(out[i] == 0);
  for (int i = 8; i < 16; ++i) CHECK(out[i] == i - 7);
  // The low half carries into the high half...
  for (int i = 8; i < 16; ++i) iv[i] = 0xff;
  iv[7] = 0x41;
  cpu_codecs::ctr_counter(iv, 2, out);
  CHECK(out[7] == 0x42);
  CHECK(out[15] == 0x01);
  for (int i = 8; i < 15; ++i) CHECK(out[i] == 0);
  // ... and the whole counter wraps modulo 2^128, as OpenSSL's does.
  std::memset(iv, 0xff, sizeof iv);
  cpu_codecs::ctr_counter(iv, 1, iv);  // in place
  for (int i = 0; i < 16; ++i) CHECK(iv[i] == 0);
}

/// aes128.hpp's output for frame `frame` of `frame_bytes` bytes (CTR: the stream of `iv`).
std::vector<std::uint8_t> xeflow_aes(aes_params::mode mode, const aes::round_keys& keys,
                                     const std::uint8_t* iv, std::uint64_t frame,
                                     const std::vector<std::uint8_t>& in) {
  std::vector<std::uint8_t> out(in.size());
  if (mode == aes_params::mode::ecb)
    aes::encrypt_ecb(keys, aes::host_tables(), in.data(), out.data(), in.size());
  else
    aes::xor_ctr(keys, aes::host_tables(), iv, frame * (in.size() / aes::block_bytes), in.data(), out.data(),
                 in.size());
  return out;
}

TEST_CASE("cpu_codecs.evp_aes128_equals_xeflow_aes_frame_by_frame") {
  std::mt19937_64 rng(43);
  const std::vector<std::uint8_t> key = random_bytes(rng, 16);
  const aes::round_keys keys = aes::expand_key(key.data());
  // A random IV, and one whose low half is about to carry into the high half.
  std::vector<std::uint8_t> near_carry = random_bytes(rng, 16);
  for (int i = 8; i < 16; ++i) near_carry[i] = 0xff;
  near_carry[15] = 0xf0;
  for (const auto mode : {aes_params::mode::ecb, aes_params::mode::ctr}) {
    // One context per direction serves every frame, in any order.
    cpu_codecs::evp_aes128 encrypt(key.data(), mode, cpu_codecs::cipher_direction::encrypt);
    cpu_codecs::evp_aes128 decrypt(key.data(), mode, cpu_codecs::cipher_direction::decrypt);
    for (const std::vector<std::uint8_t>& iv : {random_bytes(rng, 16), near_carry}) {
      for (std::size_t frame_bytes : {16ul, 4096ul, 65536ul}) {
        for (std::uint64_t frame : {0ull, 7ull, 1ull, 1000ull, (1ull << 32) + 5}) {
          CAPTURE(static_cast<int>(mode));
          CAPTURE(frame_bytes);
          CAPTURE(frame);
          const std::vector<std::uint8_t> plain = random_bytes(rng, frame_bytes);
          std::uint8_t counter[16];
          cpu_codecs::ctr_counter(iv.data(), frame * (frame_bytes / aes::block_bytes), counter);
          std::vector<std::uint8_t> cipher(frame_bytes), back(frame_bytes);
          encrypt.run(plain.data(), cipher.data(), frame_bytes, counter);
          CHECK(cipher == xeflow_aes(mode, keys, iv.data(), frame, plain));
          decrypt.run(cipher.data(), back.data(), frame_bytes, counter);
          CHECK(back == plain);
        }
      }
    }
  }
}

TEST_CASE("cpu_codecs.evp_aes128_ctr_restarts_after_a_partial_block_and_works_in_place") {
  std::mt19937_64 rng(44);
  const std::vector<std::uint8_t> key = random_bytes(rng, 16), iv = random_bytes(rng, 16);
  const aes::round_keys keys = aes::expand_key(key.data());
  cpu_codecs::evp_aes128 ctr(key.data(), aes_params::mode::ctr, cpu_codecs::cipher_direction::encrypt);
  // A stream's last frame may end inside a block; the next call (a new stream) must not use its leftover
  // keystream.
  std::vector<std::uint8_t> tail = random_bytes(rng, 100), expected(100), out(100);
  aes::xor_ctr(keys, aes::host_tables(), iv.data(), 3, tail.data(), expected.data(), tail.size());
  std::uint8_t counter[16];
  cpu_codecs::ctr_counter(iv.data(), 3, counter);
  ctr.run(tail.data(), out.data(), tail.size(), counter);
  CHECK(out == expected);
  std::vector<std::uint8_t> frame = random_bytes(rng, 4096);
  expected = xeflow_aes(aes_params::mode::ctr, keys, iv.data(), 2, frame);
  cpu_codecs::ctr_counter(iv.data(), 2 * 4096 / 16, counter);
  ctr.run(frame.data(), frame.data(), frame.size(), counter);  // in place
  CHECK(frame == expected);
  // A moved-to cipher keeps the key and mode.
  cpu_codecs::evp_aes128 moved = std::move(ctr);
  CHECK(moved.mode() == aes_params::mode::ctr);
  frame = random_bytes(rng, 4096);
  expected = xeflow_aes(aes_params::mode::ctr, keys, iv.data(), 2, frame);
  out.resize(frame.size());
  moved.run(frame.data(), out.data(), frame.size(), counter);
  CHECK(out == expected);
}

TEST_CASE("cpu_codecs.evp_aes128_rejects_wrong_lengths") {
  std::mt19937_64 rng(45);
  const std::vector<std::uint8_t> key = random_bytes(rng, 16), data = random_bytes(rng, 64);
  std::vector<std::uint8_t> out(64);
  const std::uint8_t counter[16] = {};
  cpu_codecs::evp_aes128 ecb(key.data(), aes_params::mode::ecb, cpu_codecs::cipher_direction::encrypt);
  CHECK_NOTHROW(ecb.run(data.data(), out.data(), 64, nullptr));  // ECB needs no counter
  CHECK_THROWS_AS(ecb.run(data.data(), out.data(), 17, counter), std::invalid_argument);
  CHECK_THROWS_AS(ecb.run(data.data(), out.data(), 8, counter), std::invalid_argument);
  cpu_codecs::evp_aes128 ctr(key.data(), aes_params::mode::ctr, cpu_codecs::cipher_direction::encrypt);
  CHECK_NOTHROW(ctr.run(data.data(), out.data(), 17, counter));  // CTR takes any length
  CHECK_THROWS_AS(ctr.run(data.data(), out.data(), 16, nullptr), std::invalid_argument);
  CHECK_THROWS_AS(ctr.run(data.data(), out.data(), std::size_t{1} << 31, counter), std::invalid_argument);
}

}  // namespace
}  // namespace xf
