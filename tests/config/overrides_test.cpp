// `--set path=value` overrides: applying, creating missing maps, and where their problems are reported.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "framework/core/units.hpp"
#include "framework/model/overrides.hpp"
#include "framework/model/yaml_loader.hpp"
#include "tests/config/test_registry.hpp"

using namespace xf;

namespace {

const char* const pingpong_yaml = R"(name: pingpong_yaml
topics:
  c2g: {frame_size: 64KiB, capacity: 64}
  g2c: {frame_size: 64KiB, capacity: 64}
operators:
  source: {class: sequence_source, threads: 2, outputs: [c2g], params: {total_bytes: 1GiB}}
  scale: {class: scale, inputs: [c2g], outputs: [g2c]}
  verify: {class: verify_sink, inputs: [g2c]}
)";

topology_spec load_pingpong(const std::vector<std::string>& overrides) {
  return load_topology_text(pingpong_yaml, "pingpong_yaml.yaml", test::config_registry(), overrides);
}

/// The first problem of loading pingpong_yaml with `overrides`, as "file:line:column: error: message".
std::string first_override_problem(const std::vector<std::string>& overrides) {
  try {
    load_pingpong(overrides);
  } catch (const config_error& e) {
    return e.first().str();
  }
  return "no problem";
}

/// Every problem, one "file:line:column: error: message" per line.
std::string all_override_problems(const std::vector<std::string>& overrides) {
  try {
    load_pingpong(overrides);
  } catch (const config_error& e) {
    return e.what();
  }
  return "no problem";
}

}  // namespace

TEST_CASE("config.override_parse_splits_path_and_value") {
  const override_arg o = parse_override("operators.source.params.total_bytes=4GiB");
  CHECK(o.path == std::vector<std::string>{"operators", "source", "params", "total_bytes"});
  CHECK(o.path_columns == std::vector<int>{1, 11, 18, 25});
  CHECK(o.value == "4GiB");
  CHECK(o.value_column == 37);
  // Only the first '=' splits: the value may hold more.
  const override_arg p = parse_override("operators.out.params.path=/tmp/a=b");
  CHECK(p.value == "/tmp/a=b");
  CHECK(override_source("a.b=1") == "--set a.b=1");
}

TEST_CASE("config.override_sets_scalars_params_enums_and_lists") {
  const topology_spec spec = load_pingpong(
      {"topics.c2g.capacity=8", "operators.source.params.total_bytes=4GiB", "runtime.executor=host",
       "operators.scale.on=cpu", "operators.source.outputs=[c2g]", "operators.verify.inputs=g2c"});
  CHECK(spec.find_topic("c2g")->capacity == 8);
  CHECK(std::get<std::int64_t>(spec.find_operator("source")->params.at("total_bytes")) ==
        static_cast<std::int64_t>(4 * GiB));
  CHECK(spec.runtime.executor == executor_kind::host);
  CHECK(spec.find_operator("scale")->on == placement::cpu);
  CHECK(spec.find_operator("source")->outputs == std::vector<std::string>{"c2g"});
  // The overridden value's position is the override; the key stays where the file wrote it.
  const source_pos value = spec.position_of("topics.c2g.capacity");
  CHECK(value == source_pos{"--set topics.c2g.capacity=8", 1, 21});
  CHECK(spec.position_of("topics.c2g.capacity#key") == source_pos{"pingpong_yaml.yaml", 3, 28});
  CHECK(spec.position_of("operators.source.outputs[0]") ==
        source_pos{"--set operators.source.outputs=[c2g]", 1, 27});
}

TEST_CASE("config.override_creates_missing_maps") {
  // runtime and scale's params are not in the file; both are created on the way.
  const topology_spec spec = load_pingpong({"runtime.blocks=3", "operators.scale.params.factor=0.25"});
  CHECK(spec.runtime.blocks == 3);
  CHECK(std::get<double>(spec.find_operator("scale")->params.at("factor")) == 0.25);
  CHECK(spec.position_of("runtime#key") == source_pos{"--set runtime.blocks=3", 1, 1});
  CHECK(spec.position_of("runtime.blocks#key") == source_pos{"--set runtime.blocks=3", 1, 9});
  CHECK(spec.position_of("operators.scale.params.factor") ==
        source_pos{"--set operators.scale.params.factor=0.25", 1, 31});
  // A map value replaces the whole map.
  const topology_spec whole = load_pingpong({"operators.source.params={total_bytes: 8MiB, seed: 3}"});
  CHECK(whole.find_operator("source")->params.size() == 2);
  CHECK(std::get<std::int64_t>(whole.find_operator("source")->params.at("seed")) == 3);
}

TEST_CASE("config.override_later_wins_and_empty_maps_fill") {
  const topology_spec spec = load_pingpong({"topics.c2g.capacity=8", "topics.c2g.capacity=16"});
  CHECK(spec.find_topic("c2g")->capacity == 16);
  // A topic written with no settings ("t:") is an empty value that an override turns into a map.
  const topology_spec filled = load_topology_text(
      "topics: {t: , u: }\noperators:\n  s: {class: random_source, outputs: t}\n  m: {class: scale, inputs: "
      "t, "
      "outputs: u}\n  k: {class: null_sink, inputs: u}\n",
      "t.yaml", test::config_registry(), {"topics.t.element=f64", "topics.u.element=f64"});
  CHECK(filled.find_topic("t")->element == element_type::f64);
}

TEST_CASE("config.override_value_problems_point_into_the_argument") {
  CHECK(first_override_problem({"topics.c2g.capacity=abc"}) ==
        "--set topics.c2g.capacity=abc:1:21: error: topic 'c2g': capacity must be an integer, not 'abc'");
  CHECK(first_override_problem({"topics.c2g.capacity=0"}) ==
        "--set topics.c2g.capacity=0:1:21: error: topic 'c2g': capacity must be at least 1, not 0");
  CHECK(first_override_problem({"topics.c2g.capacity="}) ==
        "--set topics.c2g.capacity=:1:21: error: topic 'c2g': capacity must be an integer, not empty");
  CHECK(first_override_problem({"runtime.executor=hots"}) ==
        "--set runtime.executor=hots:1:18: error: runtime: executor must be one of auto, device, host, not "
        "'hots' "
        "(did you mean 'host'?)");
  // Inside a flow list: the column of the offending item. (Its follow-on problem, c2g without subscriber,
  // is in the file and comes first.)
  CHECK(all_override_problems({"operators.scale.inputs=[c2h]"}) ==
        "pingpong_yaml.yaml:3:3: error: topic 'c2g' has no subscriber (no operator lists it in its inputs)\n"
        "--set operators.scale.inputs=[c2h]:1:25: error: operator 'scale': input 'c2h' is not a declared "
        "topic (did "
        "you mean 'c2g'?)");
  // A key the override created is placed at its path segment.
  CHECK(first_override_problem({"topics.extra.capacity=4"}) ==
        "--set topics.extra.capacity=4:1:8: error: topic 'extra' is not used by any operator");
  CHECK(first_override_problem({"topics.c2g.capacty=4"}) ==
        "--set topics.c2g.capacty=4:1:12: error: unknown key 'capacty' in topic 'c2g' (did you mean "
        "'capacity'?)");
  CHECK(first_override_problem({"operators.source.params.total_bytes=4gb"}) ==
        "--set operators.source.params.total_bytes=4gb:1:37: error: operator 'source': parameter "
        "'total_bytes': "
        "unknown unit 'gb' in '4gb' (use B, KiB, MiB, GiB, TiB, or kB, MB, GB, TB)");
}

TEST_CASE("config.override_structural_errors") {
  CHECK(first_override_problem({"topics.c2g.capacity"}) ==
        "--set topics.c2g.capacity:1:1: error: an override is path=value (e.g. topics.in.capacity=8), but "
        "'topics.c2g.capacity' has no '='");
  CHECK(first_override_problem({"=8"}) == "--set =8:1:1: error: an override needs a path before '='");
  CHECK(first_override_problem({"topics..capacity=8"}) ==
        "--set topics..capacity=8:1:8: error: empty name in override path 'topics..capacity'");
  CHECK(first_override_problem({"topics.c2g.=8"}) ==
        "--set topics.c2g.=8:1:12: error: empty name in override path 'topics.c2g.'");
  CHECK(first_override_problem({"topics.c2g.capacity.max=8"}) ==
        "--set topics.c2g.capacity.max=8:1:21: error: cannot set 'topics.c2g.capacity.max': "
        "'topics.c2g.capacity' "
        "is a single value (at pingpong_yaml.yaml:3:38)");
  CHECK(first_override_problem({"operators.scale.inputs.0=c2g"}) ==
        "--set operators.scale.inputs.0=c2g:1:24: error: cannot set 'operators.scale.inputs.0': "
        "'operators.scale.inputs' is a list (at pingpong_yaml.yaml:7:33); set the whole list, e.g. "
        "operators.scale.inputs=[a, b]");
  CHECK(first_override_problem({"operators.source.outputs=[c2g"}) ==
        "--set operators.source.outputs=[c2g:1:26: error: YAML syntax: end of sequence flow not found");
}

TEST_CASE("config.override_paths_and_sources_are_bounded") {
  // A path of thousands of names would make as many nested maps: refused at the name past the nesting
  // bound, before any is made.
  std::string path = "runtime";
  for (int k = 0; k < 5000; ++k) path += ".x";
  const std::string deep = path + "=1";
  CHECK(first_override_problem({deep}) ==
        "--set " + deep.substr(0, max_override_source_bytes) +
            "...:1:" + std::to_string(9 + 2 * (yaml_limits::max_depth - 1)) +
            ": error: an override path names at most " + std::to_string(yaml_limits::max_depth) +
            " keys (lists and maps are nested at most that deep)");
  // A long value is named by the argument's start: each of its nodes carries that name, not all of it.
  std::string list = "operators.source.outputs=[";
  for (int k = 0; k < 2'000; ++k) list += "c2g, ";
  list += "]";
  CHECK(override_source(list) == "--set " + list.substr(0, max_override_source_bytes) + "...");
  CHECK(first_override_problem({list}) ==
        "--set " + list.substr(0, max_override_source_bytes) +
            "...:1:32: error: operator 'source': class 'sequence_source' is a source and needs exactly 1 "
            "output, not 2000");
  CHECK(override_source("name=caf\xc3\xa9") == "--set name=caf\xc3\xa9");
  const std::string accented = std::string(max_override_source_bytes - 1, 'a') + "\xc3\xa9";
  CHECK(override_source(accented) == "--set " + accented.substr(0, max_override_source_bytes - 1) + "...");
}

TEST_CASE("config.override_problems_are_all_reported_in_order") {
  try {
    load_pingpong({"no_equals", "topics.c2g.capacity=x", "=1"});
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    // Malformed overrides stop the load before conversion: all of them are listed, in argument order.
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].pos.file == "--set no_equals");
    CHECK(e.problems()[1].pos.file == "--set =1");
  }
  try {
    load_pingpong({"runtime.blocks=-1", "topics.c2g.capacity=x"});
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].str() ==
          "--set runtime.blocks=-1:1:16: error: runtime: blocks must be between 0 and 8192, not -1");
    CHECK(e.problems()[1].pos.file == "--set topics.c2g.capacity=x");
  }
}

TEST_CASE("config.override_problems_follow_the_files") {
  // A problem in the file comes before one in an override, whatever their lines.
  try {
    load_topology_text(std::string(pingpong_yaml) + "runtime: {warps_per_block: 0}\n", "p.yaml",
                       test::config_registry(), {"topics.c2g.capacity=0"});
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].pos.file == "p.yaml");
    CHECK(e.problems()[1].pos.file == "--set topics.c2g.capacity=0");
  }
}

TEST_CASE("config.override_places_operators_on_ranks_and_gpus") {
  // runtime.ranks is created on the way, and the name given to verify resolves through it.
  const topology_spec spec = load_pingpong({"operators.scale.rank=1", "operators.scale.device=2",
                                            "runtime.ranks.sink_side=4", "operators.verify.rank=sink_side"});
  CHECK(spec.find_operator("source")->rank == 0);
  CHECK(spec.find_operator("scale")->rank == 1);
  CHECK(spec.find_operator("scale")->device == std::optional<std::uint32_t>{2});
  CHECK(spec.find_operator("verify")->rank == 4);
  CHECK(spec.find_operator("verify")->rank_name == "sink_side");
  CHECK(spec.position_of("operators.scale.rank") == source_pos{"--set operators.scale.rank=1", 1, 22});
  CHECK(spec.position_of("runtime.ranks.sink_side") == source_pos{"--set runtime.ranks.sink_side=4", 1, 25});
  // Their problems point into the argument.
  CHECK(
      first_override_problem({"runtime.ranks.sink_side=4", "operators.verify.rank=sink_sde"}) ==
      "--set operators.verify.rank=sink_sde:1:23: error: operator 'verify': rank 'sink_sde' is not a name of "
      "runtime.ranks (did you mean 'sink_side'? its names: 'sink_side')");
  CHECK(first_override_problem({"operators.scale.rank=-3"}) ==
        "--set operators.scale.rank=-3:1:22: error: operator 'scale': rank must be between 0 and 65535, not "
        "-3");
  CHECK(
      first_override_problem({"operators.source.device=0"}) ==
      "--set operators.source.device=0:1:25: error: operator 'source': device applies to GPU operators only "
      "(this one is on cpu): it names the GPU its rank's kernel runs on");
}

TEST_CASE("config.override_on_an_empty_topology_builds_it") {
  const topology_spec spec = load_topology_text(
      "", "empty.yaml", test::config_registry(),
      {"topics={t: {}}",
       "operators={s: {class: sequence_source, outputs: t}, k: {class: null_sink, inputs: t}}"});
  CHECK(spec.operators.size() == 2);
  CHECK_THROWS_AS(load_topology_text("- a\n- b\n", "list.yaml", test::config_registry(), {"name=x"}),
                  config_error);
}

TEST_CASE("config.device_memory_buys_whole_frames_instead_of_capacity") {
  const auto topology = [](const std::string& topic) {
    return "topics:\n  t: " + topic +
           "\noperators:\n  s: {class: random_source, outputs: t}\n  k: {class: null_sink, inputs: t}\n";
  };
  const auto capacity = [&](const std::string& topic, const std::vector<std::string>& overrides = {}) {
    return load_topology_text(topology(topic), "t.yaml", test::config_registry(), overrides)
        .find_topic("t")
        ->capacity;
  };
  CHECK(capacity("{frame_size: 64KiB, device_memory: 4MiB}") == 64);
  CHECK(capacity("{device_memory: 4MiB, frame_size: 1MiB}") == 4);  // the order of the keys does not matter
  CHECK(capacity("{frame_size: 1MiB, device_memory: 5700KiB}") == 5);  // whole frames only
  CHECK(capacity("{frame_size: 64KiB}", {"topics.t.device_memory=256MiB"}) == 4096);
  // Both at once is refused, also when one comes from --set.
  CHECK_THROWS_AS(capacity("{frame_size: 64KiB, capacity: 8}", {"topics.t.device_memory=1MiB"}),
                  config_error);
  CHECK_THROWS_AS(capacity("{device_memory: 1MiB, frame_size: 1GiB}"), config_error);
}
