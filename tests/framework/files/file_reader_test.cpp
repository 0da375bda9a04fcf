// The file reader contract (framework/operator.hpp: gpu_file_reader) as the registry runs it on: cpu:
// files opened at start in the order `files` lists them, stages with their carry, reads through the direct
// backend, and the errors of a missing file, a range past the end and a frame the operator fails. Also
// that the placement on gpu is refused until the GPU file cache exists.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "framework/config/spec_validation.hpp"
#include "framework/registry.hpp"
#include "framework/topology_builder.hpp"
#include "tests/framework/files/pattern_file.hpp"

namespace xf {
namespace {

/// Two stages per frame of u32 elements: stage 0 reads the 8-byte index word at (offset · 8) of the index
/// file and keeps it in the carry; stage 1 reads `count` u32 of the data file at the byte the index word
/// names (mod a window), and the output is input + data. A frame whose first element is 0xDEAD fails.
struct indexed_add {
  struct params {
    path_text index, data;
    std::uint64_t window = 0;  ///< bytes of the data file the index words address
  };
  static void describe(operator_schema<params>& s) {
    s.describe("adds data the index file points at (test reader)");
    s.parsed(&params::index, "index", "index file", std::string(), parse_path_text);
    s.parsed(&params::data, "data", "data file", std::string(), parse_path_text);
    s.bytes(&params::window, "window", "bytes the index words address", 0);
  }
  static void files(const params& p, file_list& out) {
    out.add(p.index, access_advice::random);
    out.add(p.data);
  }
  template <class T>
  XF_HOST_DEVICE static read_step reads(const params& p, const frame_task<T>& task, read_list& list) {
    if (task.stage == 0) {
      list.read(file_id{0}, task.offset * 8, 8);
      return read_step::more;
    }
    if (task.stage == 1) {
      std::uint64_t word = 0;
      std::memcpy(&word, task.carry, 8);
      list.read(file_id{1}, word % p.window / 4 * 4, task.count * sizeof(T));
      return read_step::more;
    }
    return read_step::done;
  }
  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    if (task.count > 0 && task.in[0] == T(0xDEAD)) task.fail(7);
    if (task.stage == 0) {
      const std::uint64_t word = task.files->template load<std::uint64_t>(file_id{0}, task.offset * 8);
      std::memcpy(task.carry, &word, 8);
      return;
    }
    std::uint64_t word = 0;
    std::memcpy(&word, task.carry, 8);
    const std::uint64_t at = word % p.window / 4 * 4;
    for (std::uint64_t i = 0; i < task.count; ++i) {
      task.out[i] = task.in[i] + task.files->template load<T>(file_id{1}, at + i * sizeof(T));
    }
  }
};

static_assert(gpu_file_reader<indexed_add>);

const operator_registry& reader_registry() {
  static const operator_registry registry = [] {
    operator_registry r;
    r.add<indexed_add>("indexed_add");
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
  auto op = entry.make_cpu({{"index", index}, {"data", data}, {"window", std::int64_t(window)}});
  auto& map = dynamic_cast<cpu_map&>(*op);
  map.on_start({"adder", {{"in", 4096, 4, element_type::u32}}, {{"out", 4096, 4, element_type::u32}}});
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
    for (std::uint32_t i = 0; i < 1024; ++i) right = right && out[i] == in[i] + value_at<std::uint32_t>(data_bytes, at + 4 * i);
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
  auto op = reader_registry().find("indexed_add")->make_cpu(
      {{"index", dir.file("none")}, {"data", dir.file("none")}, {"window", std::int64_t(4096)}});
  CHECK_THROWS_WITH_AS(op->on_start({"adder", {{"in", 4096, 4, element_type::u32}}, {}}),
                       doctest::Contains("operator 'adder', topic 'in'"), run_error);
}

TEST_CASE("file reader: placed on gpu, validation asks for on: cpu until the GPU file cache exists") {
  operator_registry registry;
  registry.add<indexed_add>("indexed_add");
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
  b.link({"a"}, op("add", "indexed_add").on(placement::gpu).param("index", "i").param("data", "d").param("window", "4KiB"),
         {"b"});
  b.link({"b"}, op("sink", "stub_sink"), {});
  topology_spec spec = b.build();
  CHECK_THROWS_WITH_AS(validate_topology(spec, registry),
                       doctest::Contains("operator 'add': class 'indexed_add' reads files, which it does on: cpu for now"),
                       config_error);
  topology_spec on_cpu = spec;
  for (operator_spec& o : on_cpu.operators)
    if (o.name == "add") o.on = placement::cpu;
  CHECK_NOTHROW(validate_topology(on_cpu, registry));
}

}  // namespace xf
