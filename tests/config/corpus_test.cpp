// The topology corpora: every file in tests/config/bad/ must fail with the first problem its header
// names; every file in tests/config/good/ must load, survive to_yaml → load unchanged, and (for those with a
// C++ twin below) equal the spec the topology_builder makes; the datatypes of good/datatypes.yaml read,
// shared and written back as the library and the builder make them. bad/ uses built-in class names only,
// since tests/e2e runs it against xeflow-run's registry too; tests/config/bad_test_classes/ holds the bad
// topologies that need the test-only classes (extended_registry: object slots no built-in declares yet).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/units.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/spec_yaml.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/model/yaml_loader.hpp"
#include "tests/config/test_registry.hpp"

namespace fs = std::filesystem;
using namespace xf;

namespace {

fs::path source_root() {
  const char* root = std::getenv("XF_SOURCE_ROOT");
  REQUIRE_MESSAGE(root != nullptr, "XF_SOURCE_ROOT is set by meson test (run the suite through meson)");
  return fs::path(root);
}

std::vector<fs::path> yaml_files(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// The header "# expect: LINE:COL: error: MESSAGE" of a bad topology.
struct expectation {
  int line = 0;
  int column = 0;
  std::string message;
};

expectation read_expectation(const fs::path& file) {
  std::ifstream in(file);
  std::string header;
  std::getline(in, header);
  const std::string marker = "# expect: ";
  REQUIRE_MESSAGE(header.rfind(marker, 0) == 0, file << " must start with '" << marker << "'");
  const std::string rest = header.substr(marker.size());
  const std::size_t colon1 = rest.find(':');
  const std::size_t colon2 = rest.find(':', colon1 + 1);
  const std::string error_marker = ": error: ";
  REQUIRE_MESSAGE(rest.compare(colon2, error_marker.size(), error_marker) == 0, file << ": malformed header");
  return {std::stoi(rest.substr(0, colon1)), std::stoi(rest.substr(colon1 + 1, colon2 - colon1 - 1)),
          rest.substr(colon2 + error_marker.size())};
}

// ---- the C++ twins of the good topologies ----------------------------------------------------------------

topology_spec pingpong_builder() {
  topology_builder b("pingpong");
  b.topic("c2g").frame_bytes(64 * KiB).capacity(64).element(element_type::u32);
  b.topic("g2c").frame_bytes(64 * KiB).capacity(64);
  b.link({}, op("source", "sequence_source").threads(2).param("total_bytes", "1GiB").param("seed", 1),
         {"c2g"});
  b.link({"c2g"}, op("scale", "scale").on(placement::gpu).param("factor", 2.0), {"g2c"});
  b.link({"g2c"}, op("verify", "verify_sink").threads(2), {});
  b.runtime().executor(executor_kind::automatic).warps_per_block(8).partition(partition_policy::uniform);
  return b.build();
}

topology_spec fanout_builder() {
  topology_builder b("fanout");
  b.topic("raw").frame_bytes(128 * KiB).capacity(32).element(element_type::f32);
  b.topic("scaled").frame_bytes(128 * KiB).capacity(32).element(element_type::f32);
  b.topic("fused").frame_bytes(256 * KiB).capacity(16).element(element_type::f32);
  b.link({}, op("source", "random_source").threads(2).param("total_bytes", 256 * MiB).param("seed", 42),
         {"raw"});
  b.link({"raw"}, op("scale", "scale").on(placement::gpu).param("factor", 0.5), {"scaled"});
  b.link({"raw"}, op("fma", "fma").on(placement::gpu).param("iterations", 16), {"fused"});
  b.link({"raw"}, op("raw_verify", "verify_sink"), {});
  b.link({"scaled"}, op("scaled_verify", "verify_sink").threads(2), {});
  b.link({"scaled"}, op("count", "null_sink"), {});
  b.link({"fused"}, op("fused_verify", "verify_sink"), {});
  b.runtime().executor(executor_kind::host).blocks(4).max_sleep_us(0);
  return b.build();
}

topology_spec c_g2c_builder() {
  topology_builder b("c_g2c");
  b.topic("t0").transfer(transfer_mode::dma);
  b.topic("t1");
  b.topic("t2").transfer(transfer_mode::mapped);
  b.link({}, op("source", "sequence_source").threads(2).param("total_bytes", "1GiB").param("seed", 1),
         {"t0"});
  b.link({"t0"}, op("g1", "scale").on(placement::gpu).param("factor", 3), {"t1"});
  b.link({"t1"}, op("g2", "fma").on(placement::gpu).param("iterations", 4).param("a", 3.0).param("b", 1.0),
         {"t2"});
  b.link({"t2"}, op("verify", "verify_sink").threads(2), {});
  return b.build();
}

topology_spec explicit_partition_builder() {
  topology_builder b("explicit");
  for (const char* t : {"t0", "t1"}) b.topic(t).frame_bytes(16 * KiB).capacity(8).element(element_type::i64);
  for (const char* t : {"t2", "t3"}) b.topic(t).frame_bytes(32 * KiB).capacity(8).element(element_type::i64);
  b.topic("t4");
  b.link({}, op("source", "sequence_source").threads(3).param("total_bytes", "1MiB"), {"t0"});
  b.link({"t0"},
         op("g1", "fma").on(placement::gpu).warps(6).param("iterations", 64).param("a", 2.0).param("b", -1.0),
         {"t1"});
  b.link({"t1"}, op("c1", "pass_through").on(placement::cpu).threads(2), {"t2"});
  b.link({"t2"}, op("g2", "scale").on(placement::gpu).warps(10), {"t3"});
  b.link({"t3"}, op("verify", "verify_sink"), {});
  b.link({}, op("logs_a", "file_source").param("path", "/var/log/a: b.log"), {"t4"});
  b.link({}, op("logs_b", "file_source").param("path", "/var/log/b.log"), {"t4"});
  b.link({"t4"}, op("archive", "file_sink").param("path", "/tmp/archive.bin"), {});
  b.runtime()
      .executor(executor_kind::host)
      .blocks(2)
      .warps_per_block(16)
      .partition(partition_policy::explicit_warps);
  return b.build();
}

topology_spec auto_online_partition_builder() {
  topology_builder b("tuned");
  for (const char* t : {"t0", "t1", "t2"}) b.topic(t).frame_bytes(64 * KiB).capacity(64);
  b.link({}, op("source", "sequence_source").threads(2).param("total_bytes", "64MiB"), {"t0"});
  b.link({"t0"}, op("light", "fma").on(placement::gpu).param("iterations", 4).param("a", 3.0).param("b", 1.0),
         {"t1"});
  b.link({"t1"},
         op("heavy", "fma").on(placement::gpu).param("iterations", 64).param("a", 3.0).param("b", 1.0),
         {"t2"});
  b.link({"t2"}, op("verify", "verify_sink"), {});
  b.runtime()
      .warps_per_block(32)
      .partition(partition_policy::auto_online)
      .tuning({.samples = 6400, .retune_spread_percent = 40, .retune_hold_ms = 250});
  return b.build();
}

topology_spec datatypes_builder() {
  namespace dt = xf::dt;
  topology_builder b("datatypes");
  b.topic("arrays").frame_bytes(256 * KiB).capacity(8).element(element_type::f64);
  b.topic("faces").frame_bytes(8 * KiB).capacity(8).element(element_type::f64);
  b.topic("planes").frame_bytes(256 * KiB).capacity(8).element(element_type::f64);
  for (const char* t : {"records", "fields"})
    b.topic(t).frame_bytes(4 * KiB).capacity(8).element(element_type::u8);
  const dt::datatype face =
      dt::subarray({32, 32, 32}, {32, 32, 1}, {0, 0, 7}, dt::array_order::c, dt::primitive::f64);
  const dt::datatype column = dt::vector(4, 1, 8, dt::primitive::f64);
  const dt::datatype cell =
      dt::struct_type({1, 3}, {0, 8}, {dt::primitive::i32, dt::contiguous(3, dt::primitive::f32)});
  b.datatype("face", face)
      .datatype("plane", face)
      .datatype("column", column)
      .datatype("columns", dt::hvector(2, 3, 256, column))
      .datatype("picks", dt::indexed({2, 1}, {0, 5}, cell))
      .datatype("byte_picks", dt::hindexed({1, 2}, {0, 64}, dt::primitive::i32))
      .datatype("blocks", dt::indexed_block(2, {0, 4, 9}, dt::primitive::u16))
      .datatype("byte_blocks", dt::hindexed_block(1, {0, 8, 16}, dt::contiguous(2, dt::primitive::character)))
      .datatype("cell", cell)
      .datatype("fortran_block",
                dt::subarray({4, 6}, {2, 3}, {1, 2}, dt::array_order::fortran, dt::primitive::u8))
      .datatype("record", dt::resized(cell, 0, 64));
  b.link({}, op("source", "random_source").threads(2).param("total_bytes", "64MiB").param("seed", 7),
         {"arrays"});
  b.link({"arrays"}, op("pack", "pack").on(placement::gpu).param("type", "plane"), {"faces"});
  b.link({"faces"}, op("unpack", "unpack").on(placement::gpu).param("type", face), {"planes"});
  b.link({"planes"}, op("verify", "verify_sink"), {});
  b.link({}, op("records", "sequence_source"), {"records"});
  b.link({"records"},
         op("fields", "pack").on(placement::gpu).param("type", dt::resized(cell, 0, 64)).param("count", 64),
         {"fields"});
  b.link({"fields"}, op("discard", "null_sink"), {});
  return b.build();
}

topology_spec ranks_builder() {
  topology_builder b("ranks");
  b.topic("c2g").frame_bytes(64 * KiB).capacity(64);
  b.topic("g2c").frame_bytes(64 * KiB).capacity(64);
  b.link(
      {},
      op("source", "sequence_source").rank("writer").threads(2).param("total_bytes", "1GiB").param("seed", 1),
      {"c2g"});
  b.link({"c2g"}, op("scale", "scale").on(placement::gpu).rank("reader").device(1).param("factor", 2.0),
         {"g2c"});
  b.link({"g2c"}, op("verify", "verify_sink").rank("reader"), {});
  b.link({"g2c"}, op("count", "null_sink").rank(2), {});
  b.runtime().rank_name("writer", 0).rank_name("reader", 1);
  return b.build();
}

/// Loads every file of `folder` with `registry`: each must fail with the first problem its header names.
void check_bad_corpus(const fs::path& folder, const operator_registry& registry) {
  for (const auto& file : yaml_files(folder)) {
    INFO("topology: " << file.string());
    const expectation expected = read_expectation(file);
    try {
      load_topology_file(file.string(), registry);
      FAIL_CHECK("loaded without a problem");
    } catch (const config_error& e) {
      const diagnostic& first = e.first();
      INFO("all problems:\n" << std::string(e.what()));
      CHECK(first.pos.file == file.string());
      CHECK(first.pos.line == expected.line);
      CHECK(first.pos.column == expected.column);
      CHECK(first.message == expected.message);
      // The error text is one "file:line:column: error: message" line per problem, first one first.
      const std::string text = e.what();
      CHECK(text.substr(0, text.find('\n')) == first.str());
    }
  }
}

}  // namespace

TEST_CASE("config.bad_corpus_reports_its_first_problem") {
  CHECK(yaml_files(source_root() / "tests/config/bad").size() >= 32);
  check_bad_corpus(source_root() / "tests/config/bad", test::config_registry());
}

TEST_CASE("config.bad_corpus_of_test_classes_reports_its_first_problem") {
  CHECK(yaml_files(source_root() / "tests/config/bad_test_classes").size() >= 11);
  check_bad_corpus(source_root() / "tests/config/bad_test_classes", test::extended_registry());
}

TEST_CASE("config.bad_corpus_headers_are_unique") {
  // Each file pins a different problem: a copy-pasted header would hide a missing check.
  std::map<std::string, std::string> seen;
  std::vector<fs::path> files = yaml_files(source_root() / "tests/config/bad");
  for (const auto& file : yaml_files(source_root() / "tests/config/bad_test_classes")) files.push_back(file);
  for (const auto& file : files) {
    const expectation e = read_expectation(file);
    // No structured bindings inside doctest's macros: clang (the TSan build) cannot capture them.
    const auto inserted = seen.emplace(e.message, file.filename().string());
    const std::string& first = inserted.first->second;
    CHECK_MESSAGE(inserted.second, file.filename().string() << " repeats the message of " << first);
  }
}

TEST_CASE("config.good_corpus_loads_and_round_trips") {
  const auto files = yaml_files(source_root() / "tests/config/good");
  CHECK(files.size() >= 4);
  for (const auto& file : files) {
    INFO("topology: " << file.string());
    topology_spec spec;
    REQUIRE_NOTHROW(spec = load_topology_file(file.string(), test::config_registry()));
    CHECK(spec.source_name == file.string());
    CHECK_FALSE(spec.operators.empty());
    const std::string text = to_yaml(spec);
    INFO("to_yaml:\n" << text);
    topology_spec again;
    REQUIRE_NOTHROW(again = load_topology_text(text, "<round trip>", test::config_registry()));
    CHECK(again == spec);
    CHECK(to_yaml(again) == text);  // canonical: a second trip changes nothing
  }
}

TEST_CASE("config.good_corpus_matches_the_builder") {
  const std::map<std::string, topology_spec (*)()> twins{
      {"pingpong.yaml", pingpong_builder},
      {"fanout.yaml", fanout_builder},
      {"c_g2c.yaml", c_g2c_builder},
      {"explicit_partition.yaml", explicit_partition_builder},
      {"auto_online_partition.yaml", auto_online_partition_builder},
      {"datatypes.yaml", datatypes_builder},
      {"ranks.yaml", ranks_builder}};
  for (const auto& twin : twins) {
    const std::string& name = twin.first;
    const auto build = twin.second;
    INFO("topology: " << name);
    const topology_spec loaded =
        load_topology_file((source_root() / "tests/config/good" / name).string(), test::config_registry());
    topology_spec built = build();
    REQUIRE_NOTHROW(validate_topology(built, test::config_registry()));
    CHECK(built.positions.empty());
    CHECK(built.source_name == "<builder>");
    INFO("loaded:\n" << to_yaml(loaded) << "built:\n" << to_yaml(built));
    CHECK(built == loaded);
  }
}

TEST_CASE("config.loader_reads_each_topics_transfer") {
  const topology_spec spec =
      load_topology_file((source_root() / "tests/config/good/c_g2c.yaml").string(), test::config_registry());
  REQUIRE(spec.topics.size() == 3);
  CHECK(spec.topics[0].transfer == transfer_mode::dma);
  CHECK(spec.topics[1].transfer == transfer_mode::automatic);
  CHECK(spec.topics[2].transfer == transfer_mode::mapped);
}

TEST_CASE("config.loader_records_positions") {
  const topology_spec spec = load_topology_file((source_root() / "tests/config/good/pingpong.yaml").string(),
                                                test::config_registry());
  auto at = [&](const std::string& path) {
    const source_pos p = spec.position_of(path);
    return std::to_string(p.line) + ":" + std::to_string(p.column);
  };
  CHECK(at("name") == "2:7");
  CHECK(at("name#key") == "2:1");
  CHECK(at("topics.c2g#key") == "4:3");
  CHECK(at("topics.c2g") == "4:8");
  CHECK(at("topics.c2g.capacity") == "4:38");
  CHECK(at("topics.c2g.capacity#key") == "4:28");
  CHECK(at("operators.source") == "8:5");
  CHECK(at("operators.source.threads") == "10:14");
  CHECK(at("operators.source.params.total_bytes") == "12:27");
  CHECK(at("operators.scale.inputs[0]") == "16:14");
  CHECK(at("operators.scale.inputs") == "16:13");
  CHECK(at("runtime.partition") == "27:14");
  // Unrecorded paths fall back to their closest recorded parent.
  CHECK(at("operators.scale.warps") == at("operators.scale"));
}

TEST_CASE("config.loader_reads_placement_and_resolves_rank_names") {
  const topology_spec spec =
      load_topology_file((source_root() / "tests/config/good/ranks.yaml").string(), test::config_registry());
  const operator_spec& source = *spec.find_operator("source");
  const operator_spec& scale = *spec.find_operator("scale");
  const operator_spec& count = *spec.find_operator("count");
  // A name keeps its text and gets its number from runtime.ranks (0 too); a number has no name.
  CHECK(source.rank == 0);
  CHECK(source.rank_name == "writer");
  CHECK(scale.rank == 1);
  CHECK(scale.rank_name == "reader");
  CHECK(spec.find_operator("verify")->rank == 1);
  CHECK(count.rank == 2);
  CHECK(count.rank_name.empty());
  CHECK(scale.device == std::optional<std::uint32_t>{1});
  CHECK_FALSE(source.device.has_value());
  CHECK(spec.runtime.ranks == std::map<std::string, std::uint32_t>{{"reader", 1}, {"writer", 0}});
  auto at = [&](const std::string& path) {
    const source_pos p = spec.position_of(path);
    return std::to_string(p.line) + ":" + std::to_string(p.column);
  };
  CHECK(at("operators.source.rank") == "11:11");
  CHECK(at("operators.scale.rank") == "15:40");
  CHECK(at("operators.scale.rank#key") == "15:34");
  CHECK(at("operators.scale.device") == "15:56");
  CHECK(at("operators.count.rank") == "17:35");
  CHECK(at("runtime.ranks") == "19:10");
  CHECK(at("runtime.ranks#key") == "19:3");
  CHECK(at("runtime.ranks.reader") == "19:30");
  CHECK(at("runtime.ranks.reader#key") == "19:22");

  // Written back: a name as a name, a number as a number, rank 0 unnamed and no device left out.
  const std::string text = to_yaml(spec);
  INFO(text);
  CHECK(text.find("    rank: writer\n") != std::string::npos);
  CHECK(text.find("    rank: reader\n    device: 1\n") != std::string::npos);
  CHECK(text.find("    rank: 2\n") != std::string::npos);
  CHECK(text.find("  ranks: {reader: 1, writer: 0}\n") != std::string::npos);
  CHECK(to_yaml(load_topology_file((source_root() / "tests/config/good/pingpong.yaml").string(),
                                   test::config_registry()))
            .find("rank") == std::string::npos);
  // Renumbering a named rank moves every operator that names it, and the file still says the name.
  const topology_spec moved = load_topology_file((source_root() / "tests/config/good/ranks.yaml").string(),
                                                 test::config_registry(), {"runtime.ranks.reader=5"});
  CHECK(moved.find_operator("scale")->rank == 5);
  CHECK(moved.find_operator("verify")->rank == 5);
  CHECK(to_yaml(moved).find("    rank: reader\n") != std::string::npos);
}

TEST_CASE("config.loader_applies_defaults") {
  const topology_spec spec = load_topology_text(R"(operators:
  src: {class: sequence_source, outputs: t}
  g: {class: pass_through, inputs: t, outputs: u}
  sink: {class: null_sink, inputs: [u]}
topics: {t: , u: {}}
)",
                                                "defaults.yaml", test::config_registry());
  CHECK(spec.name.empty());
  REQUIRE(spec.topics.size() == 2);
  topic_spec expected;
  expected.name = "t";
  expected.frame_bytes = 64 * KiB;
  expected.capacity = 64;
  expected.element = element_type::u32;
  expected.layout = frame_layout::row;
  CHECK(spec.topics[0] == expected);
  REQUIRE(spec.operators.size() == 3);
  CHECK(spec.operators[0].on == placement::cpu);  // a CPU-only class
  CHECK(spec.operators[1].on == placement::gpu);  // a class with a GPU compute
  CHECK(spec.operators[1].inputs == std::vector<std::string>{"t"});
  CHECK(spec.operators[0].threads == 1);
  CHECK(spec.operators[1].warps == 0);
  CHECK(spec.operators[1].rank == 0);
  CHECK(spec.operators[1].rank_name.empty());
  CHECK_FALSE(spec.operators[1].device.has_value());
  CHECK(spec.runtime == runtime_spec{});
}

TEST_CASE("config.to_yaml_is_canonical") {
  topology_spec spec = pingpong_builder();
  validate_topology(spec, test::config_registry());
  CHECK(to_yaml(spec) == R"(name: pingpong
topics:
  c2g: {frame_size: 64KiB, capacity: 64, element: u32, layout: row, transfer: auto}
  g2c: {frame_size: 64KiB, capacity: 64, element: u32, layout: row, transfer: auto}
operators:
  source:
    class: sequence_source
    on: cpu
    outputs: [c2g]
    threads: 2
    params: {seed: 1, total_bytes: 1073741824}
  scale:
    class: scale
    on: gpu
    inputs: [c2g]
    outputs: [g2c]
    params: {factor: 2}
  verify:
    class: verify_sink
    on: cpu
    inputs: [g2c]
    threads: 2
runtime:
  executor: auto
  blocks: 0
  warps_per_block: 8
  partition: uniform
  coherence: {catalog: read_mostly, index: placed, frames: placed}
  watchdog_ms: 10000
  timer_slack_us: 1
)");
  CHECK(exact_bytes(64 * KiB) == "64KiB");
  CHECK(exact_bytes(3 * GiB) == "3GiB");
  CHECK(exact_bytes(4097) == "4097");
  CHECK(exact_bytes(0) == "0");
  CHECK(exact_bytes(2 * TiB) == "2TiB");
  CHECK(exact_bytes(1536 * KiB) == "1536KiB");
}

TEST_CASE("config.to_yaml_keeps_awkward_strings_and_reals") {
  topology_builder b("name: with # characters");
  b.topic("t");
  b.link({}, op("src", "file_source").param("path", "  ~ [odd]: 'path'\n"), {"t"});
  b.link({"t"}, op("mul", "scale").on(placement::gpu).param("factor", 0.1), {"u"});
  b.topic("u");
  b.link({"u"}, op("out", "file_sink").param("path", ""), {});
  topology_spec spec = b.build();
  validate_topology(spec, test::config_registry());
  const topology_spec loaded = load_topology_text(to_yaml(spec), "<text>", test::config_registry());
  CHECK(loaded == spec);
  CHECK(std::get<double>(loaded.find_operator("mul")->params.at("factor")) == 0.1);
  CHECK(to_yaml(spec).find("factor: 0.1}") != std::string::npos);  // shortest exact form
}

// ---- datatypes (framework/model/datatype_yaml.hpp) -----------------------------------------------------
// Every constructor read as the library builds it, names shared as nodes and written back as names, inline
// parameters, overrides, the builder, and the problems bad/ does not pin (a cycle of one, the library's
// depth bound, several problems at once, a builder spec's).

namespace {

fs::path good_datatypes() {
  return source_root() / "tests/config/good/datatypes.yaml";
}

const dt::datatype& named(const topology_spec& spec, const std::string& name) {
  const datatype_spec* d = spec.find_datatype(name);
  REQUIRE_MESSAGE(d != nullptr, "no datatype " << name);
  return d->type;
}

const dt::datatype& param_type(const topology_spec& spec, const std::string& op, const std::string& key) {
  const operator_spec* o = spec.find_operator(op);
  REQUIRE(o != nullptr);
  const auto it = o->params.find(key);
  REQUIRE(it != o->params.end());
  REQUIRE(std::holds_alternative<dt::datatype>(it->second));
  return std::get<dt::datatype>(it->second);
}

/// A pack topology around `datatypes` (YAML lines of the section) whose pack takes `type`.
std::string pack_topology(const std::string& datatypes, const std::string& type) {
  return "name: t\n"
         "topics:\n"
         "  arrays: {frame_size: 256KiB, element: f64}\n"
         "  faces: {frame_size: 8KiB, element: f64}\n"
         "datatypes:\n" +
         datatypes +
         "operators:\n"
         "  source: {class: random_source, outputs: [arrays]}\n"
         "  pack: {class: pack, inputs: [arrays], outputs: [faces], params: {type: " +
         type +
         "}}\n"
         "  sink: {class: null_sink, inputs: [faces]}\n";
}

/// Every problem loading `text` finds, one "line:column: message" a line.
std::string load_problem_lines(const std::string& text) {
  try {
    load_topology_text(text, "t.yaml", test::config_registry());
  } catch (const config_error& e) {
    std::string all;
    for (const diagnostic& d : e.problems())
      all += std::to_string(d.pos.line) + ":" + std::to_string(d.pos.column) + ": " + d.message + "\n";
    return all;
  }
  return "";
}

}  // namespace

TEST_CASE("datatype_yaml.every_constructor_reads_as_the_library_builds_it") {
  const topology_spec spec = load_topology_file(good_datatypes().string(), test::config_registry());
  const dt::datatype face =
      dt::subarray({32, 32, 32}, {32, 32, 1}, {0, 0, 7}, dt::array_order::c, dt::primitive::f64);
  const dt::datatype column = dt::vector(4, 1, 8, dt::primitive::f64);
  const dt::datatype cell =
      dt::struct_type({1, 3}, {0, 8}, {dt::primitive::i32, dt::contiguous(3, dt::primitive::f32)});
  CHECK(named(spec, "face") == face);
  CHECK(named(spec, "column") == column);
  CHECK(named(spec, "columns") == dt::hvector(2, 3, 256, column));
  CHECK(named(spec, "picks") == dt::indexed({2, 1}, {0, 5}, cell));
  CHECK(named(spec, "byte_picks") == dt::hindexed({1, 2}, {0, 64}, dt::primitive::i32));
  CHECK(named(spec, "blocks") == dt::indexed_block(2, {0, 4, 9}, dt::primitive::u16));
  CHECK(named(spec, "byte_blocks") ==
        dt::hindexed_block(1, {0, 8, 16}, dt::contiguous(2, dt::primitive::character)));
  CHECK(named(spec, "cell") == cell);
  CHECK(named(spec, "fortran_block") ==
        dt::subarray({4, 6}, {2, 3}, {1, 2}, dt::array_order::fortran, dt::primitive::u8));
  CHECK(named(spec, "record") == dt::resized(cell, 0, 64));
  // A different order or primitive is a different type: the comparisons above can fail.
  CHECK_FALSE(named(spec, "fortran_block") ==
              dt::subarray({4, 6}, {2, 3}, {1, 2}, dt::array_order::c, dt::primitive::u8));
  CHECK_FALSE(named(spec, "byte_blocks") ==
              dt::hindexed_block(1, {0, 8, 16}, dt::contiguous(2, dt::primitive::byte)));
  // Declaration order, whatever order the references go in.
  REQUIRE(spec.datatypes.size() == 11);
  CHECK(spec.datatypes[0].name == "face");
  CHECK(spec.datatypes[4].name == "picks");
  CHECK(spec.datatypes[8].name == "cell");
}

TEST_CASE("datatype_yaml.references_share_the_named_node") {
  const topology_spec spec = load_topology_file(good_datatypes().string(), test::config_registry());
  CHECK(named(spec, "plane").same_node(named(spec, "face")));
  CHECK(named(spec, "columns").child().same_node(named(spec, "column")));
  CHECK(named(spec, "picks").child().same_node(named(spec, "cell")));  // named before it was declared
  CHECK(named(spec, "record").child().same_node(named(spec, "cell")));
  CHECK(param_type(spec, "pack", "type").same_node(named(spec, "face")));
  CHECK(param_type(spec, "unpack", "type").same_node(named(spec, "face")));
  // Written inline: equal to `record`, a node of its own whose child is the named `cell`.
  const dt::datatype& inline_type = param_type(spec, "fields", "type");
  CHECK(inline_type == named(spec, "record"));
  CHECK_FALSE(inline_type.same_node(named(spec, "record")));
  CHECK(inline_type.child().same_node(named(spec, "cell")));
}

TEST_CASE("datatype_yaml.to_yaml_writes_references_as_names") {
  const topology_spec spec = load_topology_file(good_datatypes().string(), test::config_registry());
  const std::string text = to_yaml(spec);
  INFO(text);
  CHECK(text.find("plane: face\n") != std::string::npos);
  CHECK(text.find("of: column}") != std::string::npos);
  CHECK(text.find("of: cell}") != std::string::npos);
  CHECK(text.find("types: [i32, {contiguous: {count: 3, of: f32}}]") != std::string::npos);
  CHECK(text.find("order: fortran") != std::string::npos);
  CHECK(text.find("type: face") != std::string::npos);  // `plane` is `face`, declared first
  CHECK(text.find("{count: 64, type: {resized: {lb: 0, extent: 64, of: cell}}}") != std::string::npos);
  const topology_spec again = load_topology_text(text, "<round trip>", test::config_registry());
  CHECK(again == spec);
  CHECK(param_type(again, "fields", "type").child().same_node(named(again, "cell")));
}

TEST_CASE("datatype_yaml.builder_types_are_written_by_name_or_inline") {
  const dt::datatype face =
      dt::subarray({32, 32, 32}, {32, 32, 1}, {0, 0, 7}, dt::array_order::c, dt::primitive::f64);
  const auto build = [&](const dt::datatype& type) {
    topology_builder b("faces");
    b.topic("arrays").frame_bytes(256 * KiB).element(element_type::f64);
    b.topic("faces").frame_bytes(8 * KiB).element(element_type::f64);
    b.datatype("face", face);
    b.link({}, op("source", "random_source"), {"arrays"});
    b.link({"arrays"}, op("pack", "pack").on(placement::gpu).param("type", type), {"faces"});
    b.link({"faces"}, op("sink", "null_sink"), {});
    topology_spec spec = b.build();
    validate_topology(spec, test::config_registry());
    return spec;
  };
  // The declared node: its name. An equal type built apart: inline. Both load back equal.
  const topology_spec by_node = build(face);
  CHECK(to_yaml(by_node).find("params: {type: face}") != std::string::npos);
  const topology_spec apart =
      build(dt::subarray({32, 32, 32}, {32, 32, 1}, {0, 0, 7}, dt::array_order::c, dt::primitive::f64));
  CHECK(to_yaml(apart).find("params: {type: {subarray: {sizes: [32, 32, 32]") != std::string::npos);
  for (const topology_spec* spec : {&by_node, &apart}) {
    const topology_spec again = load_topology_text(to_yaml(*spec), "<builder>", test::config_registry());
    CHECK(again == *spec);
  }
  // A name given as text resolves at validation, to the declared node.
  topology_builder b("faces");
  b.topic("arrays").frame_bytes(256 * KiB).element(element_type::f64);
  b.topic("faces").frame_bytes(8 * KiB).element(element_type::f64);
  b.datatype("face", face);
  b.link({}, op("source", "random_source"), {"arrays"});
  b.link({"arrays"}, op("pack", "pack").on(placement::gpu).param("type", "face"), {"faces"});
  b.link({"faces"}, op("sink", "null_sink"), {});
  topology_spec by_name = b.build();
  validate_topology(by_name, test::config_registry());
  CHECK(param_type(by_name, "pack", "type").same_node(face));
}

TEST_CASE("datatype_yaml.builder_problems_name_the_builder") {
  topology_builder b("faces");
  b.topic("arrays").frame_bytes(256 * KiB).element(element_type::f64);
  b.topic("faces").frame_bytes(8 * KiB).element(element_type::f64);
  b.datatype("f64", dt::contiguous(2, dt::primitive::f64));
  b.link({}, op("source", "random_source"), {"arrays"});
  b.link({"arrays"}, op("pack", "pack").on(placement::gpu).param("type", "face"), {"faces"});
  b.link({"faces"}, op("sink", "null_sink"), {});
  topology_spec spec = b.build();
  try {
    validate_topology(spec, test::config_registry());
    FAIL("validated");
  } catch (const config_error& e) {
    const std::string text = e.what();
    CHECK(text.find("<builder>: error: datatype name 'f64' is a primitive's") != std::string::npos);
    CHECK(text.find("parameter 'type': no datatype is named 'face'") != std::string::npos);
  }
}

TEST_CASE("datatype_yaml.set_overrides_a_datatype_and_a_parameter") {
  // The override changes `face`, and `plane`, its other name, with it.
  const topology_spec moved = load_topology_file(good_datatypes().string(), test::config_registry(),
                                                 {"datatypes.face.subarray.starts=[0, 0, 9]"});
  CHECK(named(moved, "plane").starts()[2] == 9);
  CHECK(param_type(moved, "pack", "type").starts()[2] == 9);
  const topology_spec inline_set = load_topology_file(good_datatypes().string(), test::config_registry(),
                                                      {"operators.pack.params.type={subarray: {sizes: [32, "
                                                       "32, 32], subsizes: [32, 1, 32], starts: [0, 3, 0], "
                                                       "of: f64}}"});
  CHECK(param_type(inline_set, "pack", "type").subsizes()[1] == 1);
  // A problem inside an override's value is placed in the override.
  try {
    load_topology_file(good_datatypes().string(), test::config_registry(),
                       {"datatypes.face.subarray.order=C"});
    FAIL("loaded");
  } catch (const config_error& e) {
    CHECK(e.first().pos.file == "--set datatypes.face.subarray.order=C");
    CHECK(e.first().pos.column == 31);  // the C
    CHECK(e.first().message ==
          "datatype 'face': subarray: order must be one of c, fortran, not 'C' (did you mean 'c'?)");
  }
}

TEST_CASE("datatype_yaml.a_datatype_that_contains_itself_is_a_cycle") {
  CHECK(load_problem_lines(pack_topology("  face: {contiguous: {count: 2, of: face}}\n", "face")) ==
        "6:37: datatype 'face': 'face' -> 'face' is a cycle: a datatype cannot contain itself\n");
  CHECK(load_problem_lines(pack_topology("  face: face\n", "face")) ==
        "6:9: datatype 'face': 'face' -> 'face' is a cycle: a datatype cannot contain itself\n");
  // Three names around: reported once, where the last reference closes it.
  CHECK(load_problem_lines(pack_topology("  a: {contiguous: {count: 2, of: b}}\n"
                                         "  b: {contiguous: {count: 2, of: c}}\n"
                                         "  c: {contiguous: {count: 2, of: a}}\n",
                                         "a")) ==
        "8:34: datatype 'c': 'a' -> 'b' -> 'c' -> 'a' is a cycle: a datatype "
        "cannot contain itself\n");
}

TEST_CASE("datatype_yaml.the_library_depth_bound_is_placed_at_the_child") {
  // d1 .. d65, each a contiguous of the one before: d65 is 65 deep, one more than the library takes.
  std::string section = "  d1: {contiguous: {count: 1, of: f64}}\n";
  for (int i = 2; i <= 65; ++i)
    section += "  d" + std::to_string(i) + ": {contiguous: {count: 1, of: d" + std::to_string(i - 1) + "}}\n";
  const std::string problems = load_problem_lines(pack_topology(section, "d63"));
  // d65 is on line 70 (the section starts on line 6); `of: d64` at column 36.
  CHECK(problems ==
        "70:36: datatype 'd65': contiguous: child nests 64 levels deep; at most 63 are accepted\n");
}

TEST_CASE("datatype_yaml.every_problem_is_reported_in_source_order") {
  const std::string problems =
      load_problem_lines(pack_topology("  a: {vector: {count: x, blocklength: 1, of: f64}}\n"
                                       "  b: {contiguous: {count: 2, of: nowhere}}\n"
                                       "  c: {subarray: {sizes: [4], subsizes: [4], "
                                       "starts: [1], of: f64}}\n",
                                       "a"));
  CHECK(problems ==
        "6:7: datatype 'a': vector: missing argument 'stride'\n"
        "6:23: datatype 'a': vector: count must be an integer, not 'x'\n"
        "7:34: datatype 'b': no datatype is named 'nowhere' (datatypes: a, b and c)\n"
        "8:54: datatype 'c': subarray: starts[0] is 1: with subsizes[0] = 4 the subarray leaves [0, sizes[0] "
        "= 4)\n");
}
