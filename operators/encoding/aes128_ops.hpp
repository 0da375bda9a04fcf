// aes128_encrypt / aes128_decrypt: AES-128 over each frame's bytes on the GPU (operators/encoding/
// aes128.hpp), ECB or CTR. CTR's counter for block j of frame `offset` is IV + offset · (frame size / 16) +
// j: frames run in any order, on any block, and the stream equals one OpenSSL CTR stream over the frames laid
// end to end at the topic's frame size.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/encoding/aes128.hpp"

namespace xf {

namespace aes_params {

enum class mode : std::uint32_t { ecb, ctr };
/// 16 bytes given as 32 hexadecimal digits (a key or an IV); `given` is false for "".
struct block_text {
  std::uint8_t bytes[16] = {};
  bool given = false;
};

const char* parse_mode(const std::string& text, mode& out);
const char* parse_block(const std::string& text, block_text& out);
/// A key file: 16 raw bytes, or 32 hexadecimal digits (surrounding whitespace ignored).
std::string parse_key_file(const std::string& path, block_text& out);

}  // namespace aes_params

/// What encryption and decryption share: parameters, binding, and the walk over a frame's blocks.
template <bool Decrypt>
struct aes128_cipher {
  static constexpr element_set elements{element_type::u8};
  static constexpr std::uint32_t partial_block = 1;

  struct params {
    aes_params::mode mode = aes_params::mode::ctr;
    aes_params::block_text key, key_file, iv;
    // Bound from the above and the input topic (bind_input):
    std::uint64_t frame_blocks = 0;  ///< 16-byte blocks a frame of the input topic holds
    aes::round_keys encrypt_keys;
    aes::decrypt_round_keys decrypt_keys;
    aes::tables tables;  ///< read by every thread: the kernel's loads of them stay in L1
  };

  static void describe(operator_schema<params>& s) {
    s.describe(Decrypt ? "AES-128 decryption of each frame's bytes (ECB, or CTR: the counter continues "
                         "across frames), bit-identical to OpenSSL's EVP aes-128-ecb / aes-128-ctr"
                       : "AES-128 encryption of each frame's bytes (ECB, or CTR: the counter continues "
                         "across frames), bit-identical to OpenSSL's EVP aes-128-ecb / aes-128-ctr");
    s.parsed(&params::mode, "mode", "ecb (frames of whole 16-byte blocks) or ctr", "ctr",
             aes_params::parse_mode);
    s.parsed(&params::key, "key", "the key: 32 hexadecimal digits (or key_file)", "",
             aes_params::parse_block);
    s.parsed(&params::key_file, "key_file", "a file holding the key: 16 bytes, or 32 hexadecimal digits", "",
             aes_params::parse_key_file);
    s.parsed(&params::iv, "iv", "CTR's initial counter block: 32 hexadecimal digits (default zero)", "",
             aes_params::parse_block);
  }

  /// One key, from `key` or `key_file`; the schedules, tables and the frame's block count made once.
  static std::optional<param_problem> bind_input(params& p, const topic_info& input) {
    if (p.key.given == p.key_file.given)
      return param_problem{
          "key", p.key.given ? "give the key or a key_file, not both" : "give the key (or a key_file)"};
    const std::uint8_t* key = p.key.given ? p.key.bytes : p.key_file.bytes;
    p.encrypt_keys = aes::expand_key(key);
    p.decrypt_keys = aes::invert_keys(p.encrypt_keys);
    p.tables = aes::host_tables();
    p.frame_blocks = input.frame_bytes / aes::block_bytes;
    return std::nullopt;
  }

  /// Placed `on: cpu`: OpenSSL's EVP (cpu_versions.cpp), or null where the build has no OpenSSL.
  static std::unique_ptr<cpu_map> cpu_version(const params& p);

  static const char* failure_reason(std::uint32_t code) {
    return code == partial_block
               ? "ECB takes whole 16-byte blocks, and the frame's bytes are not a multiple of 16"
               : nullptr;
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const std::uint64_t bytes = task.count * sizeof(T);
    const auto* in = reinterpret_cast<const std::uint8_t*>(task.in);
    auto* out = reinterpret_cast<std::uint8_t*>(task.out);
    const std::uint64_t blocks = (bytes + aes::block_bytes - 1) / aes::block_bytes;
    if (p.mode == aes_params::mode::ecb) {
      if (bytes % aes::block_bytes != 0) {
        task.fail(partial_block);
        return;
      }
      for (std::uint64_t b = task.thread_id; b < blocks; b += task.thread_count) {
        if constexpr (Decrypt)
          aes::decrypt_block(p.decrypt_keys, p.tables, in + b * aes::block_bytes, out + b * aes::block_bytes);
        else
          aes::encrypt_block(p.encrypt_keys, p.tables, in + b * aes::block_bytes, out + b * aes::block_bytes);
      }
      return;
    }
    // CTR: the same keystream both ways. This item's first block within the stream (a part of a frame
    // starts first · sizeof(T) bytes in, a multiple of 16).
    const std::uint64_t first_block =
        task.offset * p.frame_blocks + task.first * sizeof(T) / aes::block_bytes;
    for (std::uint64_t b = task.thread_id; b < blocks; b += task.thread_count) {
      const std::uint64_t at = b * aes::block_bytes;
      const std::uint64_t n = bytes - at < aes::block_bytes ? bytes - at : aes::block_bytes;
      aes::xor_ctr(p.encrypt_keys, p.tables, p.iv.bytes, first_block + b, in + at, out + at, n);
    }
  }
};

struct aes128_encrypt_op : aes128_cipher<false> {
  static constexpr char class_name[] = "aes128_encrypt";
};
struct aes128_decrypt_op : aes128_cipher<true> {
  static constexpr char class_name[] = "aes128_decrypt";
};

}  // namespace xf
