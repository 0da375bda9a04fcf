// The file reader contract (framework/model/operator.hpp: gpu_file_reader) as the registry runs it on: cpu:
// files opened at start in the order `files` lists them, stages with their carry, reads through the direct
// backend, and the errors of a missing file, a range past the end and a frame the operator fails. Also
// that a reader placed on gpu plans onto the host executor until the GPU file cache exists.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "framework/model/registry.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/plan/plan.hpp"
#include "tests/framework/files/indexed_add.hpp"
#include "tests/framework/files/pattern_file.hpp"

namespace xf {
namespace {

const operator_registry& reader_registry() {
  static const operator_registry registry = [] {
    operator_registry r;
    r.add_gpu_operators<gpu_operator_list<indexed_add>>();
    return r;
  }();
  return registry;
}

template <class T>
T value_at(const std::vector<std::byte>& bytes, std::uint64_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

}  // namespace

TEST_CASE("file reader on cpu: stages with their carry read the bytes the index points at") {
  test::scratch_dir dir;
  const std::string index = test::write_pattern_file(dir, "index", 0, 4096);
  const std::string data = test::write_pattern_file(dir, "data", 1, 1 << 20);
  const std::vector<std::byte> index_bytes = test::pattern(0, 4096), data_bytes = test::pattern(1, 1 << 20);
  const operator_entry& entry = *reader_registry().find("indexed_add");
  CHECK(entry.info.reads_files);
  CHECK(entry.info.gpu);
  const std::uint64_t window = (1 << 20) - 4096;
  auto op = entry.make_cpu({{"index", index}, {"data", data}, {"window", std::int64_t(window)}}, {});
  auto& map = dynamic_cast<cpu_map&>(*op);
  operator_setup setup;
  setup.name = "adder";
  setup.inputs = {{"in", 4096, 4, element_type::u32, {}, {}}};
  setup.outputs = {{"out", 4096, 4, element_type::u32, {}, {}}};
  map.on_start(setup);
  for (std::uint64_t offset = 0; offset < 512; offset += 37) {
    CAPTURE(offset);
    std::vector<std::uint32_t> in(1024), out(1024, 0);
    for (std::uint32_t i = 0; i < 1024; ++i) in[i] = i * 3 + static_cast<std::uint32_t>(offset);
    frame_in fi{reinterpret_cast<const std::byte*>(in.data()), 4096, element_type::u32};
    frame_out fo{reinterpret_cast<std::byte*>(out.data()), 4096, 0, element_type::u32};
    map.on_frame(offset, fi, fo);
    CHECK(fo.bytes == 4096);
    const std::uint64_t at = value_at<std::uint64_t>(index_bytes, offset * 8) % window / 4 * 4;
    bool right = true;
    for (std::uint32_t i = 0; i < 1024; ++i)
      right = right && out[i] == in[i] + value_at<std::uint32_t>(data_bytes, at + 4 * i);
    CHECK(right);
  }
  // A frame the operator fails; an index past the index file's end (offset 512 reads bytes 4096..4104).
  std::vector<std::uint32_t> in(1024, 0xDEAD), out(1024);
  frame_in fi{reinterpret_cast<const std::byte*>(in.data()), 4096, element_type::u32};
  frame_out fo{reinterpret_cast<std::byte*>(out.data()), 4096, 0, element_type::u32};
  CHECK_THROWS_AS(map.on_frame(3, fi, fo), frame_failed);
  in.assign(1024, 1);
  const std::string past_end = "operator 'adder', topic 'in', offset 512: file '" + index +
                               "': the operator reads bytes [4096, 4104), past its size (4096 bytes)";
  CHECK_THROWS_WITH_AS(map.on_frame(512, fi, fo), doctest::Contains(past_end.c_str()), run_error);
  map.on_stop();
}

TEST_CASE("file reader on cpu: a missing file fails the start naming the operator and path") {
  test::scratch_dir dir;
  auto op =
      reader_registry()
          .find("indexed_add")
          ->make_cpu(
              {{"index", dir.file("none")}, {"data", dir.file("none")}, {"window", std::int64_t(4096)}}, {});
  operator_setup setup;
  setup.name = "adder";
  setup.inputs = {{"in", 4096, 4, element_type::u32, {}, {}}};
  CHECK_THROWS_WITH_AS(op->on_start(setup), doctest::Contains("operator 'adder', topic 'in'"), run_error);
}

TEST_CASE("file reader: placed on gpu, the device executor runs its frames whole, unstaged, one a block") {
  operator_registry registry;
  registry.add_gpu_operators<gpu_operator_list<indexed_add>>();
  struct stub_source final : public cpu_source {
    struct params {};
    static void describe(operator_schema<params>& s) { s.describe("stand-in"); }
    explicit stub_source(const params&) {}
    bool produce(std::uint64_t, frame_out&) override { return false; }
  };
  struct stub_sink final : public cpu_sink {
    struct params {};
    static void describe(operator_schema<params>& s) { s.describe("stand-in"); }
    explicit stub_sink(const params&) {}
    void on_frame(std::uint64_t, const frame_in&) override {}
  };
  registry.add<stub_source>("stub_source");
  registry.add<stub_sink>("stub_sink");
  topology_builder b("reader");
  b.topic("a");
  b.topic("b");
  b.link({}, op("src", "stub_source"), {"a"});
  b.link({"a"},
         op("add", "indexed_add")
             .on(placement::gpu)
             .param("index", "i")
             .param("data", "d")
             .param("window", "4KiB"),
         {"b"});
  b.link({"b"}, op("sink", "stub_sink"), {});
  topology_spec spec = b.build();
  CHECK_NOTHROW(validate_topology(spec, registry));
  plan_options options;
  options.device.usable = true;
  options.device.sm_count = 132;
  options.device.blocks_per_sm = [](int) { return 2; };
  options.device.compiled_in = [](std::type_index) { return true; };
  const plan p = make_plan(spec, registry, options);
  CHECK(p.executor == resolved_executor::device);
  const planned_operator& add = p.operators.at(1);
  REQUIRE(add.spec->name == "add");
  // Its stages span rounds, over which it holds the block's fetch: whole frames, read and written in place.
  CHECK(add.parts == 1);
  CHECK(add.items == 1);
  CHECK_FALSE(add.stage);
  CHECK_FALSE(add.stage_output);
  // Each block reads through a share of the cache of its own: fewer pages than blocks is refused.
  topology_spec small = spec;
  file_cache_spec cache;
  cache.size = 16 * 4096;
  small.runtime.file_cache = cache;
  CHECK_THROWS_WITH_AS(
      make_plan(small, registry, options),
      doctest::Contains("runtime.file_cache.size holds 16 pages of 4 KiB, fewer than the kernel's"),
      config_error);
  // The host executor's blocks (here 4) are fine with it.
  options.force_host = true;
  options.host_cores = 4;
  CHECK_NOTHROW(make_plan(small, registry, options));
}

}  // namespace xf
