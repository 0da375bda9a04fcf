// The ISA-L and OpenSSL calls behind cpu_codecs.hpp, with every precondition the libraries leave to their
// callers checked here, and every return value read.
#include "operators/encoding/cpu_codecs.hpp"

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#if __has_include(<isa-l.h>)
#include <isa-l.h>
#endif

#include <climits>
#include <stdexcept>
#include <utility>

#include "operators/encoding/raid6.hpp"

namespace xf::cpu_codecs {

namespace {

bool isal_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % isal_alignment == 0;
}

/// Throws std::runtime_error naming `call` unless EVP returned 1 (its success value).
void check_evp(int result, const char* call) {
  if (result != 1) throw std::runtime_error(std::string("OpenSSL's ") + call + " failed");
}

}  // namespace

void isal_pq(const std::uint8_t* stripe, unsigned k, std::size_t block_bytes, std::uint8_t* p,
             std::uint8_t* q) {
  if (k < 2 || k > raid6::max_data_blocks)
    throw std::invalid_argument("isal_pq: k = " + std::to_string(k) +
                                ", but ISA-L's pq_gen takes 2 to 255 data blocks");
  if (block_bytes == 0 || block_bytes % isal_alignment != 0 || block_bytes > INT_MAX)
    throw std::invalid_argument("isal_pq: block_bytes = " + std::to_string(block_bytes) +
                                ", but ISA-L's pq_gen takes a positive multiple of 32 up to INT_MAX");
  if (stripe == nullptr || p == nullptr || q == nullptr)
    throw std::invalid_argument("isal_pq: a null stripe, P or Q pointer");
  if (!isal_aligned(stripe) || !isal_aligned(p) || !isal_aligned(q))
    throw std::invalid_argument("isal_pq: the stripe, P and Q must start on 32-byte boundaries for ISA-L");
  // pq_gen reads the first k pointers and writes the last two; it takes them as void* all the same.
  void* blocks[raid6::max_data_blocks + 2];
  for (unsigned i = 0; i < k; ++i) blocks[i] = const_cast<std::uint8_t*>(stripe + i * block_bytes);
  blocks[k] = p;
  blocks[k + 1] = q;
  if (::pq_gen(static_cast<int>(k + 2), static_cast<int>(block_bytes), blocks) != 0)
    throw std::runtime_error("ISA-L's pq_gen failed on a stripe of " + std::to_string(k) + " blocks of " +
                             std::to_string(block_bytes) + " bytes");
}

isal_raid6_recovery::isal_raid6_recovery(unsigned k, unsigned lost_count, const unsigned lost[2])
    : k_(k), lost_count_(lost_count) {
  if (k < 2 || k > raid6::max_data_blocks)
    throw std::invalid_argument("isal_raid6_recovery: k = " + std::to_string(k) + ", not 2 to 255");
  if (lost_count < 1 || lost_count > 2 || lost[0] > k + 1 ||
      (lost_count == 2 && (lost[1] > k + 1 || lost[0] == lost[1])))
    throw std::invalid_argument("isal_raid6_recovery: one or two distinct lost blocks of 0 … k + 1");
  auto is_lost = [&](unsigned b) { return b == lost[0] || (lost_count == 2 && b == lost[1]); };
  // Row b of the generator: what block b is as a combination of the k data blocks.
  auto generator_row = [&](unsigned b, unsigned char* row) {
    unsigned char power = 1;  // 2^i
    for (unsigned i = 0; i < k; ++i) {
      row[i] = b < k ? static_cast<unsigned char>(b == i) : b == k ? 1 : power;
      power = ::gf_mul(power, 2);
    }
  };
  for (unsigned b = 0; b < k + 2 && survivors_.size() < k; ++b)
    if (!is_lost(b)) survivors_.push_back(b);
  std::vector<unsigned char> survivors_rows(std::size_t{k} * k), inverse(std::size_t{k} * k);
  for (unsigned r = 0; r < k; ++r) generator_row(survivors_[r], &survivors_rows[std::size_t{r} * k]);
  if (::gf_invert_matrix(survivors_rows.data(), inverse.data(), static_cast<int>(k)) != 0)
    throw std::logic_error("isal_raid6_recovery: k survivors of a RAID-6 stripe always determine it");
  // Lost block j = generator_row(j) · data = generator_row(j) · inverse · survivors.
  std::vector<unsigned char> coefficients(std::size_t{lost_count} * k, 0), row(k);
  for (unsigned j = 0; j < lost_count; ++j) {
    generator_row(lost[j], row.data());
    for (unsigned i = 0; i < k; ++i)
      for (unsigned s = 0; s < k; ++s)
        coefficients[std::size_t{j} * k + s] ^= ::gf_mul(row[i], inverse[std::size_t{i} * k + s]);
  }
  tables_.resize(std::size_t{32} * k * lost_count);
  ::ec_init_tables(static_cast<int>(k), static_cast<int>(lost_count), coefficients.data(), tables_.data());
}

void isal_raid6_recovery::run(const std::uint8_t* stripe, std::size_t block_bytes,
                              std::uint8_t* const rebuilt[2]) const {
  if (block_bytes == 0 || block_bytes > INT_MAX)
    throw std::invalid_argument("isal_raid6_recovery: block_bytes must be 1 to INT_MAX");
  unsigned char* sources[raid6::max_data_blocks];
  for (unsigned s = 0; s < k_; ++s)
    sources[s] = const_cast<unsigned char*>(stripe + std::size_t{survivors_[s]} * block_bytes);
  unsigned char* outputs[2] = {rebuilt[0], lost_count_ == 2 ? rebuilt[1] : nullptr};
  ::ec_encode_data(static_cast<int>(block_bytes), static_cast<int>(k_), static_cast<int>(lost_count_),
                   const_cast<unsigned char*>(tables_.data()), sources, outputs);
}

void ctr_counter(const std::uint8_t iv[16], std::uint64_t block_index, std::uint8_t out[16]) {
  // Byte by byte from the least significant end; past the low 8 bytes only the carry remains.
  unsigned carry = 0;
  for (int i = 15; i >= 0; --i) {
    const unsigned sum = iv[i] + static_cast<unsigned>(block_index & 0xff) + carry;
    out[i] = static_cast<std::uint8_t>(sum);
    carry = sum >> 8;
    block_index >>= 8;
  }
}

evp_aes128::evp_aes128(const std::uint8_t key[16], aes_params::mode mode, cipher_direction direction)
    : ctx_(EVP_CIPHER_CTX_new()), mode_(mode) {
  if (ctx_ == nullptr) throw std::runtime_error("OpenSSL's EVP_CIPHER_CTX_new failed");
  try {
    const EVP_CIPHER* cipher = mode == aes_params::mode::ecb ? EVP_aes_128_ecb() : EVP_aes_128_ctr();
    // CTR's IV is set per run(); a zero one here only completes the initialisation.
    const std::uint8_t zero_iv[16] = {};
    check_evp(EVP_CipherInit_ex(ctx_, cipher, nullptr, key, mode == aes_params::mode::ctr ? zero_iv : nullptr,
                                direction == cipher_direction::encrypt ? 1 : 0),
              "EVP_CipherInit_ex");
    // ECB frames are whole blocks: no padding added, none expected or withheld on decryption.
    check_evp(EVP_CIPHER_CTX_set_padding(ctx_, 0), "EVP_CIPHER_CTX_set_padding");
  } catch (...) {
    EVP_CIPHER_CTX_free(ctx_);
    throw;
  }
}

evp_aes128::~evp_aes128() {
  EVP_CIPHER_CTX_free(ctx_);  // accepts null (a moved-from object)
}

evp_aes128::evp_aes128(evp_aes128&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)), mode_(other.mode_) {}

evp_aes128& evp_aes128::operator=(evp_aes128&& other) noexcept {
  if (this != &other) {
    EVP_CIPHER_CTX_free(ctx_);
    ctx_ = std::exchange(other.ctx_, nullptr);
    mode_ = other.mode_;
  }
  return *this;
}

void evp_aes128::run(const std::uint8_t* in, std::uint8_t* out, std::size_t bytes,
                     const std::uint8_t counter[16]) {
  if (ctx_ == nullptr) throw std::invalid_argument("evp_aes128::run on a moved-from cipher");
  if (bytes > INT_MAX)
    throw std::invalid_argument("evp_aes128::run: " + std::to_string(bytes) +
                                " bytes in one call, but EVP_CipherUpdate counts in int");
  if (mode_ == aes_params::mode::ecb) {
    if (bytes % aes::block_bytes != 0)
      throw std::invalid_argument("evp_aes128::run: ECB takes whole 16-byte blocks, and " +
                                  std::to_string(bytes) + " bytes is not a multiple of 16");
  } else {
    if (counter == nullptr) throw std::invalid_argument("evp_aes128::run: CTR needs a counter block");
    // New IV only (no cipher, no key: the key schedule stays), -1 keeps the direction; this also drops
    // the previous call's unused keystream bytes, so each frame starts on its own counter.
    check_evp(EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, counter, -1), "EVP_CipherInit_ex");
  }
  int written = 0;
  check_evp(EVP_CipherUpdate(ctx_, out, &written, in, static_cast<int>(bytes)), "EVP_CipherUpdate");
  // ECB without padding and CTR emit every byte from Update (EVP_CipherFinal_ex would add none), so a short
  // count is a library surprise, not a state to carry.
  if (static_cast<std::size_t>(written) != bytes)
    throw std::runtime_error("OpenSSL's EVP_CipherUpdate wrote " + std::to_string(written) + " of " +
                             std::to_string(bytes) + " bytes");
}

std::string isal_version() {
#ifdef ISAL_MAJOR_VERSION
  return "ISA-L " + std::to_string(ISAL_MAJOR_VERSION) + "." + std::to_string(ISAL_MINOR_VERSION) + "." +
         std::to_string(ISAL_PATCH_VERSION);
#else
  return "";
#endif
}

std::string openssl_version() {
  return OpenSSL_version(OPENSSL_VERSION);
}

}  // namespace xf::cpu_codecs
