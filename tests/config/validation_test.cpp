// validate_topology on builder specs (no positions), problem collection and ordering, and the loader's
// file and document-level errors.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>

#include "framework/core/units.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/model/spec_yaml.hpp"
#include "framework/model/topology_builder.hpp"
#include "framework/model/yaml_loader.hpp"
#include "tests/config/config_problems.hpp"
#include "tests/config/test_registry.hpp"

using namespace xf;
using test::first_load_problem;
using test::validation_problems;

namespace {

/// source → scale (gpu) → verify, as the builder writes it.
topology_builder minimal_pingpong() {
  topology_builder b("pingpong");
  b.topic("c2g");
  b.topic("g2c");
  b.link({}, op("source", "sequence_source").threads(2).param("total_bytes", "1GiB"), {"c2g"});
  b.link({"c2g"}, op("scale", "scale").on(placement::gpu).param("factor", 2.0), {"g2c"});
  b.link({"g2c"}, op("verify", "verify_sink"), {});
  return b;
}

/// source → scale → verify, placed as the operators given say, with `names` as runtime.ranks.
topology_spec placed_pingpong(const op& source, const op& scale, const op& verify,
                              const std::map<std::string, std::uint32_t>& names = {}) {
  topology_builder b("placed");
  b.topic("c2g");
  b.topic("g2c");
  b.link({}, source, {"c2g"});
  b.link({"c2g"}, scale, {"g2c"});
  b.link({"g2c"}, verify, {});
  for (const auto& [name, rank] : names) b.runtime().rank_name(name, rank);
  return b.build();
}

}  // namespace

TEST_CASE("config.builder_spec_validates_and_normalizes_params") {
  topology_spec spec = minimal_pingpong().build();
  validate_topology(spec, test::config_registry());
  const auto& params = spec.find_operator("source")->params;
  CHECK(std::get<std::int64_t>(params.at("total_bytes")) == static_cast<std::int64_t>(GiB));
  CHECK(std::get<double>(spec.find_operator("scale")->params.at("factor")) == 2.0);
}

TEST_CASE("config.builder_problems_start_with_builder") {
  topology_builder b = minimal_pingpong();
  b.link({"g2c"}, op("extra", "nul_sink"), {});
  CHECK(validation_problems(b.build()) ==
        "<builder>: error: operator 'extra': unknown operator class 'nul_sink' (did you mean 'null_sink'?)");
}

TEST_CASE("config.builder_problems_are_all_reported_in_order_found") {
  topology_builder b("many");
  b.topic("t").frame_bytes(1000).capacity(0);
  b.topic("u").layout(frame_layout::columnar);
  b.link({}, op("src", "sequence_source").threads(0), {"t"});
  b.link({"t"}, op("g", "scale").on(placement::gpu).threads(4).warps(2), {"u"});
  b.link({"u"}, op("k", "verify_sink").on(placement::gpu), {});
  b.runtime().warps_per_block(40);
  CHECK(validation_problems(b.build()) ==
        "<builder>: error: topic 't': frame_size must be a positive multiple of 4 KiB (4096 bytes), not 1000 "
        "bytes\n"
        "<builder>: error: topic 't': capacity must be at least 1, not 0\n"
        "<builder>: error: topic 'u': a columnar topic needs rows_per_frame (rows a frame holds)\n"
        "<builder>: error: topic 'u': a columnar topic needs columns ({name: …, type: …} each)\n"
        "<builder>: error: runtime: warps_per_block must be between 1 and 32, not 40\n"
        "<builder>: error: operator 'src': threads must be between 1 and 1024, not 0\n"
        "<builder>: error: operator 'g': threads applies to CPU operators only (a GPU operator runs in every "
        "kernel block; see runtime.blocks)\n"
        "<builder>: error: operator 'g': warps is only used with runtime.partition: explicit (uniform splits "
        "each "
        "block's warps evenly)\n"
        "<builder>: error: operator 'k': class 'verify_sink' has no GPU compute, so it cannot run on gpu");
}

TEST_CASE("config.builder_names_and_duplicates") {
  topology_builder b = minimal_pingpong();
  b.link({"g2c"}, op("verify", "null_sink"), {});
  b.topic("bad.name");
  CHECK(validation_problems(b.build()) ==
        "<builder>: error: topic name 'bad.name' is not a valid name (use letters, digits, '_' and '-', "
        "starting "
        "with a letter or '_')\n"
        "<builder>: error: duplicate operator 'verify'\n"
        "<builder>: error: topic 'bad.name' is not used by any operator");
  CHECK(is_valid_name("t0"));
  CHECK(is_valid_name("_raw-2"));
  CHECK_FALSE(is_valid_name(""));
  CHECK_FALSE(is_valid_name("2t"));
  CHECK_FALSE(is_valid_name("a[0]"));
  CHECK_FALSE(is_valid_name("a b"));
}

TEST_CASE("config.builder_explicit_partition") {
  auto build = [](std::uint32_t w1, std::uint32_t w2) {
    topology_builder b("explicit");
    for (const char* t : {"t0", "t1", "t2"}) b.topic(t);
    b.link({}, op("src", "sequence_source"), {"t0"});
    op g1("g1", "scale");
    g1.on(placement::gpu);
    if (w1) g1.warps(w1);
    b.link({"t0"}, g1, {"t1"});
    b.link({"t1"}, op("g2", "fma").on(placement::gpu).warps(w2), {"t2"});
    b.link({"t2"}, op("k", "null_sink").warps(w2), {});
    b.runtime().partition(partition_policy::explicit_warps).warps_per_block(8);
    return b.build();
  };
  CHECK(validation_problems(build(3, 0)) ==
        "<builder>: error: operator 'g2': runtime.partition is explicit, so this GPU operator needs warps (1 "
        "to 32)");
  CHECK(validation_problems(build(0, 4)) ==
        "<builder>: error: operator 'g1': runtime.partition is explicit, so this GPU operator needs warps (1 "
        "to 32)\n"
        "<builder>: error: operator 'k': warps applies to GPU operators only (this one is on cpu)");
  const std::string over = validation_problems(build(5, 4));
  CHECK(over.find("operator 'g2': its 4 warps bring the GPU operators' total to 9, more than "
                  "runtime.warps_per_block (8)") != std::string::npos);
  CHECK(validation_problems(build(4, 40)).find("operator 'g2': warps must be between 1 and 32, not 40") !=
        std::string::npos);
}

TEST_CASE("config.more_gpu_operators_than_warps_is_left_to_the_plan") {
  // Under the uniform partition the plan refuses more GPU operators than warps per block (plan.hpp): it is
  // the plan's business because the default warps_per_block may come from the machine one day.
  topology_builder b("p");
  for (const char* t : {"t0", "t1", "t2", "t3"}) b.topic(t);
  b.link({}, op("src", "sequence_source"), {"t0"});
  b.link({"t0"}, op("g1", "scale").on(placement::gpu), {"t1"});
  b.link({"t1"}, op("g2", "fma").on(placement::gpu), {"t2"});
  b.link({"t2"}, op("g3", "pass_through").on(placement::gpu), {"t3"});
  b.link({"t3"}, op("k", "null_sink"), {});
  b.runtime().warps_per_block(2);
  CHECK(validation_problems(b.build()) == "ok");
}

TEST_CASE("config.builder_places_operators_on_ranks_and_gpus") {
  topology_spec spec =
      placed_pingpong(op("source", "sequence_source").rank("cpu_side"),
                      op("scale", "scale").on(placement::gpu).rank("gpu_side").device(3),
                      op("verify", "verify_sink").rank(40000), {{"cpu_side", 0}, {"gpu_side", 7}});
  validate_topology(spec, test::config_registry());
  CHECK(spec.find_operator("source")->rank == 0);
  CHECK(spec.find_operator("scale")->rank == 7);
  CHECK(spec.find_operator("scale")->rank_name == "gpu_side");
  CHECK(spec.find_operator("scale")->device == std::optional<std::uint32_t>{3});
  // Not checked against how many ranks run: validation does not know that, the planner does.
  CHECK(spec.find_operator("verify")->rank == 40000);
  // Written and read back, names and all.
  CHECK(load_topology_text(to_yaml(spec), "again.yaml", test::config_registry()) == spec);
  // Of rank(name) and rank(number), the later call wins.
  CHECK(op("k", "null_sink").rank("gpu_side").rank(2).spec().rank_name.empty());
  CHECK(op("k", "null_sink").rank("gpu_side").rank(2).spec().rank == 2);
  CHECK(op("k", "null_sink").rank(2).rank("gpu_side").spec().rank_name == "gpu_side");
  CHECK(op("k", "null_sink").rank(2).rank("gpu_side").spec().rank == 0);
}

TEST_CASE("config.rank_names_resolve_or_are_reported") {
  const op source("source", "sequence_source");
  const op verify("verify", "verify_sink");
  auto scale_on = [](const char* rank) { return op("scale", "scale").on(placement::gpu).rank(rank); };
  CHECK(
      validation_problems(placed_pingpong(source, scale_on("gpu_side"), verify)) ==
      "<builder>: error: operator 'scale': rank 'gpu_side' is not a name of runtime.ranks (it names no rank: "
      "give a rank number, or name the rank under runtime.ranks)");
  const std::map<std::string, std::uint32_t> names{{"writer", 0}, {"reader", 1}};
  CHECK(validation_problems(placed_pingpong(source, scale_on("gpu"), verify, names)) ==
        "<builder>: error: operator 'scale': rank 'gpu' is not a name of runtime.ranks (its names: 'reader', "
        "'writer')");
  CHECK(validation_problems(placed_pingpong(source, scale_on("readr"), verify, names)) ==
        "<builder>: error: operator 'scale': rank 'readr' is not a name of runtime.ranks (did you mean "
        "'reader'? its names: 'reader', 'writer')");
  // runtime.ranks' names and numbers, and an operator's number; a name for a bad number adds nothing.
  CHECK(validation_problems(placed_pingpong(source, scale_on("gpu_side"),
                                            op("verify", "verify_sink").rank(70000),
                                            {{"1st", 1}, {"gpu_side", 65536}})) ==
        "<builder>: error: runtime.ranks: rank name '1st' is not a valid name (use letters, digits, '_' and "
        "'-', starting with a letter or '_')\n"
        "<builder>: error: runtime.ranks: rank 'gpu_side' must be between 0 and 65535, not 65536\n"
        "<builder>: error: operator 'verify': rank must be between 0 and 65535, not 70000");
}

TEST_CASE("config.device_is_for_gpu_operators_one_per_rank") {
  auto two_gpu_operators = [](const op& g1, const op& g2) {
    topology_builder b("gpus");
    for (const char* t : {"t0", "t1", "t2"}) b.topic(t);
    b.link({}, op("src", "sequence_source"), {"t0"});
    b.link({"t0"}, g1, {"t1"});
    b.link({"t1"}, g2, {"t2"});
    b.link({"t2"}, op("k", "null_sink"), {});
    return validation_problems(b.build());
  };
  const op g1 = op("g1", "scale").on(placement::gpu).device(0);
  auto g2 = [] { return op("g2", "fma").on(placement::gpu); };
  CHECK(two_gpu_operators(g1, g2().device(0)) == "ok");
  CHECK(two_gpu_operators(g1, g2()) == "ok");                    // unset: the rank's GPU, which g1 names
  CHECK(two_gpu_operators(g1, g2().rank(1).device(1)) == "ok");  // another rank, another kernel
  CHECK(two_gpu_operators(g1, g2().device(1)) ==
        "<builder>: error: operator 'g2': device 1, but 'g1', a GPU operator on the same rank 0, gives "
        "device 0: "
        "a rank runs one kernel on one GPU");
  CHECK(
      two_gpu_operators(g1, op("g2", "fma").on(placement::cpu).device(1)) ==
      "<builder>: error: operator 'g2': device applies to GPU operators only (this one is on cpu): it names "
      "the GPU its rank's kernel runs on");
  CHECK(two_gpu_operators(op("g1", "scale").on(placement::gpu).device(1024), g2()) ==
        "<builder>: error: operator 'g1': device must be between 0 and 1023, not 1024");
}

TEST_CASE("config.topic_publishers_share_a_rank") {
  const std::string yaml = R"(topics: {logs: {}}
operators:
  a: {class: file_source, rank: 1, outputs: [logs], params: {path: a.log}}
  b: {class: file_source, outputs: [logs], params: {path: b.log}}
  keep: {class: file_sink, rank: 3, inputs: [logs], params: {path: out.bin}}
)";
  // b's rank is not written (0): the problem is placed at the output that puts it there.
  CHECK(
      first_load_problem(yaml) ==
      "t.yaml:4:37: error: topic 'logs' has publishers on two ranks ('a' on rank 1, 'b' on rank 0); offsets "
      "are claimed where a topic is published, so a topic's publishers share one rank (its subscribers may "
      "be on any)");
  // On one rank, with their subscriber on another.
  const std::string shared = R"(topics: {logs: {}}
operators:
  a: {class: file_source, rank: 1, outputs: [logs], params: {path: a.log}}
  b: {class: file_source, rank: 1, outputs: [logs], params: {path: b.log}}
  keep: {class: file_sink, rank: 3, inputs: [logs], params: {path: out.bin}}
)";
  CHECK(first_load_problem(shared) == "ok");
}

TEST_CASE("config.builder_references_and_graph") {
  topology_builder b("graph");
  b.topic("a");
  b.topic("b");
  b.topic("loose");
  b.link({}, op("src", "sequence_source"), {"a"});
  b.link({"a", "b"}, op("m", "pass_through").on(placement::gpu), {"b"});
  b.link({"b"}, op("k", "null_sink"), {"nowhere"});
  CHECK(validation_problems(b.build()) ==
        "<builder>: error: operator 'm': class 'pass_through' is a map and needs exactly 1 input, not 2\n"
        "<builder>: error: operator 'k': class 'null_sink' is a sink and takes no outputs\n"
        "<builder>: error: operator 'm': topic 'b' is already listed in its inputs\n"
        "<builder>: error: operator 'k': output 'nowhere' is not a declared topic\n"
        "<builder>: error: topic 'b' has no publisher (no operator lists it in its outputs)\n"
        "<builder>: error: topic 'loose' is not used by any operator");
}

TEST_CASE("config.verify_needs_a_replayable_chain") {
  // timestamp is a test-only class (not a built-in), so this case is not in the corpus that xeflow-run
  // also checks.
  const std::string yaml = R"(topics: {t0: {}, t1: {}}
operators:
  src: {class: sequence_source, outputs: [t0]}
  stamp: {class: timestamp, inputs: [t0], outputs: [t1]}
  check: {class: verify_sink, inputs: [t1]}
)";
  CHECK(first_load_problem(yaml, test::extended_registry()) ==
        "t.yaml:5:40: error: operator 'check': a verify_sink replays its input from the source, so every "
        "operator "
        "upstream must be replayable, but 'stamp' (class 'timestamp') is not");
  topology_builder b("stamped");
  b.topic("t0");
  b.topic("t1");
  b.link({}, op("src", "sequence_source"), {"t0"});
  b.link({"t0"}, op("stamp", "timestamp"), {"t1"});
  b.link({"t1"}, op("null", "null_sink"), {});  // a sink without needs_reference does not mind
  CHECK(validation_problems(b.build(), test::extended_registry()) == "ok");
}

TEST_CASE("config.problems_are_sorted_by_position") {
  const std::string yaml = R"(topics:
  t: {capacity: 0}
operators:
  src: {class: sequence_source, outputs: [t], params: {seed: x}}
  k: {class: null_sink, inputs: [t], threads: 0}
runtime: {warps_per_block: 33}
)";
  try {
    load_topology_text(yaml, "s.yaml", test::config_registry());
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    // threads: 0 and warps_per_block: 33 are shape problems (the loader's pass), found before meaning.
    REQUIRE(e.problems().size() == 3);
    CHECK(e.problems()[0].str() == "s.yaml:2:17: error: topic 't': capacity must be at least 1, not 0");
    CHECK(e.problems()[1].str() ==
          "s.yaml:5:47: error: operator 'k': threads must be between 1 and 1024, not 0");
    CHECK(e.problems()[2].str() ==
          "s.yaml:6:28: error: runtime: warps_per_block must be between 1 and 32, not 33");
  }
  // With the shape right, the meaning's problems are all listed, sorted by position.
  const std::string meaning = R"(topics:
  t: {frame_size: 1000}
operators:
  src: {class: sequence_source, outputs: [t], params: {seed: x}}
  k: {class: verify_sink, on: gpu, inputs: [t]}
)";
  try {
    load_topology_text(meaning, "m.yaml", test::config_registry());
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    REQUIRE(e.problems().size() == 3);
    CHECK(e.problems()[0].str() ==
          "m.yaml:2:19: error: topic 't': frame_size must be a positive multiple of 4 KiB (4096 bytes), not "
          "1000 "
          "bytes");
    CHECK(e.problems()[1].str() ==
          "m.yaml:4:62: error: operator 'src': parameter 'seed' must be an integer, not 'x'");
    CHECK(
        e.problems()[2].str() ==
        "m.yaml:5:31: error: operator 'k': class 'verify_sink' has no GPU compute, so it cannot run on gpu");
  }
}

TEST_CASE("config.shape_problems_do_not_cascade") {
  // A misspelt `class` is one problem, not also "has no class".
  const std::string yaml = R"(topics: {t: {}}
operators:
  src: {clas: sequence_source, outputs: [t]}
  k: {class: null_sink, inputs: [t]}
)";
  try {
    load_topology_text(yaml, "c.yaml", test::config_registry());
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.first().str() ==
          "c.yaml:3:9: error: unknown key 'clas' in operator 'src' (did you mean 'class'?)");
  }
}

TEST_CASE("config.file_errors") {
  try {
    load_topology_file("/nonexistent/topology.yaml", test::config_registry());
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()) ==
          "/nonexistent/topology.yaml: error: cannot read topology: No such file or directory");
    CHECK_FALSE(e.first().pos.known());
  }
  try {
    load_topology_file("/", test::config_registry());
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()) == "/: error: cannot read topology: Is a directory");
  }
}

TEST_CASE("config.document_level_errors") {
  CHECK(first_load_problem("") ==
        "t.yaml:1:1: error: the topology is empty (expected a map with name, topics, operators and runtime)");
  CHECK(first_load_problem("# nothing but a comment\n") ==
        "t.yaml:1:1: error: the topology is empty (expected a map with name, topics, operators and runtime)");
  CHECK(first_load_problem("name: a\n---\nname: b\n") ==
        "t.yaml:3:1: error: a topology is one YAML document, but this text holds 2");
  CHECK(first_load_problem("topics: {}\n[a]: 1\n") ==
        "t.yaml:2:1: error: a map key must be a name, not a list");
  CHECK(first_load_problem("just text") ==
        "t.yaml:1:1: error: the topology must be a map with name, topics, operators and runtime, not 'just "
        "text'");
  CHECK(first_load_problem("topics: {}\noperators: {}\n") ==
        "t.yaml:2:1: error: the topology has no operators");
  CHECK(first_load_problem("topics: {}\n") == "t.yaml: error: the topology has no operators");
}

TEST_CASE("config.count_and_frame_size_messages") {
  CHECK(count_problem("capacity", 1, capacity_limits).empty());
  CHECK(count_problem("capacity", 0, capacity_limits) == "capacity must be at least 1, not 0");
  CHECK(count_problem("capacity", 4294967296, capacity_limits) ==
        "capacity must be at most 4294967295, not 4294967296");
  CHECK(count_problem("warps", 33, warps_limits) == "warps must be between 1 and 32, not 33");
  CHECK(count_problem("blocks", -1, blocks_limits) == "blocks must be between 0 and 8192, not -1");
  CHECK(count_problem_text("threads", "99999999999999999999", threads_limits) ==
        "threads must be between 1 and 1024, not 99999999999999999999");
  CHECK(count_problem_text("capacity", "99999999999999999999", capacity_limits) ==
        "capacity must be at most 4294967295, not 99999999999999999999");
  CHECK(frame_size_problem(4 * KiB).empty());
  CHECK(frame_size_problem(1 * GiB).empty());
  CHECK(frame_size_problem(0) == "frame_size must be a positive multiple of 4 KiB (4096 bytes), not 0 bytes");
  CHECK_FALSE(frame_size_problem(4097).empty());
}

namespace {

/// A source that reads files through the cache (stand-in: the real readers are GPU operators).
class file_reader_stub final : public cpu_source {
 public:
  struct params {};
  static void describe(operator_schema<params>& s) {
    s.describe("reads files through the file cache (stand-in)").reads_files();
  }
  explicit file_reader_stub(const params&) {}
  bool produce(std::uint64_t, frame_out&) override { return false; }
};

const operator_registry& registry_with_reader() {
  static const operator_registry registry = [] {
    operator_registry r;
    test::register_fake_builtins(r);
    r.add<file_reader_stub>("file_reader_stub");
    return r;
  }();
  return registry;
}

/// reader → scale (gpu) → verify with `cache` as runtime.file_cache.
topology_spec reader_topology(const file_cache_spec& cache) {
  topology_builder b("reader");
  b.topic("c2g");
  b.topic("g2c");
  b.link({}, op("source", "file_reader_stub"), {"c2g"});
  b.link({"c2g"}, op("scale", "scale").on(placement::gpu).param("factor", 2.0), {"g2c"});
  b.link({"g2c"}, op("verify", "verify_sink"), {});
  topology_spec spec = b.build();
  spec.runtime.file_cache = cache;
  return spec;
}

std::string cache_problems(void (*change)(file_cache_spec&)) {
  file_cache_spec c;
  change(c);
  return validation_problems(reader_topology(c), registry_with_reader());
}

}  // namespace

TEST_CASE("config.file_cache_settings_are_checked_against_their_limits_and_each_other") {
  CHECK(validation_problems(reader_topology({}), registry_with_reader()) == "ok");
  CHECK(
      cache_problems([](file_cache_spec& c) { c.page_bytes = 6 * KiB; }) ==
      "<builder>: error: runtime.file_cache: page_size must be a power of two from 4KiB to 64KiB, not 6KiB");
  CHECK(cache_problems([](file_cache_spec& c) { c.page_bytes = 128 * KiB; }).find("not 128KiB") !=
        std::string::npos);
  CHECK(cache_problems([](file_cache_spec& c) { c.size = 10000; }) ==
        "<builder>: error: runtime.file_cache: size must be a whole number of pages (4KiB), not 10000 bytes");
  CHECK(cache_problems([](file_cache_spec& c) { c.readahead = 2 * MiB; }) ==
        "<builder>: error: runtime.file_cache: readahead must be a whole number of pages (4KiB) up to 1MiB, "
        "not 2MiB");
  CHECK(
      cache_problems([](file_cache_spec& c) { c.max_request = 64 * KiB; }) ==
      "<builder>: error: runtime.file_cache: max_request (64KiB) must hold a page and its readahead (68KiB)");
  CHECK(cache_problems([](file_cache_spec& c) { c.max_request = 32 * MiB; }).find("up to 16MiB") !=
        std::string::npos);
  CHECK(
      cache_problems([](file_cache_spec& c) { c.io_chunk = 1000; }) ==
      "<builder>: error: runtime.file_cache: io_chunk must be a whole number of 4KiB blocks, not 1000 bytes");
  CHECK(cache_problems([](file_cache_spec& c) { c.io_threads = 65; }) ==
        "<builder>: error: runtime.file_cache: io_threads must be between 0 and 64, not 65");
  CHECK(cache_problems([](file_cache_spec& c) { c.io_slots_per_block = 33; }) ==
        "<builder>: error: runtime.file_cache: io_slots_per_block must be between 1 and 32, not 33");
  // Where no operator reads through it, the cache is an error of its own.
  topology_spec plain = minimal_pingpong().build();
  plain.runtime.file_cache = file_cache_spec{};
  CHECK(validation_problems(plain) ==
        "<builder>: error: runtime: file_cache is set, but no operator of this topology reads files through "
        "the cache");
}

TEST_CASE("config.file_cache_reads_every_setting_and_writes_them_back") {
  const std::string yaml = R"(name: reader
topics:
  c2g: {frame_size: 64KiB, capacity: 64}
  g2c: {frame_size: 64KiB, capacity: 64}
operators:
  source: {class: file_reader_stub, outputs: [c2g]}
  scale: {class: scale, on: gpu, inputs: [c2g], outputs: [g2c], params: {factor: 2}}
  verify: {class: verify_sink, inputs: [g2c]}
runtime:
  file_cache: {size: 1GiB, page_size: 8KiB, readahead: 0, readahead_mode: on, replacement: global, io_threads: 8,
               io_slots_per_block: 16, max_request: 1MiB, io_chunk: 64KiB, direct: off}
)";
  const topology_spec spec = load_topology_text(yaml, "t.yaml", registry_with_reader());
  REQUIRE(spec.runtime.file_cache.has_value());
  const file_cache_spec& c = *spec.runtime.file_cache;
  CHECK(c.size == GiB);
  CHECK(c.page_bytes == 8 * KiB);
  CHECK(c.readahead == 0);
  CHECK(c.readahead_policy == readahead_mode::on);
  CHECK(c.replacement == page_replacement::global);
  CHECK(c.io_threads == 8);
  CHECK(c.io_slots_per_block == 16);
  CHECK(c.max_request == MiB);
  CHECK(c.io_chunk == 64 * KiB);
  CHECK(c.direct == direct_io_mode::off);
  CHECK(load_topology_text(to_yaml(spec), "again.yaml", registry_with_reader()) == spec);

  // `file_cache:` alone takes every default; a scalar is not a map of settings; values are checked.
  std::string bare = yaml.substr(0, yaml.find("  file_cache:")) + "  file_cache:\n";
  CHECK(load_topology_text(bare, "t.yaml", registry_with_reader()).runtime.file_cache == file_cache_spec{});
  CHECK(first_load_problem(bare + "  watchdog_ms: 10000\n", registry_with_reader()) == "ok");
  const std::string scalar = yaml.substr(0, yaml.find("  file_cache:")) + "  file_cache: 2GiB\n";
  CHECK(first_load_problem(scalar, registry_with_reader()) ==
        "t.yaml:10:15: error: runtime: file_cache must be a map of settings (size, page_size, readahead, "
        "readahead_mode, replacement, io_threads, io_slots_per_block, max_request, io_chunk, direct), "
        "not '2GiB'");
  const std::string bad_mode =
      yaml.substr(0, yaml.find("  file_cache:")) + "  file_cache: {direct: always}\n";
  CHECK(first_load_problem(bad_mode, registry_with_reader()) ==
        "t.yaml:10:24: error: runtime.file_cache: direct must be one of auto, on, off, not 'always'");
}

TEST_CASE("config.columnar_topic_takes_its_frame_from_its_columns_and_round_trips") {
  topology_builder b = minimal_pingpong();
  column_layout kseq;
  kseq.bloom_bits = 8192;
  kseq.bloom_hashes = 6;
  column_layout s1;
  s1.element = element_type::u8;
  s1.chars = 8;
  b.topic("c2g").layout(frame_layout::columnar).rows_per_frame(8192).column("kseq", kseq).column("s1", s1);
  b.topic("g2c").frame_bytes(128 << 10);  // holds the 108 KiB columnar frames scale maps into it
  topology_spec spec = b.build();
  // Everything about the topic is valid; what is refused is a row operator reading it.
  CHECK(validation_problems(spec) ==
        "<builder>: error: operator 'scale': class 'scale' reads row frames, but topic 'c2g' is columnar (a "
        "columnar reader such as query reads it)");
  try {
    validate_topology(spec, test::config_registry());
  } catch (const config_error&) {
  }
  columnar_geometry g{};
  REQUIRE(make_columnar_geometry(std::vector<column_layout>{kseq, s1}, 8192, g).empty());
  CHECK(spec.topics[0].frame_bytes == g.frame_bytes());  // validation derived it

  // to_yaml writes the columns (and no element), and reading it back gives the same topic.
  const std::string text = to_yaml(spec);
  CHECK(text.find("char(8)") != std::string::npos);
  topology_spec again;
  const auto problems =
      read_topology(parse_yaml(text, "again.yaml"), "again.yaml", test::config_registry(), again);
  CHECK(problems.empty());
  REQUIRE(again.topics.size() == spec.topics.size());
  CHECK(again.topics[0].columns == spec.topics[0].columns);
  CHECK(again.topics[0].rows_per_frame == 8192);
  CHECK(again.topics[0].layout == frame_layout::columnar);
}
