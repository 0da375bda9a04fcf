// The encoding operators placed `on: cpu`: RAID-6 P+Q by ISA-L's pq_gen, RAID-6 recovery by ISA-L's
// erasure-code routines and AES-128 by OpenSSL's EVP (cpu_codecs.hpp), what a user would run on the CPU, so
// that one topology moves its encoding between the GPU and the CPU by one line. A build without ISA-L or
// OpenSSL returns null here, and the operators' own compute runs on the CPU threads instead (registry.hpp).
// Verify sinks replay these operators with the implementation that did not run (reference_chain.cpp): the
// library checks the GPU's compute, and the compute checks the library.
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "framework/model/registry.hpp"
#include "operators/encoding/aes128_ops.hpp"
#include "operators/encoding/raid6_encode.hpp"
#include "operators/encoding/raid6_recover.hpp"

#if XF_HAVE_CPU_CODECS
#include "operators/encoding/cpu_codecs.hpp"
#endif

namespace xf {

#if XF_HAVE_CPU_CODECS
namespace {

bool isal_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % cpu_codecs::isal_alignment == 0;
}

class raid6_encode_on_cpu final : public cpu_map {
 public:
  explicit raid6_encode_on_cpu(const raid6_encode_op::params& p) : p_(p) {}

  void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) override {
    out.bytes = raid6_encode_op::output_share(p_).of(in.bytes);
    const std::uint64_t stripe = std::uint64_t{p_.k} * p_.block_bytes;
    // Topic frames are page-aligned; a replay's scratch buffer may not be, and ISA-L's vector code needs
    // 32-byte alignment: there the operator's own compute gives the same bytes.
    if (in.bytes != stripe || !isal_aligned(in.data) || !isal_aligned(out.data)) {
      detail::run_frame_on_cpu<raid6_encode_op>(p_, in, &out, nullptr, offset);
      return;
    }
    const auto* data = reinterpret_cast<const std::uint8_t*>(in.data);
    auto* pq = reinterpret_cast<std::uint8_t*>(out.data);
    if (p_.out == raid6_encode_op::output::stripe) {
      std::memcpy(pq, data, stripe);
      pq += stripe;
    }
    cpu_codecs::isal_pq(data, p_.k, p_.block_bytes, pq, pq + p_.block_bytes);
  }

 private:
  raid6_encode_op::params p_;
};

class raid6_recover_on_cpu final : public cpu_map {
 public:
  explicit raid6_recover_on_cpu(const raid6_recover_op::params& p)
      : p_(p),
        recovery_(p.k, p.recovery.lost_count,
                  std::array<unsigned, 2>{p.recovery.lost[0], p.recovery.lost[1]}.data()) {}

  void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) override {
    out.bytes = in.bytes;
    const std::uint64_t stripe = std::uint64_t{p_.k + 2} * p_.block_bytes;
    if (in.bytes != stripe) {  // the compute fails the frame, naming why
      detail::run_frame_on_cpu<raid6_recover_op>(p_, in, &out, nullptr, offset);
      return;
    }
    std::memcpy(out.data, in.data, stripe);  // the survivors; the lost blocks are overwritten below
    auto* blocks = reinterpret_cast<std::uint8_t*>(out.data);
    std::uint8_t* const rebuilt[2] = {blocks + p_.recovery.lost[0] * p_.block_bytes,
                                      blocks + p_.recovery.lost[1] * p_.block_bytes};
    recovery_.run(reinterpret_cast<const std::uint8_t*>(in.data), p_.block_bytes, rebuilt);
  }

 private:
  raid6_recover_op::params p_;
  cpu_codecs::isal_raid6_recovery recovery_;
};

/// One EVP context per thread at work: contexts are not thread-safe, and a map's on_frame runs on all of
/// its threads at once. Idle contexts wait in a list (a lock per frame, far below a frame's cipher time).
template <bool Decrypt>
class aes128_on_cpu final : public cpu_map {
  using op = aes128_cipher<Decrypt>;

 public:
  explicit aes128_on_cpu(const typename op::params& p) : p_(p) {}

  void on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) override {
    out.bytes = in.bytes;
    if (p_.mode == aes_params::mode::ecb && in.bytes % aes::block_bytes != 0)
      throw frame_failed{op::partial_block};
    std::uint8_t counter[aes::block_bytes] = {};
    if (p_.mode == aes_params::mode::ctr)
      cpu_codecs::ctr_counter(p_.iv.bytes, offset * p_.frame_blocks, counter);
    std::unique_ptr<cpu_codecs::evp_aes128> cipher = take();
    cipher->run(reinterpret_cast<const std::uint8_t*>(in.data), reinterpret_cast<std::uint8_t*>(out.data),
                in.bytes, counter);
    give_back(std::move(cipher));
  }

 private:
  std::unique_ptr<cpu_codecs::evp_aes128> take() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        auto cipher = std::move(idle_.back());
        idle_.pop_back();
        return cipher;
      }
    }
    const std::uint8_t* key = p_.key.given ? p_.key.bytes : p_.key_file.bytes;
    return std::make_unique<cpu_codecs::evp_aes128>(
        key, p_.mode,
        Decrypt ? cpu_codecs::cipher_direction::decrypt : cpu_codecs::cipher_direction::encrypt);
  }
  void give_back(std::unique_ptr<cpu_codecs::evp_aes128> cipher) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(cipher));
  }

  typename op::params p_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<cpu_codecs::evp_aes128>> idle_;
};

}  // namespace

std::unique_ptr<cpu_map> raid6_encode_op::cpu_version(const params& p) {
  return std::make_unique<raid6_encode_on_cpu>(p);
}

std::unique_ptr<cpu_map> raid6_recover_op::cpu_version(const params& p) {
  return std::make_unique<raid6_recover_on_cpu>(p);
}

template <bool Decrypt>
std::unique_ptr<cpu_map> aes128_cipher<Decrypt>::cpu_version(const params& p) {
  return std::make_unique<aes128_on_cpu<Decrypt>>(p);
}

#else

std::unique_ptr<cpu_map> raid6_encode_op::cpu_version(const params&) {
  return nullptr;
}

std::unique_ptr<cpu_map> raid6_recover_op::cpu_version(const params&) {
  return nullptr;
}

template <bool Decrypt>
std::unique_ptr<cpu_map> aes128_cipher<Decrypt>::cpu_version(const params&) {
  return nullptr;
}

#endif

template std::unique_ptr<cpu_map> aes128_cipher<false>::cpu_version(const params&);
template std::unique_ptr<cpu_map> aes128_cipher<true>::cpu_version(const params&);

}  // namespace xf
