// The encoding operators as a user runs them — a file through xeflow-run's host executor into a file —
// checked by xeflow-encoding-check against ISA-L and OpenSSL, and the check catching one changed byte.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/apps/dataset_fixture.hpp"

namespace {

using namespace xf::test;

/// file → `op` (its YAML map) → file, frames of `in_frame` and `out_frame`, written to `path`.
std::string file_topology(const std::string& path, const std::string& in, const std::string& out,
                          const std::string& in_frame, const std::string& out_frame, const std::string& op) {
  write_file(path,
             "name: encoding\n"
             "topics:\n"
             "  in: {frame_size: " +
                 in_frame +
                 ", capacity: 8, element: u8}\n"
                 "  out: {frame_size: " +
                 out_frame +
                 ", capacity: 8, element: u8}\n"
                 "operators:\n"
                 "  source: {class: file_source, outputs: [in], params: {path: " +
                 in +
                 "}}\n"
                 "  op: " +
                 op +
                 "\n"
                 "  sink: {class: file_sink, inputs: [out], params: {path: " +
                 out + "}}\n");
  return path;
}

std::string random_text(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

/// Flips one byte of a file.
void corrupt(const std::string& path, std::size_t at) {
  std::string bytes = read_file(path);
  REQUIRE(at < bytes.size());
  bytes[at] = static_cast<char>(bytes[at] ^ 0x40);
  write_file(path, bytes);
}

TEST_CASE("encoding.raid6_stripes_from_a_file_are_isa_l_s") {
  scratch_dir dir;
  const std::string data = dir.file("data"), out = dir.file("stripes");
  write_file(data, random_text(12 * 256 * 1024, 1));  // 12 stripes of 4 blocks of 64 KiB
  const std::string topology = file_topology(dir.file("raid6.yaml"), data, out, "256KiB", "384KiB",
                                             "{class: raid6_encode, on: gpu, inputs: [in], outputs: [out], "
                                             "params: {k: 4, block_size: 64KiB, output: "
                                             "stripe}}");
  auto run = run_tool("XF_RUN", {topology, "--host", "-q"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  auto check =
      run_tool("XF_ENCODING_CHECK", {"raid6", data, out, "--k", "4", "--block-size", "64KiB", "--stripes"});
  CHECK_MESSAGE(check.exit_code == 0, check.out << check.err);
  CHECK(check.out.find("equal: 12 stripes") != std::string::npos);
  corrupt(out, 5 * 384 * 1024 + 4 * 64 * 1024 + 7);  // stripe 5's P
  check =
      run_tool("XF_ENCODING_CHECK", {"raid6", data, out, "--k", "4", "--block-size", "64KiB", "--stripes"});
  CHECK(check.exit_code == 1);
  CHECK_MESSAGE(check.out.find("stripe 5's P") != std::string::npos, check.out);
}

TEST_CASE("encoding.aes_ctr_from_a_file_is_openssl_s") {
  scratch_dir dir;
  const std::string plain = dir.file("plain"), cipher = dir.file("cipher");
  write_file(plain, random_text(40 * 65536 + 333, 2));
  const std::string topology =
      file_topology(dir.file("aes.yaml"), plain, cipher, "64KiB", "64KiB",
                    "{class: aes128_encrypt, on: gpu, inputs: [in], outputs: [out], params: {mode: ctr, key: "
                    "000102030405060708090a0b0c0d0e0f, iv: f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff}}");
  auto run = run_tool("XF_RUN", {topology, "--host", "-q"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const std::vector<std::string> args = {"aes",
                                         plain,
                                         cipher,
                                         "--mode",
                                         "ctr",
                                         "--key",
                                         "000102030405060708090a0b0c0d0e0f",
                                         "--iv",
                                         "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"};
  auto check = run_tool("XF_ENCODING_CHECK", args);
  CHECK_MESSAGE(check.exit_code == 0, check.out << check.err);
  corrupt(cipher, 1234567);
  check = run_tool("XF_ENCODING_CHECK", args);
  CHECK(check.exit_code == 1);
  CHECK_MESSAGE(check.out.find("byte 1234567") != std::string::npos, check.out);
  CHECK(run_tool("XF_ENCODING_CHECK", {"aes", plain, cipher, "--key", "00"}).exit_code == 2);
}

}  // namespace
