// Tests of the built-in registration: every operator is there with its role and parameters, and a
// registered pipeline (source → GPU map on CPU → verify sink) runs through the registry's factories.
#include <doctest/doctest.h>

#include "operators/builtin.hpp"
#include "operators/sinks/null_sink.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

TEST_CASE("operators.builtin_registers_every_operator") {
  operator_registry registry;
  register_builtin_operators(registry);
  CHECK(registry.class_names() == std::vector<std::string>{"aes128_decrypt",
                                                           "aes128_encrypt",
                                                           "affinity_cards",
                                                           "affinity_shared",
                                                           "dataset_source",
                                                           "file_sink",
                                                           "file_source",
                                                           "fma",
                                                           "kmeans_assign",
                                                           "null_sink",
                                                           "pack",
                                                           "pass_through",
                                                           "prefetch_addresses_bytes",
                                                           "prefetch_addresses_indexed",
                                                           "prefetch_addresses_records",
                                                           "prefetch_assembler",
                                                           "prefetch_ranges",
                                                           "prefetch_source",
                                                           "prefetch_varlen_source",
                                                           "prefetch_writeback",
                                                           "query",
                                                           "raid6_encode",
                                                           "raid6_recover",
                                                           "random_source",
                                                           "readahead_file_source",
                                                           "scale",
                                                           "sequence_source",
                                                           "table_check",
                                                           "table_lookup",
                                                           "table_source",
                                                           "table_writer",
                                                           "text_source",
                                                           "unpack",
                                                           "verify_sink",
                                                           "word_count"});
  CHECK(registry.find("sequence_source")->info.role == operator_role::source);
  CHECK(registry.find("file_source")->info.find_param("path")->default_value == std::nullopt);
  CHECK(registry.find("verify_sink")->info.needs_reference);
  CHECK(registry.find("verify_sink")->info.role == operator_role::sink);
  const param_decl* mode = registry.find("verify_sink")->info.find_param("mode");
  REQUIRE(mode);
  CHECK(mode->choices == std::vector<std::string>{"exact", "checksum"});
  CHECK(registry.find("dataset_source")->info.role == operator_role::source);
  CHECK(registry.find("dataset_source")->info.replayable);
  const param_decl* dataset_frames = registry.find("dataset_source")->info.find_param("dataset_frames");
  REQUIRE(dataset_frames);
  CHECK(dataset_frames->min == 0);
  for (const char* gpu : {"scale", "fma", "pass_through", "prefetch_addresses_records",
                          "prefetch_addresses_bytes", "prefetch_addresses_indexed"}) {
    CAPTURE(gpu);
    CHECK(registry.find(gpu)->info.gpu);
    CHECK(registry.find(gpu)->info.role == operator_role::map);
  }
  const param_decl* iterations = registry.find("fma")->info.find_param("iterations");
  REQUIRE(iterations);
  CHECK(iterations->min == 1);
  CHECK(iterations->max == 4096);
}

TEST_CASE("operators.builtin_pipeline_through_factories") {
  operator_registry registry;
  register_builtin_operators(registry);
  const std::uint64_t frame_bytes = page_bytes;
  const std::uint64_t total = 5 * frame_bytes + 12;

  auto source_op = registry.find("sequence_source")->make_cpu({{"total_bytes", std::int64_t(total)}}, {});
  auto& source = dynamic_cast<cpu_source&>(*source_op);
  source.on_start(source_setup(frame_bytes, element_type::u32));
  auto map_op = registry.find("scale")->make_cpu({{"factor", 3.0}}, {});
  auto& map = dynamic_cast<cpu_map&>(*map_op);
  auto sink_op = registry.find("null_sink")->make_cpu({}, {});
  auto& sink = dynamic_cast<cpu_sink&>(*sink_op);

  for (std::uint64_t o = 0;; ++o) {
    frame_buffer in_buffer(frame_bytes, element_type::u32);
    frame_out produced = in_buffer.out();
    if (!source.produce(o, produced)) break;
    frame_buffer out_buffer(frame_bytes, element_type::u32);
    frame_out mapped = out_buffer.out();
    mapped.bytes = produced.bytes;
    const frame_in in{produced.data, produced.bytes, element_type::u32};
    map.on_frame(o, in, mapped);
    const auto* v = reinterpret_cast<const std::uint32_t*>(mapped.data);
    const std::uint64_t first = o * frame_bytes / sizeof(std::uint32_t);
    for (std::uint64_t k = 0; k < mapped.bytes / sizeof(std::uint32_t); ++k) REQUIRE(v[k] == 3 * (first + k));
    sink.on_frame(o, frame_in{mapped.data, mapped.bytes, element_type::u32});
  }
  CHECK(sink.counters().at("frames") == 6);
  CHECK(sink.counters().at("bytes") == total);
}
