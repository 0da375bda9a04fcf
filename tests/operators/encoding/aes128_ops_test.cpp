// aes128_encrypt / aes128_decrypt: a file through the host executor equals OpenSSL's EVP over the same
// bytes (CTR continuing across frames, ECB frame by frame), decryption gives the file back, and bad
// parameters fail at validation with their position.
#include <doctest/doctest.h>

#include <openssl/evp.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "tests/operators/random_bytes.hpp"
#include "tests/support/builtin_topology.hpp"
#include "tests/support/scratch_dir.hpp"

namespace xf {
namespace {

using test::builtin_registry;
using testing::random_bytes;

using bytes = std::vector<std::uint8_t>;

const char* key_hex = "2b7e151628aed2a6abf7158809cf4f3c";
const char* iv_hex = "f0f1f2f3f4f5f6f7f8f9fafbfffffffe";  // the low word carries after two blocks
const bytes key = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                   0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
const bytes iv = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
                  0xf8, 0xf9, 0xfa, 0xfb, 0xff, 0xff, 0xff, 0xfe};

/// OpenSSL's one-shot EVP over `in` (ECB without padding, or CTR from `iv`).
bytes openssl(const bytes& in, bool ctr, bool decrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  REQUIRE(ctx != nullptr);
  REQUIRE(EVP_CipherInit_ex(ctx, ctr ? EVP_aes_128_ctr() : EVP_aes_128_ecb(), nullptr, key.data(),
                            ctr ? iv.data() : nullptr, decrypt ? 0 : 1) == 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  bytes out(in.size() + 16);
  int n = 0, tail = 0;
  REQUIRE(EVP_CipherUpdate(ctx, out.data(), &n, in.data(), static_cast<int>(in.size())) == 1);
  REQUIRE(EVP_CipherFinal_ex(ctx, out.data() + n, &tail) == 1);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(static_cast<std::size_t>(n + tail));
  return out;
}

/// A scratch directory with byte files in it.
struct byte_file_dir : test::scratch_dir {
  void write(const std::string& name, const bytes& b) const {
    std::ofstream f(file(name), std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  bytes read(const std::string& name) const {
    std::ifstream f(file(name), std::ios::binary);
    return bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
};

/// file → class (mode) → file, 16 KiB frames, on the host executor; the run's failure, if any.
std::optional<run_error> run_cipher(const byte_file_dir& s, const std::string& cls, const std::string& mode,
                                    const std::string& in, const std::string& out) {
  const std::string yaml =
      "name: aes\n"
      "topics:\n"
      "  plain: {frame_size: 16KiB, capacity: 3, element: u8}\n"
      "  cipher: {frame_size: 16KiB, capacity: 3, element: u8}\n"
      "operators:\n"
      "  source: {class: file_source, outputs: [plain], params: {path: " +
      s.file(in) +
      "}}\n"
      "  aes: {class: " +
      cls + ", on: gpu, inputs: [plain], outputs: [cipher], params: {mode: " + mode + ", key: " + key_hex +
      ", iv: " + iv_hex +
      "}}\n"
      "  sink: {class: file_sink, inputs: [cipher], params: {path: " +
      s.file(out) + "}}\n";
  return test::run_yaml_on_host(yaml, {"runtime.blocks=3"});
}

TEST_CASE("aes128_ops.ctr_over_a_file_equals_one_openssl_stream") {
  byte_file_dir s;
  const bytes plain =
      random_bytes(7 * 16384 + 1000, 7 * 16384 + 1000);  // a short last frame, not a whole block
  s.write("plain", plain);
  REQUIRE_FALSE(run_cipher(s, "aes128_encrypt", "ctr", "plain", "cipher"));
  CHECK(s.read("cipher") == openssl(plain, true, false));
  REQUIRE_FALSE(run_cipher(s, "aes128_decrypt", "ctr", "cipher", "back"));
  CHECK(s.read("back") == plain);
}

TEST_CASE("aes128_ops.ecb_over_a_file_equals_openssl_and_a_partial_block_fails") {
  byte_file_dir s;
  const bytes plain = random_bytes(5 * 16384 + 4096, 5 * 16384 + 4096);
  s.write("plain", plain);
  REQUIRE_FALSE(run_cipher(s, "aes128_encrypt", "ecb", "plain", "cipher"));
  CHECK(s.read("cipher") == openssl(plain, false, false));
  REQUIRE_FALSE(run_cipher(s, "aes128_decrypt", "ecb", "cipher", "back"));
  CHECK(s.read("back") == plain);
  s.write("ragged", random_bytes(2 * 16384 + 100, 2 * 16384 + 100));
  const auto failure = run_cipher(s, "aes128_encrypt", "ecb", "ragged", "x");
  REQUIRE(failure);
  const std::string what = failure->what();
  CHECK_MESSAGE(what.find("operator 'aes'") != std::string::npos, what);
  CHECK_MESSAGE(what.find("offset 2") != std::string::npos, what);
  CHECK_MESSAGE(what.find("ECB takes whole 16-byte blocks") != std::string::npos, what);
}

TEST_CASE("aes128_ops.bad_keys_fail_validation_at_their_line") {
  byte_file_dir s;
  auto problems = [&](const std::string& params) {
    const std::string yaml =
        "name: aes\n"
        "topics:\n"
        "  plain: {frame_size: 16KiB, element: u8}\n"
        "  cipher: {frame_size: 16KiB, element: u8}\n"
        "operators:\n"
        "  source: {class: file_source, outputs: [plain], params: {path: x}}\n"
        "  aes: {class: aes128_encrypt, on: gpu, inputs: [plain], outputs: [cipher], params: {" +
        params +
        "}}\n"
        "  sink: {class: null_sink, inputs: [cipher]}\n";
    try {
      load_topology_text(yaml, "aes.yaml", builtin_registry());
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(problems(std::string("key: ") + key_hex).empty());
  CHECK(problems("mode: cbc, key: " + std::string(key_hex)).find("must be ecb or ctr") != std::string::npos);
  CHECK(problems("").find("aes.yaml:7:") != std::string::npos);
  CHECK(problems("").find("give the key (or a key_file)") != std::string::npos);
  CHECK(problems("key: 00112233").find("takes 32 hexadecimal digits (16 bytes)") != std::string::npos);
  CHECK(problems("key: 00112233").find("aes.yaml:7:") != std::string::npos);
  CHECK(problems("key_file: " + s.file("none")).find("cannot open '" + s.file("none") + "'") !=
        std::string::npos);
  s.write("key.bin", key);
  CHECK(problems("key_file: " + s.file("key.bin")).empty());
  CHECK(problems("key_file: " + s.file("key.bin") + ", key: " + key_hex).find("not both") !=
        std::string::npos);
  s.write("key.txt", bytes(key_hex, key_hex + 32));
  CHECK(problems("key_file: " + s.file("key.txt")).empty());
  s.write("bad.txt", bytes(10, 'z'));
  CHECK(problems("key_file: " + s.file("bad.txt")).find("neither 16 bytes nor 32 hexadecimal digits") !=
        std::string::npos);
}

}  // namespace
}  // namespace xf
