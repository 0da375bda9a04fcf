// apps/custom_operator's operators tested one at a time through xf::operator_harness (<xeflow/testing.hpp>),
// as a user tests their own: the CPU map, the CPU sink and the GPU map on the host executor, each on
// frames given in memory through the real planner and topics, and the harness's own refusals.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>
#include <xeflow/testing.hpp>

#include "apps/custom_operator/byte_sum_op.hpp"
#include "apps/custom_operator/clamp_op.hpp"
#include "apps/custom_operator/xor_mask_op.hpp"

namespace {

xf::operator_registry& registry() {
  static xf::operator_registry r = [] {
    xf::operator_registry reg;
    reg.add<example::xor_mask_op>("xor_mask");
    reg.add<example::byte_sum_op>("byte_sum");
    reg.add_gpu_operators<xf::gpu_operator_list<example::clamp_op>>();
    return reg;
  }();
  return r;
}

std::vector<std::vector<std::uint8_t>> ramps(int frames, int bytes) {
  std::vector<std::vector<std::uint8_t>> out(frames, std::vector<std::uint8_t>(bytes));
  for (int f = 0; f < frames; ++f) std::iota(out[f].begin(), out[f].end(), static_cast<std::uint8_t>(f * 7));
  return out;
}

}  // namespace

TEST_CASE("custom_operator.xor_mask_masks_each_offset_with_its_own_byte") {
  const auto frames = ramps(20, 4096);
  xf::operator_harness h(registry(), xf::op("mask", "xor_mask").threads(3).param("mask", 0x21));
  h.input(frames);
  const xf::harness_result r = h.run();
  REQUIRE_FALSE(r.error);
  REQUIRE(r.outputs.size() == 1);
  REQUIRE(r.outputs[0].size() == frames.size());
  for (std::uint64_t o = 0; o < frames.size(); ++o) {
    const std::vector<std::uint8_t> out = r.output_as<std::uint8_t>(0, o);
    REQUIRE(out.size() == frames[o].size());
    for (std::size_t i = 0; i < out.size(); ++i)
      REQUIRE(out[i] == static_cast<std::uint8_t>(frames[o][i] ^ ((0x21 + o) & 0xff)));
  }
}

TEST_CASE("custom_operator.byte_sum_counts_and_checks_the_stream") {
  const auto frames = ramps(9, 1000);
  std::uint64_t sum = 0;
  for (const auto& f : frames) sum = std::accumulate(f.begin(), f.end(), sum);
  {
    xf::operator_harness h(registry(), xf::op("sum", "byte_sum").threads(2).param("expect_frames", 9));
    h.input(frames);
    const xf::harness_result r = h.run();
    REQUIRE_FALSE(r.error);
    CHECK(r.outputs.empty());  // a sink: no output topic
    CHECK(r.counters.at("frames") == 9);
    CHECK(r.counters.at("bytes") == 9000);
    CHECK(r.counters.at("sum") == sum);
  }
  // A count it does not get fails the run at on_stop, naming the operator.
  xf::operator_harness h(registry(), xf::op("sum", "byte_sum").param("expect_frames", 10));
  h.input(frames);
  const xf::harness_result r = h.run();
  REQUIRE(r.error);
  CHECK(r.error->find("'sum'") != std::string::npos);
  CHECK(r.error->find("received 9 frames, expected 10") != std::string::npos);
}

TEST_CASE("custom_operator.clamp_on_the_host_executor") {
  std::vector<std::vector<float>> frames{{-5, 0.5, 3, 1e7}, {2, 9, -1, 4}};
  xf::operator_harness h(
      registry(), xf::op("clamp", "clamp").on(xf::placement::gpu).param("low", 0.0).param("high", 4.0));
  h.element(xf::element_type::f32).frame_bytes(4096);
  h.input(frames);
  const xf::harness_result r = h.run();
  REQUIRE_FALSE(r.error);
  CHECK(r.output_as<float>(0, 0) == std::vector<float>{0, 0.5, 3, 4});
  CHECK(r.output_as<float>(0, 1) == std::vector<float>{2, 4, 0, 4});
  CHECK(r.stats.executor.rfind("host", 0) == 0);
}

TEST_CASE("custom_operator.the_harness_refuses_what_a_topology_would") {
  // A parameter out of its declared range: the validation's message, positioned at the operator.
  xf::operator_harness range(registry(), xf::op("mask", "xor_mask").param("mask", 300));
  range.input(ramps(1, 16));
  CHECK_THROWS_WITH_AS(range.run(), doctest::Contains("mask"), xf::config_error);
  // A frame larger than the topics' frames.
  xf::operator_harness big(registry(), xf::op("mask", "xor_mask"));
  big.frame_bytes(4096).input(ramps(2, 5000));
  CHECK_THROWS_WITH_AS(big.run(), doctest::Contains("input 0's frame at offset 0 holds 5000 bytes"),
                       std::invalid_argument);
  // An unknown class.
  xf::operator_harness unknown(registry(), xf::op("x", "no_such_class"));
  unknown.input(ramps(1, 16));
  CHECK_THROWS_AS(unknown.run(), xf::config_error);
}
