// xeflow-encoding-check: checks what the encoding topologies wrote against ISA-L and OpenSSL — RAID-6 P and
// Q (or whole stripes) against ISA-L's pq_gen over the data, a ciphertext against OpenSSL's EVP AES-128
// over the plaintext. Exit 0: equal; 1: they differ (the first difference is named) or a file is unreadable.
#include <isa-l/raid.h>
#include <openssl/evp.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/dataset_support/tool_cli.hpp"
#include "operators/encoding/aes128_ops.hpp"

namespace {

using namespace xf::apps;

/// Reads a file in pieces of `piece` bytes (the last may be short).
class piece_reader {
 public:
  piece_reader(const std::string& path, std::size_t piece)
      : path_(path), in_(path, std::ios::binary), piece_(piece) {
    if (!in_) throw std::runtime_error("cannot open '" + path + "': " + std::strerror(errno));
  }
  /// The next piece into `out` (resized to what was read; empty at the end).
  void next(std::vector<std::uint8_t>& out) {
    out.resize(piece_);
    in_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(piece_));
    if (in_.bad()) throw std::runtime_error("reading '" + path_ + "' failed");
    out.resize(static_cast<std::size_t>(in_.gcount()));
  }

 private:
  std::string path_;
  std::ifstream in_;
  std::size_t piece_;
};

/// P and Q of a stripe of k blocks, by ISA-L (its vector code asks for 32-byte aligned blocks).
std::vector<std::uint8_t> isa_l_pq(const std::uint8_t* stripe, unsigned k, std::size_t block) {
  std::unique_ptr<std::uint8_t[], decltype(&std::free)> buffer(
      static_cast<std::uint8_t*>(std::aligned_alloc(64, (k + 2) * block)), &std::free);
  if (!buffer) throw std::bad_alloc();
  std::memcpy(buffer.get(), stripe, k * block);
  std::vector<void*> blocks;
  for (unsigned i = 0; i < k + 2; ++i) blocks.push_back(buffer.get() + i * block);
  if (::pq_gen(static_cast<int>(k + 2), static_cast<int>(block), blocks.data()) != 0)
    throw std::runtime_error("ISA-L's pq_gen refused the stripe");
  return {buffer.get() + k * block, buffer.get() + (k + 2) * block};
}

/// 1 and a line naming the first difference, or 0.
int report(std::size_t at, const std::string& what) {
  std::cout << "differ: " << what << " (byte " << at << ")\n";
  return exit_failed;
}

int check_raid6(const std::string& data_path, const std::string& out_path, unsigned k, std::size_t block,
                bool stripes) {
  const std::size_t stripe = k * block, written = stripes ? (k + 2) * block : 2 * block;
  piece_reader data(data_path, stripe), out(out_path, written);
  std::vector<std::uint8_t> d, o;
  std::uint64_t n = 0;
  for (;; ++n) {
    data.next(d);
    out.next(o);
    if (d.empty() && o.empty()) break;
    if (d.size() != stripe)
      throw std::runtime_error("'" + data_path + "' ends inside stripe " + std::to_string(n) +
                               ": RAID-6 encodes whole stripes of k times block_size bytes");
    if (o.size() != written)
      return report(n * written + o.size(), "'" + out_path + "' ends at stripe " + std::to_string(n));
    const std::vector<std::uint8_t> pq = isa_l_pq(d.data(), k, block);
    const std::uint8_t* theirs = stripes ? o.data() + stripe : o.data();
    if (stripes && std::memcmp(o.data(), d.data(), stripe) != 0)
      return report(n * written, "stripe " + std::to_string(n) + "'s data blocks");
    if (std::memcmp(theirs, pq.data(), block) != 0)
      return report(n * written + (theirs - o.data()), "stripe " + std::to_string(n) + "'s P");
    if (std::memcmp(theirs + block, pq.data() + block, block) != 0)
      return report(n * written + (theirs - o.data()) + block, "stripe " + std::to_string(n) + "'s Q");
  }
  std::cout << "equal: " << n << " stripes of " << k << " blocks of " << block
            << " bytes, P and Q as ISA-L's pq_gen\n";
  return 0;
}

int check_aes(const std::string& plain_path, const std::string& cipher_path, bool ctr, bool decrypt,
              const std::uint8_t* key, const std::uint8_t* iv) {
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                      &EVP_CIPHER_CTX_free);
  if (!ctx || EVP_CipherInit_ex(ctx.get(), ctr ? EVP_aes_128_ctr() : EVP_aes_128_ecb(), nullptr, key,
                                ctr ? iv : nullptr, decrypt ? 0 : 1) != 1)
    throw std::runtime_error("OpenSSL's EVP refused the cipher");
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  constexpr std::size_t piece = 1 << 20;
  piece_reader in(plain_path, piece), out(cipher_path, piece);
  std::vector<std::uint8_t> p, c, expected(piece + 16);
  std::uint64_t at = 0;
  for (;;) {
    in.next(p);
    out.next(c);
    if (p.empty() && c.empty()) break;
    if (!ctr && p.size() % 16 != 0)
      throw std::runtime_error("ECB takes whole 16-byte blocks: '" + plain_path + "' does not end on one");
    int n = 0;
    if (EVP_CipherUpdate(ctx.get(), expected.data(), &n, p.data(), static_cast<int>(p.size())) != 1)
      throw std::runtime_error("OpenSSL's EVP failed");
    for (std::size_t i = 0; i < std::min<std::size_t>(c.size(), static_cast<std::size_t>(n)); ++i)
      if (c[i] != expected[i]) return report(at + i, "'" + cipher_path + "'");
    if (c.size() != static_cast<std::size_t>(n))
      return report(at + std::min<std::size_t>(c.size(), static_cast<std::size_t>(n)), "the lengths");
    at += c.size();
  }
  std::cout << "equal: " << at << " bytes, as OpenSSL's EVP aes-128-" << (ctr ? "ctr" : "ecb") << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "xeflow-encoding-check: checks RAID-6 parity or stripes against ISA-L's pq_gen, or an AES-128 "
      "output against OpenSSL's EVP, over the input they were made from"};
  app.require_subcommand(1);
  std::string data, out, block_text = "64KiB", mode = "ctr", key_text, key_file, iv_text;
  unsigned k = 4;
  bool stripes = false, decrypt = false;
  CLI::App* raid6 = app.add_subcommand(
      "raid6", "OUT holds P then Q per stripe of DATA (or, --stripes, the stripes with them)");
  raid6->add_option("data", data, "the data: stripes of k blocks")->required();
  raid6->add_option("out", out, "what raid6_encode wrote")->required();
  raid6->add_option("--k", k, "data blocks a stripe")->check(CLI::Range(2u, 255u));
  raid6->add_option("--block-size", block_text, "bytes of each block (64KiB)");
  raid6->add_flag("--stripes", stripes, "OUT holds whole stripes (raid6_encode's output: stripe)");
  CLI::App* aes = app.add_subcommand("aes", "OUT is INPUT encrypted (or, --decrypt, decrypted) with AES-128");
  aes->add_option("input", data, "what the operator read")->required();
  aes->add_option("out", out, "what it wrote")->required();
  aes->add_option("--mode", mode, "ecb or ctr")->check(CLI::IsMember({"ecb", "ctr"}));
  aes->add_option("--key", key_text, "32 hexadecimal digits");
  aes->add_option("--key-file", key_file, "16 bytes, or 32 hexadecimal digits");
  aes->add_option("--iv", iv_text, "CTR's initial counter block, 32 hexadecimal digits (default zero)");
  aes->add_flag("--decrypt", decrypt, "OUT is INPUT decrypted");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;
  int result = 0;
  const int status = run_tool("xeflow-encoding-check", std::cerr, [&] {
    if (raid6->parsed()) {
      const std::uint64_t block = parse_byte_size("--block-size", block_text);
      if (block == 0 || block % 64 != 0) throw usage_error("--block-size: a positive multiple of 64 bytes");
      result = check_raid6(data, out, k, block, stripes);
      return;
    }
    namespace ap = xf::aes_params;
    ap::block_text key, from_file, iv;
    if (const std::string problem = ap::parse_block(key_text, key); !problem.empty())
      throw usage_error("--key " + problem);
    if (const std::string problem = ap::parse_key_file(key_file, from_file); !problem.empty())
      throw usage_error("--key-file: " + problem);
    if (key.given == from_file.given) throw usage_error("give --key or --key-file (one of them)");
    if (const std::string problem = ap::parse_block(iv_text, iv); !problem.empty())
      throw usage_error("--iv " + problem);
    result = check_aes(data, out, mode == "ctr", decrypt, key.given ? key.bytes : from_file.bytes, iv.bytes);
  });
  return status != 0 ? status : result;
}
