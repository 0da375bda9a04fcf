// raid6_encode and raid6_recover: P and Q against ISA-L's pq_gen (the operators' compute on the host, and a
// file through the host executor with frames shared by several blocks), every lost block or pair rebuilt,
// and their parameters checked against the topic.
#include <doctest/doctest.h>

#include <isa-l/raid.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
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

/// P then Q of each stripe of `data` (k blocks of block_bytes a stripe), by ISA-L.
std::vector<std::uint8_t> isa_l_pq(const std::vector<std::uint8_t>& data, unsigned k,
                                   std::size_t block_bytes) {
  const std::size_t stripe = k * block_bytes, stripes = data.size() / stripe;
  std::vector<std::uint8_t> pq(2 * block_bytes * stripes);
  for (std::size_t s = 0; s < stripes; ++s) {
    // ISA-L asks for 32-byte aligned blocks: work in an aligned copy.
    std::vector<std::uint8_t*> blocks;
    auto* buffer = static_cast<std::uint8_t*>(std::aligned_alloc(64, (k + 2) * block_bytes));
    REQUIRE(buffer != nullptr);
    std::memcpy(buffer, data.data() + s * stripe, stripe);
    for (unsigned i = 0; i < k + 2; ++i) blocks.push_back(buffer + i * block_bytes);
    REQUIRE(::pq_gen(static_cast<int>(k + 2), static_cast<int>(block_bytes),
                     reinterpret_cast<void**>(blocks.data())) == 0);
    std::memcpy(pq.data() + s * 2 * block_bytes, blocks[k], 2 * block_bytes);
    std::free(buffer);
  }
  return pq;
}

TEST_CASE("raid6_encode.compute_equals_isa_l_pq_gen") {
  const operator_entry& entry = *builtin_registry().find("raid6_encode");
  for (unsigned k : {2u, 5u, 16u}) {
    CAPTURE(k);
    const std::size_t block = 4096;
    const param_map values{{"k", std::int64_t{k}}, {"block_size", std::int64_t{block}}};
    const topic_info in{"stripes", k * block, 4, element_type::u8, std::nullopt, {}};
    CHECK(entry.info.output_share_for(values) == output_fraction{2, k});
    const std::vector<std::uint8_t> data = random_bytes(k * block, k);
    std::vector<std::uint8_t> out(k * block, 0);
    auto kernel = entry.make_host_kernel(values, {in});
    CHECK(kernel->output_bytes(k * block) == 2 * block);
    frame_out fo{reinterpret_cast<std::byte*>(out.data()), out.size(), 0, element_type::u8};
    kernel->run_frame(
        frame_in{reinterpret_cast<const std::byte*>(data.data()), data.size(), element_type::u8}, &fo, 0,
        nullptr, 7);
    out.resize(2 * block);
    CHECK(out == isa_l_pq(data, k, block));
  }
}

using scratch = test::scratch_dir;

std::string encode_topology(const std::string& in, const std::string& out, unsigned k, std::size_t block) {
  return "name: encode\n"
         "topics:\n"
         "  stripes: {frame_size: " +
         std::to_string(k * block) + ", capacity: 2, element: u8}\n" +
         "  pq: {frame_size: " + std::to_string(std::max<std::size_t>(2 * block, 4096)) +
         ", capacity: 2, element: u8}\n"
         "operators:\n"
         "  source: {class: file_source, outputs: [stripes], params: {path: " +
         in +
         "}}\n"
         "  encode: {class: raid6_encode, on: gpu, inputs: [stripes], outputs: [pq], params: {k: " +
         std::to_string(k) + ", block_size: " + std::to_string(block) +
         "}}\n"
         "  sink: {class: file_sink, inputs: [pq], params: {path: " +
         out + "}}\n";
}

/// Runs `yaml` on the host executor with 7 blocks (2-frame topics: each frame shared by 4 items).
std::optional<run_error> run_on_host(const std::string& yaml) {
  return test::run_yaml_on_host(yaml, {"runtime.blocks=7"}, [](const plan& p) {
    REQUIRE(p.operators[p.kernel_operators.at(0)].parts == 4);
  });
}

TEST_CASE("raid6_encode.a_file_through_the_host_executor_equals_isa_l") {
  scratch s;
  const unsigned k = 6;
  const std::size_t block = 2048;
  const std::vector<std::uint8_t> data = random_bytes(9 * k * block, 99);
  {
    std::ofstream f(s.file("data"), std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  REQUIRE_FALSE(run_on_host(encode_topology(s.file("data"), s.file("pq"), k, block)));
  std::ifstream f(s.file("pq"), std::ios::binary);
  const std::vector<std::uint8_t> pq((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(pq == isa_l_pq(data, k, block));

  // A file that ends inside a stripe: the last frame fails, named.
  {
    std::ofstream g(s.file("short"), std::ios::binary);
    g.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() - 64));
  }
  const auto failure = run_on_host(encode_topology(s.file("short"), s.file("pq2"), k, block));
  REQUIRE(failure);
  const std::string what = failure->what();
  CHECK_MESSAGE(what.find("operator 'encode'") != std::string::npos, what);
  CHECK_MESSAGE(what.find("offset 8") != std::string::npos, what);
  CHECK_MESSAGE(what.find("less than a whole stripe") != std::string::npos, what);
}

TEST_CASE("raid6_encode.bad_parameters_fail_validation_at_their_line") {
  auto problems = [](unsigned k, std::size_t block, std::size_t frame) {
    std::string yaml = encode_topology("in", "out", 4, 1024);  // 4 KiB stripes, P and Q in a 4 KiB frame
    yaml.replace(yaml.find("k: 4"), 4, "k: " + std::to_string(k));
    yaml.replace(yaml.find("block_size: 1024"), 16, "block_size: " + std::to_string(block));
    yaml.replace(yaml.find("frame_size: 4096"), 16, "frame_size: " + std::to_string(frame));
    try {
      load_topology_text(yaml, "encode.yaml", builtin_registry());
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(problems(4, 1024, 4096).empty());
  CHECK_MESSAGE(problems(4, 1000, 4096).find("encode.yaml:7:") != std::string::npos, problems(4, 1000, 4096));
  CHECK(problems(4, 1000, 4096).find("block_size': must be a multiple of 64 bytes, not 1000") !=
        std::string::npos);
  CHECK(problems(4, 2048, 4096)
            .find("input topic 'stripes' has frames of 4 KiB, but a stripe of k = 4 blocks of "
                  "2 KiB is 8 KiB") != std::string::npos);
  CHECK(problems(1, 1024, 4096).find("encode.yaml:7:") != std::string::npos);
  CHECK(problems(256, 1024, 4096).find("encode.yaml:7:") != std::string::npos);
}

/// The stripes of `data` with P and Q after each (the encoder's `output: stripe`), by ISA-L.
std::vector<std::uint8_t> isa_l_stripes(const std::vector<std::uint8_t>& data, unsigned k,
                                        std::size_t block) {
  const std::vector<std::uint8_t> pq = isa_l_pq(data, k, block);
  std::vector<std::uint8_t> out;
  for (std::size_t s = 0; s < data.size() / (k * block); ++s) {
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(s * k * block),
               data.begin() + static_cast<std::ptrdiff_t>((s + 1) * k * block));
    out.insert(out.end(), pq.begin() + static_cast<std::ptrdiff_t>(s * 2 * block),
               pq.begin() + static_cast<std::ptrdiff_t>((s + 1) * 2 * block));
  }
  return out;
}

TEST_CASE("raid6_recover.every_lost_block_and_pair_comes_back") {
  const unsigned k = 4;
  const std::size_t block = 1024, stripe = (k + 2) * block;
  const std::vector<std::uint8_t> whole = isa_l_stripes(random_bytes(k * block, 5), k, block);
  const topic_info in{"stripes", stripe, 4, element_type::u8, std::nullopt, {}};
  const operator_entry& entry = *builtin_registry().find("raid6_recover");
  std::mt19937_64 rng(8);
  for (const char* lost : {"0", "3", "P", "Q", "0, 1", "1,3", "2, P", "2, Q", "P, Q", "Q, 0"}) {
    CAPTURE(lost);
    auto kernel = entry.make_host_kernel(
        {{"k", std::int64_t{k}}, {"block_size", std::int64_t{block}}, {"lost", std::string(lost)}}, {in});
    // The lost blocks hold garbage: they must not be read.
    std::vector<std::uint8_t> damaged = whole;
    for (const char* c = lost; *c; ++c) {
      const std::size_t b = *c == 'P'                  ? k
                            : *c == 'Q'                ? k + 1
                            : (*c >= '0' && *c <= '9') ? std::size_t(*c - '0')
                                                       : 99;
      if (b == 99) continue;
      for (std::size_t i = 0; i < block; ++i) damaged[b * block + i] = static_cast<std::uint8_t>(rng());
    }
    std::vector<std::uint8_t> out(stripe, 0);
    frame_out fo{reinterpret_cast<std::byte*>(out.data()), out.size(), 0, element_type::u8};
    kernel->run_frame(frame_in{reinterpret_cast<const std::byte*>(damaged.data()), stripe, element_type::u8},
                      &fo, 0, nullptr, 5);
    CHECK(out == whole);
  }
}

TEST_CASE("raid6_recover.encode_then_recover_through_the_host_executor") {
  // file → raid6_encode (the whole stripe) → raid6_recover (data block 1 and Q rebuilt) → file: the stripes
  // with ISA-L's P and Q.
  scratch s;
  const unsigned k = 6;
  const std::size_t block = 2048;
  const std::vector<std::uint8_t> data = random_bytes(5 * k * block, 3);
  {
    std::ofstream f(s.file("data"), std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  const std::string yaml =
      "name: recover\n"
      "topics:\n"
      "  data: {frame_size: 12KiB, capacity: 2, element: u8}\n"
      "  stripes: {frame_size: 16KiB, capacity: 2, element: u8}\n"
      "  rebuilt: {frame_size: 16KiB, capacity: 2, element: u8}\n"
      "operators:\n"
      "  source: {class: file_source, outputs: [data], params: {path: " +
      s.file("data") +
      "}}\n"
      "  encode: {class: raid6_encode, on: gpu, inputs: [data], outputs: [stripes],\n"
      "           params: {k: 6, block_size: 2KiB, output: stripe}}\n"
      "  recover: {class: raid6_recover, on: gpu, inputs: [stripes], outputs: [rebuilt],\n"
      "            params: {k: 6, block_size: 2KiB, lost: \"1, Q\"}}\n"
      "  sink: {class: file_sink, inputs: [rebuilt], params: {path: " +
      s.file("out") + "}}\n";
  REQUIRE_FALSE(run_on_host(yaml));
  std::ifstream f(s.file("out"), std::ios::binary);
  const std::vector<std::uint8_t> out((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(out == isa_l_stripes(data, k, block));
}

TEST_CASE("raid6_recover.bad_lost_blocks_fail_validation_at_their_line") {
  auto problems = [](const std::string& lost) {
    const std::string yaml =
        "name: r\n"
        "topics:\n"
        "  stripes: {frame_size: 24KiB, element: u8}\n"
        "  out: {frame_size: 24KiB, element: u8}\n"
        "operators:\n"
        "  source: {class: file_source, outputs: [stripes], params: {path: x}}\n"
        "  recover: {class: raid6_recover, on: gpu, inputs: [stripes], outputs: [out], params: {k: 4, "
        "block_size: 4KiB, lost: \"" +
        lost +
        "\"}}\n"
        "  sink: {class: null_sink, inputs: [out]}\n";
    try {
      load_topology_text(yaml, "r.yaml", builtin_registry());
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(problems("1, P").empty());
  for (const char* bad : {"", "1, 2, 3", "x", "1;2", "300"}) {
    CAPTURE(bad);
    CHECK(problems(bad).find("r.yaml:7:") != std::string::npos);
    CHECK(problems(bad).find("names one or two lost blocks") != std::string::npos);
  }
  CHECK(problems("4").find(
            "parameter 'lost': data block 4: a stripe of k = 4 has data blocks 0 … 3 (P and Q by "
            "name)") != std::string::npos);
  CHECK(problems("Q, Q").find("the same block is lost twice") != std::string::npos);
}

}  // namespace
}  // namespace xf
