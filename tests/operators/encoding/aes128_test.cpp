// Tests of the AES-128 core on the host: the FIPS-197 and SP 800-38A known answers, the tables built at
// compile time, and equality with OpenSSL's EVP AES-128 ECB and CTR on random keys, IVs and lengths —
// including CTR done in shuffled frames and counters whose low 64 bits carry into the high half.
#include <doctest/doctest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "operators/encoding/aes128.hpp"
#include "tests/operators/random_bytes.hpp"

using namespace xf;

namespace {

using bytes = std::vector<std::uint8_t>;

bytes from_hex(const std::string& hex) {
  bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

using testing::random_bytes;

/// One-shot OpenSSL pass of `cipher` (no padding) over `in`.
bytes openssl_run(const EVP_CIPHER* cipher, bool encrypt, const bytes& key, const std::uint8_t* iv,
                  const bytes& in) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  REQUIRE(ctx != nullptr);
  bytes out(in.size() + 16);
  int n = 0, tail = 0;
  REQUIRE(EVP_CipherInit_ex(ctx, cipher, nullptr, key.data(), iv, encrypt ? 1 : 0) == 1);
  REQUIRE(EVP_CIPHER_CTX_set_padding(ctx, 0) == 1);
  REQUIRE(EVP_CipherUpdate(ctx, out.data(), &n, in.data(), static_cast<int>(in.size())) == 1);
  REQUIRE(EVP_CipherFinal_ex(ctx, out.data() + n, &tail) == 1);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(static_cast<std::size_t>(n + tail));
  return out;
}

/// IV + blocks as a 128-bit big-endian sum, byte by byte: an implementation independent of xor_ctr's.
bytes add_blocks(const bytes& iv, std::uint64_t blocks) {
  bytes out = iv;
  unsigned carry = 0;
  for (int i = 15; i >= 0; --i) {
    const unsigned addend = i >= 8 ? static_cast<unsigned>(blocks >> (8 * (15 - i)) & 0xff) : 0;
    const unsigned sum = out[i] + addend + carry;
    out[i] = static_cast<std::uint8_t>(sum);
    carry = sum >> 8;
  }
  return out;
}

bytes encrypt_one(const bytes& key, const bytes& pt) {
  const aes::round_keys keys = aes::expand_key(key.data());
  bytes out(16);
  aes::encrypt_block(keys, aes::host_tables(), pt.data(), out.data());
  return out;
}

bytes decrypt_one(const bytes& key, const bytes& ct) {
  const aes::decrypt_round_keys keys = aes::expand_decrypt_key(key.data());
  bytes out(16);
  aes::decrypt_block(keys, aes::host_tables(), ct.data(), out.data());
  return out;
}

// The tables and the schedule are constant expressions: checked by the compiler.
constexpr aes::tables compile_time_tables = aes::make_tables();
static_assert(compile_time_tables.sbox[0x00] == 0x63);
static_assert(compile_time_tables.sbox[0x53] == 0xed);
static_assert(compile_time_tables.inv_sbox[0x63] == 0x00);
constexpr std::uint8_t appendix_a_key[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                             0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
static_assert(aes::expand_key(appendix_a_key).w[4] == 0xa0fafe17);  // FIPS-197 A.1
static_assert(aes::expand_key(appendix_a_key).w[43] == 0xb6630ca6);

}  // namespace

TEST_CASE("aes128.tables_from_gf_arithmetic") {
  const aes::tables& t = aes::host_tables();
  CHECK(t.sbox[0x00] == 0x63);
  CHECK(t.sbox[0x53] == 0xed);
  CHECK(t.inv_sbox[0x63] == 0x00);
  for (unsigned x = 0; x < 256; ++x) {
    CHECK(t.inv_sbox[t.sbox[x]] == x);
    CHECK(t.sbox[t.inv_sbox[x]] == x);
  }
  // Spot values of the published T-tables (rijndael-alg-fst.c, the layout OpenSSL's C code uses).
  CHECK(t.te[0][0x00] == 0xc66363a5u);
  CHECK(t.te[1][0x00] == 0xa5c66363u);
  CHECK(t.te[2][0x00] == 0x63a5c663u);
  CHECK(t.te[3][0x00] == 0x6363a5c6u);
  CHECK(t.te[0][0xff] == 0x2c16163au);
  CHECK(t.td[0][0x00] == 0x51f4a750u);
  CHECK(t.td[1][0x00] == 0x5051f4a7u);
  CHECK(t.td[0][0xff] == 0xd0b85742u);
}

TEST_CASE("aes128.fips197_appendix_b_and_c1_vectors") {
  struct vector {
    const char *key, *pt, *ct;
  };
  for (const vector& v : {vector{"2b7e151628aed2a6abf7158809cf4f3c", "3243f6a8885a308d313198a2e0370734",
                                 "3925841d02dc09fbdc118597196a0b32"},  // Appendix B
                          vector{"000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
                                 "69c4e0d86a7b0430d8cdb78070b4c55a"}}) {  // Appendix C.1
    CAPTURE(v.key);
    CHECK(encrypt_one(from_hex(v.key), from_hex(v.pt)) == from_hex(v.ct));
    CHECK(decrypt_one(from_hex(v.key), from_hex(v.ct)) == from_hex(v.pt));
  }
  const bytes key = from_hex("000102030405060708090a0b0c0d0e0f");
  const bytes pt = from_hex("00112233445566778899aabbccddeeff");
  const bytes ct = from_hex("69c4e0d86a7b0430d8cdb78070b4c55a");

  // The compact path gives the same answers from the S-boxes alone.
  const aes::round_keys keys = aes::expand_key(key.data());
  bytes out(16);
  aes::encrypt_block_compact(keys, aes::host_tables().sbox, pt.data(), out.data());
  CHECK(out == ct);
  aes::decrypt_block_compact(keys, aes::host_tables().inv_sbox, ct.data(), out.data());
  CHECK(out == pt);
}

TEST_CASE("aes128.in_place_blocks") {
  const bytes key = from_hex("000102030405060708090a0b0c0d0e0f");
  bytes buf = from_hex("00112233445566778899aabbccddeeff");
  aes::encrypt_block(aes::expand_key(key.data()), aes::host_tables(), buf.data(), buf.data());
  CHECK(buf == from_hex("69c4e0d86a7b0430d8cdb78070b4c55a"));
  aes::decrypt_block(aes::expand_decrypt_key(key.data()), aes::host_tables(), buf.data(), buf.data());
  CHECK(buf == from_hex("00112233445566778899aabbccddeeff"));
}

/// The plaintext of SP 800-38A's AES-128 examples (F.1.1, F.5.1), four blocks.
constexpr const char* sp800_38a_plaintext =
    "6bc1bee22e409f96e93d7e117393172a"
    "ae2d8a571e03ac9c9eb76fac45af8e51"
    "30c81c46a35ce411e5fbc1191a0a52ef"
    "f69f2445df4f9b17ad2b417be66c3710";

TEST_CASE("aes128.sp800_38a_f11_ecb_vector") {
  const bytes key = from_hex("2b7e151628aed2a6abf7158809cf4f3c");
  const bytes pt = from_hex(sp800_38a_plaintext);
  const bytes ct = from_hex(
      "3ad77bb40d7a3660a89ecaf32466ef97"
      "f5d3d58503b9699de785895a96fdbaaf"
      "43b1cd7f598ece23881b00e3ed030688"
      "7b0c785e27e8ad3f8223207104725dd4");
  bytes out(pt.size());
  aes::encrypt_ecb(aes::expand_key(key.data()), aes::host_tables(), pt.data(), out.data(), pt.size());
  CHECK(out == ct);
  aes::decrypt_ecb(aes::expand_decrypt_key(key.data()), aes::host_tables(), ct.data(), out.data(), ct.size());
  CHECK(out == pt);
}

TEST_CASE("aes128.sp800_38a_f51_ctr_vector") {
  const bytes key = from_hex("2b7e151628aed2a6abf7158809cf4f3c");
  const bytes iv = from_hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
  const bytes pt = from_hex(sp800_38a_plaintext);
  const bytes ct = from_hex(
      "874d6191b620e3261bef6864990db6ce"
      "9806f66b7970fdff8617187bb9fffdff"
      "5ae4df3edbd5d35e5b4f09020db03eab"
      "1e031dda2fbe03d1792170a0f3009cee");
  const aes::round_keys keys = aes::expand_key(key.data());
  bytes out(pt.size());
  aes::xor_ctr(keys, aes::host_tables(), iv.data(), 0, pt.data(), out.data(), pt.size());
  CHECK(out == ct);
  aes::xor_ctr(keys, aes::host_tables(), iv.data(), 0, ct.data(), out.data(), ct.size());
  CHECK(out == pt);

  // Block by block, last first, each from its own block_index.
  for (std::uint64_t b = 4; b-- > 0;)
    aes::xor_ctr(keys, aes::host_tables(), iv.data(), b, pt.data() + 16 * b, out.data() + 16 * b, 16);
  CHECK(out == ct);

  // ctr_block with the counter's two halves is the keystream: ciphertext XOR plaintext.
  std::uint8_t keystream[16];
  aes::ctr_block(keys, aes::host_tables(), 0xf0f1f2f3f4f5f6f7ull, 0xf8f9fafbfcfdff00ull, keystream);
  for (unsigned i = 0; i < 16; ++i) CHECK((keystream[i] ^ pt[16 + i]) == ct[16 + i]);
}

TEST_CASE("aes128.ecb_equals_openssl_and_round_trips") {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 64; ++trial) {
    const bytes key = random_bytes(rng, 16);
    const bytes pt = random_bytes(rng, 16 * (rng() % 64));
    const aes::round_keys keys = aes::expand_key(key.data());
    bytes ct(pt.size()), back(pt.size());
    aes::encrypt_ecb(keys, aes::host_tables(), pt.data(), ct.data(), pt.size());
    CHECK(ct == openssl_run(EVP_aes_128_ecb(), true, key, nullptr, pt));
    aes::decrypt_ecb(aes::expand_decrypt_key(key.data()), aes::host_tables(), ct.data(), back.data(),
                     ct.size());
    CHECK(back == pt);
    CHECK(back == openssl_run(EVP_aes_128_ecb(), false, key, nullptr, ct));
    CHECK(aes::invert_keys(keys).w[17] == aes::expand_decrypt_key(key.data()).w[17]);

    // The compact path agrees block for block.
    for (std::size_t at = 0; at < pt.size(); at += 16) {
      std::uint8_t block[16];
      aes::encrypt_block_compact(keys, aes::host_tables().sbox, pt.data() + at, block);
      CHECK(std::equal(block, block + 16, ct.begin() + at));
      aes::decrypt_block_compact(keys, aes::host_tables().inv_sbox, ct.data() + at, block);
      CHECK(std::equal(block, block + 16, pt.begin() + at));
    }
  }
}

TEST_CASE("aes128.ctr_equals_openssl_one_shot") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 64; ++trial) {
    const bytes key = random_bytes(rng, 16);
    const bytes iv = random_bytes(rng, 16);
    const bytes pt = random_bytes(rng, rng() % 1000);  // partial last blocks too
    const aes::round_keys keys = aes::expand_key(key.data());
    bytes ct(pt.size());
    aes::xor_ctr(keys, aes::host_tables(), iv.data(), 0, pt.data(), ct.data(), pt.size());
    CHECK(ct == openssl_run(EVP_aes_128_ctr(), true, key, iv.data(), pt));
    bytes back = ct;  // in place
    aes::xor_ctr(keys, aes::host_tables(), iv.data(), 0, back.data(), back.data(), back.size());
    CHECK(back == pt);
  }
}

TEST_CASE("aes128.ctr_shuffled_frames_equal_one_stream") {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 32; ++trial) {
    const bytes key = random_bytes(rng, 16);
    bytes iv = random_bytes(rng, 16);
    if (trial % 2 == 1) {  // low half a few blocks short of 2^64: the stream carries into the high half
      for (int i = 8; i < 16; ++i) iv[i] = 0xff;
      iv[15] = static_cast<std::uint8_t>(0xff - rng() % 8);
    }
    const bytes pt = random_bytes(rng, 16 * (1 + rng() % 200) + rng() % 16);
    const aes::round_keys keys = aes::expand_key(key.data());

    // Frames of whole blocks (the last takes the partial tail), processed in random order.
    struct frame {
      std::size_t first_block, block_count;
    };
    std::vector<frame> frames;
    const std::size_t total_blocks = (pt.size() + 15) / 16;
    for (std::size_t b = 0; b < total_blocks;) {
      const std::size_t n = std::min<std::size_t>(1 + rng() % 9, total_blocks - b);
      frames.push_back({b, n});
      b += n;
    }
    std::shuffle(frames.begin(), frames.end(), rng);
    bytes ct(pt.size());
    for (const frame& f : frames) {
      const std::size_t at = 16 * f.first_block;
      const std::size_t len = std::min(16 * f.block_count, pt.size() - at);
      aes::xor_ctr(keys, aes::host_tables(), iv.data(), f.first_block, pt.data() + at, ct.data() + at, len);
    }
    CHECK(ct == openssl_run(EVP_aes_128_ctr(), true, key, iv.data(), pt));
  }
}

TEST_CASE("aes128.ctr_counter_carries_across_128_bits") {
  std::mt19937_64 rng(99);
  const bytes key = random_bytes(rng, 16);
  const aes::round_keys keys = aes::expand_key(key.data());
  // Low half near 2^64 - 1 with block_index crossing it; and the whole counter near 2^128 - 1 (wraps to 0).
  const bytes ivs[] = {
      from_hex("0123456789abcdeffffffffffffffffd"), from_hex("00000000000000fffffffffffffffff0"),
      from_hex("fffffffffffffffffffffffffffffffe"), from_hex("ffffffffffffffff0000000000000000")};
  const std::uint64_t indices[] = {0, 1, 2, 3, 5, 17, 0xfffffffffffffff0ull, 0xffffffffffffffffull};
  for (const bytes& iv : ivs) {
    for (const std::uint64_t index : indices) {
      CAPTURE(index);
      const bytes pt = random_bytes(rng, 16 * 6 + 5);
      bytes ct(pt.size());
      aes::xor_ctr(keys, aes::host_tables(), iv.data(), index, pt.data(), ct.data(), pt.size());
      // OpenSSL from IV + index (an independent big-endian adder) increments across all 16 bytes.
      const bytes start = add_blocks(iv, index);
      CHECK(ct == openssl_run(EVP_aes_128_ctr(), true, key, start.data(), pt));
    }
  }
  // The one-shot OpenSSL stream across the carry equals frames started past it.
  const bytes iv = from_hex("a5a5a5a5a5a5a5a5fffffffffffffffe");
  const bytes pt = random_bytes(rng, 16 * 8);
  const bytes whole = openssl_run(EVP_aes_128_ctr(), true, key, iv.data(), pt);
  bytes ct(pt.size());
  for (std::uint64_t b = 8; b-- > 0;)
    aes::xor_ctr(keys, aes::host_tables(), iv.data(), b, pt.data() + 16 * b, ct.data() + 16 * b, 16);
  CHECK(ct == whole);
}
