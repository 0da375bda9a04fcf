// aes128: the AES-128 block cipher (FIPS-197) with ECB and CTR helpers, header-only and shared by host and
// device code, so that a GPU operator and its host reference compute the same bytes.
//
// The fast path is the classic T-table formulation (each round of a column is four table loads and XORs).
// The tables are data the caller places: `make_tables()` computes them at compile time from GF(2^8)
// arithmetic, host code reads `host_tables()`, and a kernel passes whichever copy it placed: the GPU
// operators read the one in their parameters (device memory, kept in L1 by the loads of every thread).
// bench/encoding_kernels measured that against copies in shared memory and the S-box-only cipher on an
// H200: shared copies are 6-49 % faster, but every form computes at 150+ GB/s, several times what the link
// carries, so the operators keep the form that needs no shared memory of their own. Nothing here
// allocates, throws or touches std:: containers.
//
// Word convention (that of FIPS-197 and OpenSSL's reference code): a 32-bit word is four consecutive bytes
// read big-endian, so a 16-byte block is the words s0..s3 = columns 0..3 of the state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "operators/encoding/gf256.hpp"

namespace xf::aes {

inline constexpr unsigned block_bytes = 16;
inline constexpr unsigned key_bytes = 16;
inline constexpr unsigned rounds = 10;
inline constexpr unsigned schedule_words = 4 * (rounds + 1);

/// The encryption key schedule of FIPS-197 §5.2: w[4r .. 4r+3] is round r's key, big-endian words.
/// Trivially copyable: kernels take it by value or from device memory.
struct round_keys {
  std::uint32_t w[schedule_words];
};

/// The key schedule of the equivalent inverse cipher (FIPS-197 §5.3.5): the encryption round keys in reverse
/// round order with InvMixColumns applied to rounds 1..9. A type of its own so that passing encryption keys
/// to the T-table decryption (or the reverse) does not compile; the compact S-box-only path decrypts with
/// the plain `round_keys` instead.
struct decrypt_round_keys {
  std::uint32_t w[schedule_words];
};

/// The lookup tables of the T-table cipher. te[k][x] is the MixColumns column of S[x] placed in byte
/// position k (te[k] = te[0] rotated right by 8k bits); td likewise for InvMixColumns of InvS[x].
/// Read-only once built; any number of threads may share one instance.
struct tables {
  std::uint32_t te[4][256];
  std::uint32_t td[4][256];
  std::uint8_t sbox[256];
  std::uint8_t inv_sbox[256];
};

static_assert(std::is_trivially_copyable_v<round_keys>);
static_assert(std::is_trivially_copyable_v<decrypt_round_keys>);
static_assert(std::is_trivially_copyable_v<tables>);

namespace detail {

// GF(2^8) modulo the AES polynomial x^8 + x^4 + x^3 + x + 1 (0x11b).
XF_HOST_DEVICE constexpr std::uint8_t xtime(std::uint8_t b) {
  return gf256::mul2<gf256::aes_poly>(b);
}
XF_HOST_DEVICE constexpr std::uint8_t gf_mul(std::uint8_t a, std::uint8_t b) {
  return gf256::mul<gf256::aes_poly>(a, b);
}
/// a^-1 (and 0 for 0, as the S-box definition wants).
XF_HOST_DEVICE constexpr std::uint8_t gf_inverse(std::uint8_t a) {
  return gf256::inv<gf256::aes_poly>(a);
}

XF_HOST_DEVICE constexpr std::uint8_t rotl8(std::uint8_t b, unsigned n) {
  return static_cast<std::uint8_t>((b << n) | (b >> (8 - n)));
}

/// SubBytes of one byte from its definition (FIPS-197 §5.1.1): the affine map of the inverse. Table-free,
/// so the key schedule needs no tables (and runs in constant expressions); ~100 GF steps a byte.
XF_HOST_DEVICE constexpr std::uint8_t sub_byte(std::uint8_t x) {
  const std::uint8_t b = gf_inverse(x);
  return static_cast<std::uint8_t>(b ^ rotl8(b, 1) ^ rotl8(b, 2) ^ rotl8(b, 3) ^ rotl8(b, 4) ^ 0x63);
}

XF_HOST_DEVICE constexpr std::uint32_t rotr32(std::uint32_t w, unsigned n) {
  return n == 0 ? w : (w >> n) | (w << (32 - n));
}

XF_HOST_DEVICE constexpr std::uint32_t pack(std::uint8_t b0, std::uint8_t b1, std::uint8_t b2,
                                            std::uint8_t b3) {
  return (std::uint32_t{b0} << 24) | (std::uint32_t{b1} << 16) | (std::uint32_t{b2} << 8) | std::uint32_t{b3};
}

XF_HOST_DEVICE constexpr std::uint8_t byte_of(std::uint32_t w, unsigned k) {  // k = 0: most significant
  return static_cast<std::uint8_t>(w >> (24 - 8 * k));
}

XF_HOST_DEVICE constexpr std::uint32_t sub_word(std::uint32_t w) {
  return pack(sub_byte(byte_of(w, 0)), sub_byte(byte_of(w, 1)), sub_byte(byte_of(w, 2)),
              sub_byte(byte_of(w, 3)));
}

/// InvMixColumns of one column (FIPS-197 §5.3.3), for the equivalent inverse cipher's schedule.
XF_HOST_DEVICE constexpr std::uint32_t inv_mix_column(std::uint32_t w) {
  const std::uint8_t a0 = byte_of(w, 0), a1 = byte_of(w, 1), a2 = byte_of(w, 2), a3 = byte_of(w, 3);
  auto row = [](std::uint8_t x0, std::uint8_t x1, std::uint8_t x2, std::uint8_t x3) {
    return static_cast<std::uint8_t>(gf_mul(x0, 0x0e) ^ gf_mul(x1, 0x0b) ^ gf_mul(x2, 0x0d) ^
                                     gf_mul(x3, 0x09));
  };
  return pack(row(a0, a1, a2, a3), row(a1, a2, a3, a0), row(a2, a3, a0, a1), row(a3, a0, a1, a2));
}

// Byte-wise loads and stores: the buffers have any alignment, and the byte order is fixed by AES, not by
// the machine.
XF_HOST_DEVICE XF_FORCE_INLINE std::uint32_t load_be32(const std::uint8_t* p) {
  return pack(p[0], p[1], p[2], p[3]);
}

XF_HOST_DEVICE XF_FORCE_INLINE void store_be32(std::uint8_t* p, std::uint32_t w) {
  p[0] = byte_of(w, 0);
  p[1] = byte_of(w, 1);
  p[2] = byte_of(w, 2);
  p[3] = byte_of(w, 3);
}

/// The T-table rounds over the state s[0..3] (big-endian columns), in place: encryption with te and the
/// S-box, or decryption by the equivalent inverse cipher with td and the inverse S-box — the same rounds
/// with the rows shifted the other way: byte j of column c comes from column c + j, or c − j.
template <bool Decrypt>
XF_HOST_DEVICE XF_FORCE_INLINE void cipher_words(const std::uint32_t* rk, const std::uint32_t (&tt)[4][256],
                                                 const std::uint8_t* last_box, std::uint32_t s[4]) {
  constexpr unsigned shift = Decrypt ? 3 : 1;  // column c + j·shift (mod 4) feeds byte j of column c
  std::uint32_t x[4], y[4];
  XF_UNROLL
  for (unsigned c = 0; c < 4; ++c) x[c] = s[c] ^ rk[c];
  // Rounds 1..9: SubBytes, ShiftRows (the rotated operand order) and MixColumns in the tables.
  XF_UNROLL
  for (unsigned r = 1; r < rounds; ++r) {
    rk += 4;
    XF_UNROLL
    for (unsigned c = 0; c < 4; ++c)
      y[c] = tt[0][x[c] >> 24] ^ tt[1][(x[(c + shift) % 4] >> 16) & 0xff] ^
             tt[2][(x[(c + 2 * shift) % 4] >> 8) & 0xff] ^ tt[3][x[(c + 3 * shift) % 4] & 0xff] ^ rk[c];
    XF_UNROLL
    for (unsigned c = 0; c < 4; ++c) x[c] = y[c];
  }
  // The last round has no MixColumns: the plain S-box.
  rk += 4;
  XF_UNROLL
  for (unsigned c = 0; c < 4; ++c)
    s[c] = pack(last_box[x[c] >> 24], last_box[(x[(c + shift) % 4] >> 16) & 0xff],
                last_box[(x[(c + 2 * shift) % 4] >> 8) & 0xff], last_box[x[(c + 3 * shift) % 4] & 0xff]) ^
           rk[c];
}

XF_HOST_DEVICE XF_FORCE_INLINE void encrypt_words(const round_keys& keys, const tables& t,
                                                  std::uint32_t s[4]) {
  cipher_words<false>(keys.w, t.te, t.sbox, s);
}

XF_HOST_DEVICE XF_FORCE_INLINE void decrypt_words(const decrypt_round_keys& keys, const tables& t,
                                                  std::uint32_t s[4]) {
  cipher_words<true>(keys.w, t.td, t.inv_sbox, s);
}

}  // namespace detail

/// Builds the T-tables and S-boxes from GF(2^8) arithmetic. Meant for constant evaluation (host_tables()),
/// but callable anywhere; the result is 8.5 KiB, so a kernel should rather receive a copy than build one.
XF_HOST_DEVICE constexpr tables make_tables() {
  tables t{};
  for (unsigned x = 0; x < 256; ++x) {
    const std::uint8_t s = detail::sub_byte(static_cast<std::uint8_t>(x));
    t.sbox[x] = s;
    t.inv_sbox[s] = static_cast<std::uint8_t>(x);
  }
  for (unsigned x = 0; x < 256; ++x) {
    const std::uint8_t s = t.sbox[x];
    const std::uint32_t te0 =
        detail::pack(detail::xtime(s), s, s, static_cast<std::uint8_t>(detail::xtime(s) ^ s));
    const std::uint8_t v = t.inv_sbox[x];
    const std::uint32_t td0 = detail::pack(detail::gf_mul(v, 0x0e), detail::gf_mul(v, 0x09),
                                           detail::gf_mul(v, 0x0d), detail::gf_mul(v, 0x0b));
    for (unsigned k = 0; k < 4; ++k) {
      t.te[k][x] = detail::rotr32(te0, 8 * k);
      t.td[k][x] = detail::rotr32(td0, 8 * k);
    }
  }
  return t;
}

/// The tables for host code: evaluated at compile time, so no initialisation runs and any thread may read
/// them at any time. To give a kernel the tables, copy this object to device memory.
inline const tables& host_tables() {
  static constexpr tables instance = make_tables();
  return instance;
}

/// The AES-128 key expansion (FIPS-197 §5.2). Table-free (the S-box is computed per byte), hence usable in
/// constant expressions and on the device without tables; it costs a few tens of thousands of simple
/// operations, so expand a key once, on the host, and hand the round keys to kernels.
XF_HOST_DEVICE constexpr round_keys expand_key(const std::uint8_t key[key_bytes]) {
  round_keys k{};
  for (unsigned i = 0; i < 4; ++i)
    k.w[i] = detail::pack(key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]);
  std::uint8_t rcon = 0x01;
  for (unsigned i = 4; i < schedule_words; ++i) {
    std::uint32_t temp = k.w[i - 1];
    if (i % 4 == 0) {
      temp = detail::sub_word(detail::rotr32(temp, 24)) ^ (std::uint32_t{rcon} << 24);  // RotWord = rotl 8
      rcon = detail::xtime(rcon);
    }
    k.w[i] = k.w[i - 4] ^ temp;
  }
  return k;
}

/// The equivalent inverse cipher's schedule from the encryption schedule (FIPS-197 §5.3.5).
XF_HOST_DEVICE constexpr decrypt_round_keys invert_keys(const round_keys& enc) {
  decrypt_round_keys d{};
  for (unsigned r = 0; r <= rounds; ++r) {
    for (unsigned c = 0; c < 4; ++c) {
      const std::uint32_t w = enc.w[4 * (rounds - r) + c];
      d.w[4 * r + c] = (r == 0 || r == rounds) ? w : detail::inv_mix_column(w);
    }
  }
  return d;
}

/// The decryption schedule of `key` for decrypt_block / decrypt_ecb.
XF_HOST_DEVICE constexpr decrypt_round_keys expand_decrypt_key(const std::uint8_t key[key_bytes]) {
  return invert_keys(expand_key(key));
}

/// Encrypts one 16-byte block; `in` and `out` may be the same buffer, with any alignment.
XF_HOST_DEVICE XF_FORCE_INLINE void encrypt_block(const round_keys& keys, const tables& t,
                                                  const std::uint8_t in[block_bytes],
                                                  std::uint8_t out[block_bytes]) {
  std::uint32_t s[4] = {detail::load_be32(in), detail::load_be32(in + 4), detail::load_be32(in + 8),
                        detail::load_be32(in + 12)};
  detail::encrypt_words(keys, t, s);
  XF_UNROLL
  for (unsigned c = 0; c < 4; ++c) detail::store_be32(out + 4 * c, s[c]);
}

/// Decrypts one 16-byte block; `in` and `out` may be the same buffer, with any alignment.
XF_HOST_DEVICE XF_FORCE_INLINE void decrypt_block(const decrypt_round_keys& keys, const tables& t,
                                                  const std::uint8_t in[block_bytes],
                                                  std::uint8_t out[block_bytes]) {
  std::uint32_t s[4] = {detail::load_be32(in), detail::load_be32(in + 4), detail::load_be32(in + 8),
                        detail::load_be32(in + 12)};
  detail::decrypt_words(keys, t, s);
  XF_UNROLL
  for (unsigned c = 0; c < 4; ++c) detail::store_be32(out + 4 * c, s[c]);
}

/// ECB over whole blocks: `bytes` must be a multiple of 16 (a trailing partial block is left untouched;
/// callers check the length, since device code cannot report it). `in == out` is allowed.
XF_HOST_DEVICE inline void encrypt_ecb(const round_keys& keys, const tables& t, const std::uint8_t* in,
                                       std::uint8_t* out, std::size_t bytes) {
  for (std::size_t at = 0; at + block_bytes <= bytes; at += block_bytes)
    encrypt_block(keys, t, in + at, out + at);
}

XF_HOST_DEVICE inline void decrypt_ecb(const decrypt_round_keys& keys, const tables& t,
                                       const std::uint8_t* in, std::uint8_t* out, std::size_t bytes) {
  for (std::size_t at = 0; at + block_bytes <= bytes; at += block_bytes)
    decrypt_block(keys, t, in + at, out + at);
}

/// The CTR keystream block for the 128-bit counter (counter_hi:counter_lo), i.e. the encryption of the
/// counter's 16 big-endian bytes — the counter block of OpenSSL's EVP_aes_128_ctr.
XF_HOST_DEVICE XF_FORCE_INLINE void ctr_block(const round_keys& keys, const tables& t,
                                              std::uint64_t counter_hi, std::uint64_t counter_lo,
                                              std::uint8_t keystream[block_bytes]) {
  std::uint32_t s[4] = {static_cast<std::uint32_t>(counter_hi >> 32), static_cast<std::uint32_t>(counter_hi),
                        static_cast<std::uint32_t>(counter_lo >> 32), static_cast<std::uint32_t>(counter_lo)};
  detail::encrypt_words(keys, t, s);
  XF_UNROLL
  for (unsigned c = 0; c < 4; ++c) detail::store_be32(keystream + 4 * c, s[c]);
}

/// CTR encryption (= decryption) of `bytes` bytes that start `block_index` blocks into the stream of `iv`:
/// block j of the call uses the counter IV + block_index + j, a 128-bit big-endian sum that carries across
/// all 16 bytes and wraps modulo 2^128, as OpenSSL does. So frames of whole blocks may be processed in any
/// order, by any threads, and together equal one EVP_aes_128_ctr pass over their concatenation; only the
/// stream's last call may end in a partial block. `in == out` is allowed; any alignment.
XF_HOST_DEVICE inline void xor_ctr(const round_keys& keys, const tables& t,
                                   const std::uint8_t iv[block_bytes], std::uint64_t block_index,
                                   const std::uint8_t* in, std::uint8_t* out, std::size_t bytes) {
  std::uint64_t hi = (std::uint64_t{detail::load_be32(iv)} << 32) | detail::load_be32(iv + 4);
  std::uint64_t lo = (std::uint64_t{detail::load_be32(iv + 8)} << 32) | detail::load_be32(iv + 12);
  lo += block_index;
  if (lo < block_index) ++hi;  // carry out of the low half
  std::size_t at = 0;
  // Whole blocks: the keystream stays in registers and meets the input a word at a time (a keystream
  // array and a byte loop put 32 more memory accesses in every block, and the array in local memory).
  for (; at + block_bytes <= bytes; at += block_bytes) {
    std::uint32_t s[4] = {static_cast<std::uint32_t>(hi >> 32), static_cast<std::uint32_t>(hi),
                          static_cast<std::uint32_t>(lo >> 32), static_cast<std::uint32_t>(lo)};
    detail::encrypt_words(keys, t, s);
    XF_UNROLL
    for (unsigned c = 0; c < 4; ++c)
      detail::store_be32(out + at + 4 * c, detail::load_be32(in + at + 4 * c) ^ s[c]);
    if (++lo == 0) ++hi;
  }
  if (at < bytes) {  // the stream's last, partial block
    std::uint8_t keystream[block_bytes];
    ctr_block(keys, t, hi, lo, keystream);
    for (std::size_t i = 0; at + i < bytes; ++i)
      out[at + i] = static_cast<std::uint8_t>(in[at + i] ^ keystream[i]);
  }
}

/// The compact cipher: FIPS-197's round functions straight from the definition, reading only a 256-byte
/// S-box (`tables::sbox`, or a copy of it in shared memory) — for callers short of shared memory, and an
/// independent check of the T-table path. Several times slower than encrypt_block.
XF_HOST_DEVICE inline void encrypt_block_compact(const round_keys& keys, const std::uint8_t sbox[256],
                                                 const std::uint8_t in[block_bytes],
                                                 std::uint8_t out[block_bytes]) {
  std::uint8_t s[block_bytes];  // s[4c + r]: row r of column c, as in FIPS-197 §3.4
  for (unsigned c = 0; c < 4; ++c) detail::store_be32(s + 4 * c, detail::load_be32(in + 4 * c) ^ keys.w[c]);
  for (unsigned r = 1; r <= rounds; ++r) {
    std::uint8_t u[block_bytes];
    // SubBytes and ShiftRows: row `row` of column c comes from column c + row.
    for (unsigned c = 0; c < 4; ++c)
      for (unsigned row = 0; row < 4; ++row) u[4 * c + row] = sbox[s[4 * ((c + row) % 4) + row]];
    for (unsigned c = 0; c < 4; ++c) {
      std::uint8_t* col = u + 4 * c;
      std::uint32_t w = detail::load_be32(col);
      if (r != rounds) {  // MixColumns: {02}a0 ^ {03}a1 ^ a2 ^ a3 and its rotations
        const std::uint8_t a0 = col[0], a1 = col[1], a2 = col[2], a3 = col[3];
        w = detail::pack(static_cast<std::uint8_t>(detail::xtime(a0) ^ detail::xtime(a1) ^ a1 ^ a2 ^ a3),
                         static_cast<std::uint8_t>(a0 ^ detail::xtime(a1) ^ detail::xtime(a2) ^ a2 ^ a3),
                         static_cast<std::uint8_t>(a0 ^ a1 ^ detail::xtime(a2) ^ detail::xtime(a3) ^ a3),
                         static_cast<std::uint8_t>(detail::xtime(a0) ^ a0 ^ a1 ^ a2 ^ detail::xtime(a3)));
      }
      detail::store_be32(s + 4 * c, w ^ keys.w[4 * r + c]);
    }
  }
  for (unsigned i = 0; i < block_bytes; ++i) out[i] = s[i];
}

/// The compact inverse cipher (FIPS-197 §5.3, not the equivalent one): takes the encryption schedule and
/// only the inverse S-box.
XF_HOST_DEVICE inline void decrypt_block_compact(const round_keys& keys, const std::uint8_t inv_sbox[256],
                                                 const std::uint8_t in[block_bytes],
                                                 std::uint8_t out[block_bytes]) {
  std::uint8_t s[block_bytes];
  for (unsigned c = 0; c < 4; ++c)
    detail::store_be32(s + 4 * c, detail::load_be32(in + 4 * c) ^ keys.w[4 * rounds + c]);
  for (unsigned r = rounds; r-- > 0;) {
    std::uint8_t u[block_bytes];
    // InvShiftRows and InvSubBytes: row `row` of column c comes from column c - row.
    for (unsigned c = 0; c < 4; ++c)
      for (unsigned row = 0; row < 4; ++row) u[4 * c + row] = inv_sbox[s[4 * ((c + 4 - row) % 4) + row]];
    for (unsigned c = 0; c < 4; ++c) {
      std::uint32_t w = detail::load_be32(u + 4 * c) ^ keys.w[4 * r + c];
      if (r != 0) w = detail::inv_mix_column(w);
      detail::store_be32(s + 4 * c, w);
    }
  }
  for (unsigned i = 0; i < block_bytes; ++i) out[i] = s[i];
}

}  // namespace xf::aes
