// cpu_codecs: the CPU libraries the encoding operators are measured and checked against — ISA-L's RAID-6
// P+Q and OpenSSL's AES-128 — behind thin wrappers that allocate nothing per call. Host only (g++); the
// library headers stay in cpu_codecs.cpp, so users need neither ISA-L's nor OpenSSL's include paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "operators/encoding/aes128_ops.hpp"

struct evp_cipher_ctx_st;  // OpenSSL's EVP_CIPHER_CTX (openssl/types.h), kept out of this header

namespace xf::cpu_codecs {

/// ISA-L's pq_gen vectorises over 32-byte lanes: every block must start on a 32-byte boundary and have a
/// length that is a multiple of 32 (isa-l/raid.h). xeflow's frames are 4 KiB aligned and RAID-6 blocks are
/// multiples of raid6::block_bytes_multiple (64), so this only guards misuse.
inline constexpr std::size_t isal_alignment = 32;

/// P and Q of the stripe whose k data blocks lie one after another at `stripe` (block i at
/// stripe + i·block_bytes), written to `p` and `q` (block_bytes each) by ISA-L's pq_gen in place: no copies,
/// the k + 2 block pointers live on the stack. Bit-identical to raid6::pq_word.
/// Throws std::invalid_argument when k is outside 2 … 255 (pq_gen needs two sources or more), block_bytes is
/// zero, not a multiple of 32 or above INT_MAX, or a pointer is null or not 32-byte aligned; and
/// std::runtime_error when pq_gen reports a failure. `p` and `q` must not overlap the stripe or each other.
/// Thread-safe: no state besides the arguments.
void isal_pq(const std::uint8_t* stripe, unsigned k, std::size_t block_bytes, std::uint8_t* p,
             std::uint8_t* q);

/// RAID-6 recovery by ISA-L's erasure-code routines: the P+Q generator (the identity for the data blocks, a
/// row of ones for P, 2^i in GF(2^8) modulo 0x11d for Q) restricted to k surviving blocks is inverted
/// (gf_invert_matrix), and the lost blocks' rows of the result are applied to the survivors by
/// ec_encode_data. Made once for a set of lost blocks; run() is thread-safe. Bit-identical to
/// raid6::recover_word.
class isal_raid6_recovery {
 public:
  /// `lost`: one or two distinct block indices in 0 … k + 1 (k is P, k + 1 is Q). Throws
  /// std::invalid_argument on a bad k or lost set.
  isal_raid6_recovery(unsigned k, unsigned lost_count, const unsigned lost[2]);
  /// `stripe`: k + 2 blocks of block_bytes (the lost ones are not read); rebuilt[j] receives lost block j.
  void run(const std::uint8_t* stripe, std::size_t block_bytes, std::uint8_t* const rebuilt[2]) const;

 private:
  unsigned k_ = 0, lost_count_ = 0;
  std::vector<unsigned> survivors_;    ///< the k blocks the lost ones are rebuilt from
  std::vector<unsigned char> tables_;  ///< ec_init_tables' expansion of the lost rows
};

/// The CTR counter block of 16-byte block `block_index` of the stream of `iv`: IV + block_index as a
/// 128-bit big-endian integer, wrapping modulo 2^128 — the counter aes::xor_ctr and OpenSSL's aes-128-ctr
/// use for that block. `out` may be `iv`.
void ctr_counter(const std::uint8_t iv[16], std::uint64_t block_index, std::uint8_t out[16]);

enum class cipher_direction { encrypt, decrypt };

/// OpenSSL's EVP AES-128 (ECB without padding, or CTR) with the key set once, processing one frame per
/// run() call. Owns its EVP_CIPHER_CTX: move-only. Not thread-safe: one object per thread.
class evp_aes128 {
 public:
  /// Throws std::runtime_error naming the EVP call that failed.
  evp_aes128(const std::uint8_t key[16], aes_params::mode mode, cipher_direction direction);
  ~evp_aes128();
  evp_aes128(evp_aes128&& other) noexcept;
  evp_aes128& operator=(evp_aes128&& other) noexcept;
  evp_aes128(const evp_aes128&) = delete;
  evp_aes128& operator=(const evp_aes128&) = delete;

  /// Encrypts or decrypts `bytes` bytes of `in` into `out` (`in == out` allowed; any alignment).
  /// ECB: `bytes` a multiple of 16, `counter` unused (may be null). CTR: the keystream starts at the counter
  /// block `counter` (ctr_counter gives a frame's); each call restarts from its own counter, so frames may
  /// come in any order, and only a stream's last frame may end inside a block.
  /// Throws std::invalid_argument on a bad length or a null counter in CTR, std::runtime_error naming the
  /// EVP call that failed.
  void run(const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, const std::uint8_t counter[16]);

  aes_params::mode mode() const noexcept { return mode_; }

 private:
  evp_cipher_ctx_st* ctx_ = nullptr;
  aes_params::mode mode_ = aes_params::mode::ctr;
};

/// "ISA-L 2.30.0" from the ISA-L headers this was built with, or "" where they carry no version.
std::string isal_version();
/// OpenSSL's own version line at run time (OpenSSL_version(OPENSSL_VERSION)), e.g. "OpenSSL 3.0.19 …".
std::string openssl_version();

}  // namespace xf::cpu_codecs
