// The encoding operators placed on: cpu run ISA-L and OpenSSL (cpu_versions.cpp), not their own compute on
// the CPU threads: the registry hands out the library versions, their frames equal the operators' compute
// byte for byte, and topologies with the work on the CPU side verify against a replay of that compute.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <typeinfo>
#include <vector>

#include "operators/encoding/aes128_ops.hpp"
#include "operators/encoding/raid6_encode.hpp"
#include "operators/encoding/raid6_recover.hpp"
#include "tests/support/builtin_topology.hpp"

namespace xf {
namespace {

using test::builtin_registry;
using page_aligned_bytes = std::unique_ptr<std::byte[], decltype(&std::free)>;

page_aligned_bytes aligned(std::size_t bytes) {
  page_aligned_bytes b(static_cast<std::byte*>(std::aligned_alloc(4096, bytes)), &std::free);
  REQUIRE(b != nullptr);
  return b;
}

/// Runs make_cpu's operator and the operator's own compute (the host kernel) on the same random frame at
/// `offset`; checks the library version was chosen and both wrote the same bytes.
template <class Op>
void check_library_version(const char* class_name, const param_map& params, std::uint64_t frame_bytes,
                           std::uint64_t offset) {
  const topic_info in{"in", frame_bytes, 4, element_type::u8, std::nullopt, {}};
  const operator_entry& entry = *builtin_registry().find(class_name);
  std::unique_ptr<cpu_operator> made = entry.make_cpu(params, {in});
  auto* library = dynamic_cast<cpu_map*>(made.get());
  REQUIRE(library != nullptr);
  CHECK(typeid(*library) != typeid(detail::gpu_op_on_cpu<Op>));

  std::mt19937_64 rng(offset + frame_bytes);
  page_aligned_bytes input = aligned(frame_bytes), by_library = aligned(4 * frame_bytes),
                     by_compute = aligned(4 * frame_bytes);
  for (std::uint64_t i = 0; i < frame_bytes; ++i) input[i] = static_cast<std::byte>(rng());
  const frame_in frame{input.get(), frame_bytes, element_type::u8};
  frame_out a{by_library.get(), 4 * frame_bytes, frame_bytes, element_type::u8};
  frame_out b{by_compute.get(), 4 * frame_bytes, frame_bytes, element_type::u8};
  library->on_frame(offset, frame, a);
  const auto kernel = entry.make_host_kernel(params, {in});
  b.bytes = kernel->output_bytes(frame_bytes);
  kernel->run_frame(frame, &b, offset, nullptr, 1);
  REQUIRE(a.bytes == b.bytes);
  CHECK(std::equal(by_library.get(), by_library.get() + a.bytes, by_compute.get()));
}

TEST_CASE("cpu_versions.placed_on_cpu_the_libraries_write_what_compute_writes") {
  for (const std::string output : {"parity", "stripe"}) {
    CAPTURE(output);
    for (std::int64_t k : {2, 5, 16}) {
      const param_map params{{"k", k}, {"block_size", std::int64_t{4096}}, {"output", output}};
      check_library_version<raid6_encode_op>("raid6_encode", params, static_cast<std::uint64_t>(k) * 4096, 3);
    }
  }
  for (const std::string mode : {"ecb", "ctr"}) {
    CAPTURE(mode);
    const param_map params{{"mode", mode},
                           {"key", std::string("2b7e151628aed2a6abf7158809cf4f3c")},
                           {"iv", std::string("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")}};
    for (std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{7}, (std::uint64_t{1} << 40) + 1}) {
      check_library_version<aes128_encrypt_op>("aes128_encrypt", params, 64 * 1024, offset);
      check_library_version<aes128_decrypt_op>("aes128_decrypt", params, 64 * 1024, offset);
    }
  }
}

TEST_CASE("cpu_versions.raid6_recover_by_isa_l_rebuilds_every_lost_block_and_pair") {
  // Whole stripes from raid6_encode's compute; the lost blocks then hold garbage, which must not be read.
  const unsigned k = 5;
  const std::uint64_t block = 4096, stripe = (k + 2) * block;
  const topic_info data_topic{"data", k * block, 4, element_type::u8, std::nullopt, {}};
  const auto encode = builtin_registry()
                          .find("raid6_encode")
                          ->make_host_kernel({{"k", std::int64_t{k}},
                                              {"block_size", std::int64_t{block}},
                                              {"output", std::string("stripe")}},
                                             {data_topic});
  std::mt19937_64 rng(17);
  page_aligned_bytes data = aligned(k * block), whole = aligned(stripe), damaged = aligned(stripe),
                     rebuilt = aligned(stripe);
  for (std::uint64_t i = 0; i < k * block; ++i) data[i] = static_cast<std::byte>(rng());
  frame_out encoded{whole.get(), stripe, stripe, element_type::u8};
  encode->run_frame(frame_in{data.get(), k * block, element_type::u8}, &encoded, 0);

  const topic_info stripes{"stripes", stripe, 4, element_type::u8, std::nullopt, {}};
  const operator_entry& entry = *builtin_registry().find("raid6_recover");
  for (const char* lost : {"0", "4", "P", "Q", "0, 1", "1, 4", "2, P", "3, Q", "P, Q", "Q, 0"}) {
    CAPTURE(std::string(lost));
    const param_map params{
        {"k", std::int64_t{k}}, {"block_size", std::int64_t{block}}, {"lost", std::string(lost)}};
    std::unique_ptr<cpu_operator> made = entry.make_cpu(params, {stripes});
    auto* library = dynamic_cast<cpu_map*>(made.get());
    REQUIRE(library != nullptr);
    CHECK(typeid(*library) != typeid(detail::gpu_op_on_cpu<raid6_recover_op>));
    std::memcpy(damaged.get(), whole.get(), stripe);
    for (const char* c = lost; *c != '\0'; ++c) {
      const std::uint64_t b = *c == 'P' ? k : *c == 'Q' ? k + 1 : *c >= '0' && *c <= '9' ? *c - '0' : 99;
      if (b == 99) continue;
      for (std::uint64_t i = 0; i < block; ++i) damaged[b * block + i] = static_cast<std::byte>(rng());
    }
    frame_out out{rebuilt.get(), stripe, stripe, element_type::u8};
    library->on_frame(9, frame_in{damaged.get(), stripe, element_type::u8}, out);
    CHECK(out.bytes == stripe);
    CHECK(std::equal(rebuilt.get(), rebuilt.get() + stripe, whole.get()));
  }
}

TEST_CASE("cpu_versions.topologies_with_the_encoding_on_cpu_threads_verify") {
  // RAID-6: ISA-L's stripes, block 1 and Q rebuilt on the CPU, every frame checked against the replayed
  // compute; AES: OpenSSL encrypts and decrypts on CPU threads (CTR across frames, frames in any order).
  const std::string raid6 =
      "name: raid6_cpu\n"
      "topics:\n"
      "  data: {frame_size: 32KiB, capacity: 8, element: u8}\n"
      "  stripes: {frame_size: 48KiB, capacity: 8, element: u8}\n"
      "  rebuilt: {frame_size: 48KiB, capacity: 8, element: u8}\n"
      "operators:\n"
      "  source: {class: random_source, threads: 2, outputs: [data], params: {total_bytes: 4MiB, seed: 9}}\n"
      "  encode: {class: raid6_encode, on: cpu, threads: 3, inputs: [data], outputs: [stripes],\n"
      "           params: {k: 4, block_size: 8KiB, output: stripe}}\n"
      "  recover: {class: raid6_recover, on: cpu, threads: 2, inputs: [stripes], outputs: [rebuilt],\n"
      "            params: {k: 4, block_size: 8KiB, lost: \"1, Q\"}}\n"
      "  verify: {class: verify_sink, threads: 2, inputs: [rebuilt]}\n";
  CHECK_FALSE(test::run_yaml_on_host(raid6).has_value());
  CHECK_FALSE(test::run_yaml_on_host(raid6, {"operators.recover.params.lost=0, 3"}).has_value());
  const std::string aes =
      "name: aes_cpu\n"
      "topics:\n"
      "  plain: {frame_size: 16KiB, capacity: 8, element: u8}\n"
      "  cipher: {frame_size: 16KiB, capacity: 8, element: u8}\n"
      "  back: {frame_size: 16KiB, capacity: 8, element: u8}\n"
      "operators:\n"
      "  source: {class: random_source, threads: 2, outputs: [plain], params: {total_bytes: 4MiB, seed: 4}}\n"
      "  encrypt: {class: aes128_encrypt, on: cpu, threads: 3, inputs: [plain], outputs: [cipher],\n"
      "            params: {mode: ctr, key: 000102030405060708090a0b0c0d0e0f}}\n"
      "  decrypt: {class: aes128_decrypt, on: cpu, threads: 3, inputs: [cipher], outputs: [back],\n"
      "            params: {mode: ctr, key: 000102030405060708090a0b0c0d0e0f}}\n"
      "  verify: {class: verify_sink, threads: 2, inputs: [back]}\n";
  CHECK_FALSE(test::run_yaml_on_host(aes).has_value());
  CHECK_FALSE(
      test::run_yaml_on_host(aes, {"operators.encrypt.params.mode=ecb", "operators.decrypt.params.mode=ecb"})
          .has_value());
}

}  // namespace
}  // namespace xf
