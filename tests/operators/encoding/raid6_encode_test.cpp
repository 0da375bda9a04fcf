// raid6_encode: its output against ISA-L's pq_gen (the operator's compute on the host, and a file through
// the host executor with frames shared by several blocks), and its parameters checked against the topic.
#include <doctest/doctest.h>

#include <isa-l/raid.h>
#include <unistd.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/registry.hpp"
#include "framework/model/yaml_loader.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/executor.hpp"
#include "framework/runtime/run_control.hpp"
#include "operators/builtin.hpp"

namespace xf {
namespace {

const operator_registry& registry() {
  static const operator_registry r = [] {
    operator_registry reg;
    register_builtin_operators(reg);
    return reg;
  }();
  return r;
}

/// P then Q of each stripe of `data` (k blocks of block_bytes a stripe), by ISA-L.
std::vector<std::uint8_t> isa_l_pq(const std::vector<std::uint8_t>& data, unsigned k, std::size_t block_bytes) {
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

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

TEST_CASE("raid6_encode.compute_equals_isa_l_pq_gen") {
  const operator_entry& entry = *registry().find("raid6_encode");
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
    kernel->run_frame(frame_in{reinterpret_cast<const std::byte*>(data.data()), data.size(), element_type::u8},
                      &fo, 0, nullptr, 7);
    out.resize(2 * block);
    CHECK(out == isa_l_pq(data, k, block));
  }
}

/// A scratch directory, removed at the end.
struct scratch {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("xf_raid6_" + std::to_string(::getpid()));
  scratch() { std::filesystem::create_directories(dir); }
  ~scratch() { std::filesystem::remove_all(dir); }
  std::string file(const std::string& name) const { return (dir / name).string(); }
};

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
  topology_spec spec = load_topology_text(yaml, "encode.yaml", registry(), {"runtime.blocks=7"});
  plan_options options;
  options.force_host = true;
  const plan p = make_plan(spec, registry(), options);
  REQUIRE(p.operators[p.kernel_operators.at(0)].parts == 4);
  run_control control;
  run_topology(p, spec, control);
  return control.failure();
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
      load_topology_text(yaml, "encode.yaml", registry());
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(problems(4, 1024, 4096).empty());
  CHECK_MESSAGE(problems(4, 1000, 4096).find("encode.yaml:7:") != std::string::npos, problems(4, 1000, 4096));
  CHECK(problems(4, 1000, 4096).find("block_size': must be a multiple of 64 bytes, not 1000") != std::string::npos);
  CHECK(problems(4, 2048, 4096).find("input topic 'stripes' has frames of 4 KiB, but a stripe of k = 4 blocks of "
                                     "2 KiB is 8 KiB") != std::string::npos);
  CHECK(problems(1, 1024, 4096).find("encode.yaml:7:") != std::string::npos);
  CHECK(problems(256, 1024, 4096).find("encode.yaml:7:") != std::string::npos);
}

}  // namespace
}  // namespace xf
