// End to end: xeflow-run (and a user-style launcher) as a user runs them, in host mode: the README's
// commands, the bad-input corpus, faults and interrupts. Every topology in topologies/ runs in the
// differential test.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "framework/model/yaml_loader.hpp"
#include "framework/plan/device_probe.hpp"
#include "tests/support/builtin_topology.hpp"
#include "tests/support/datatype_topology.hpp"
#include "tests/support/prefetch_topology.hpp"
#include "tests/support/run_checks.hpp"
#include "tests/support/subprocess.hpp"
#include "tests/support/topology_files.hpp"

namespace fs = std::filesystem;
using xf::test::process_result;
using xf::test::run_process;
using namespace xf::test;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

/// Runs a topology as written (its own executor) and checks it completed with every verify sink clean;
/// returns the stats.
nlohmann::json run_verified(const fs::path& topology) {
  const auto r = run_process({xeflow_run(), topology.string(), "-q", "--stats", "json"});
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const auto doc = parse_json(r);
  CHECK(doc["status"] == "completed");
  check_verified(doc);
  return doc;
}

}  // namespace

TEST_CASE("e2e.datatypes_pack_and_unpack_what_the_host_engine_does") {
  // Pack equals dt::pack, pack then unpack restores what the type covers: on the host executor's blocks,
  // and placed on: cpu.
  for (const bool on_cpu : {false, true}) {
    CAPTURE(on_cpu);
    const datatype_pipeline pipeline(on_cpu ? "cpu" : "host");
    std::vector<std::string> extra{"--host"};
    if (on_cpu)
      for (const char* op : {"pack_faces", "unpack_faces", "pack_fields", "transpose", "transpose_back"})
        extra.insert(extra.end(), {"--set", std::string("operators.") + op + ".on=cpu"});
    const auto r = run_process(pipeline.command(extra));
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(r.exit_code == 0);
    CHECK(parse_json(r)["status"] == "completed");
    pipeline.check();
  }
}

TEST_CASE("e2e.a_frame_pack_cannot_take_fails_the_run_naming_it") {
  // 100 KiB of arrays of 256 KiB: pack fails the short frame, in the kernel's round or — first, here — in
  // the verify sinks' replay as they start; either way an error naming the operator, topic and offset.
  const auto r = run_process({xeflow_run(), (source_root() / "topologies/datatype_pack.yaml").string(),
                              "--host", "-q", "--set", "operators.source.params.total_bytes=100KiB"});
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("operator 'pack', topic 'arrays', offset 0: the operator failed the frame (code 1): the "
                   "input frame's length is not one input's") != std::string::npos);
}

TEST_CASE("e2e.pingpong_streams_a_gibibyte_verified") {
  // The README's demo as is (1 GiB); sanitized builds stream a quarter of it to stay quick.
  std::vector<std::string> args{
      xeflow_run(), (source_root() / "topologies/pingpong.yaml").string(), "--host", "-q", "--stats", "json"};
  if (kSanitized) args.insert(args.end(), {"--set", "operators.source.params.total_bytes=256MiB"});
  const auto r = run_process(args, std::chrono::minutes(10));
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const auto doc = parse_json(r);
  check_verified(doc);
  for (const auto& op : doc["operators"])
    if (op["name"] == "verify")
      CHECK(op["bytes_in"].get<std::uint64_t>() == (kSanitized ? 256ull : 1024ull) << 20);
}

TEST_CASE("e2e.stats_table_is_printed") {
  const auto r = run_process({xeflow_run(), (source_root() / "topologies/pingpong.yaml").string(), "--host",
                              "-q", "--set", "operators.source.params.total_bytes=8MiB"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("completed") != std::string::npos);
  CHECK(r.out.find("operator") != std::string::npos);
  CHECK(r.out.find("topic") != std::string::npos);
  CHECK(r.out.find("corrupt") != std::string::npos);
}

TEST_CASE("e2e.bad_corpus_exits_2_with_position") {
  // Each file's position and message are the config test's, in process; here xeflow-run prints the first
  // one after the file's path and exits 2. Under a sanitizer, every eighth file (sorted, so the same ones
  // each run; every file with XF_LONG=1): the command line's path is the same for each, and a sanitized
  // process takes 0.2 s to start.
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(source_root() / "tests/config/bad"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 30);
  const char* long_run = std::getenv("XF_LONG");
  const std::size_t stride = kSanitized && !(long_run && std::string(long_run) == "1") ? 8 : 1;
  for (std::size_t i = 0; i < files.size(); i += stride) {
    const fs::path& file = files[i];
    std::ifstream in(file);
    std::string header;
    std::getline(in, header);
    const std::string marker = "# expect: ";
    REQUIRE_MESSAGE(header.rfind(marker, 0) == 0, file << " starts with '# expect: '");
    const std::string expected = file.string() + ":" + header.substr(marker.size());
    const auto r = run_process({xeflow_run(), file.string(), "--validate"});
    INFO(file);
    CHECK(r.exit_code == 2);
    CHECK(first_line(r.err) == expected);
  }
}

TEST_CASE("e2e.validate_list_and_usage") {
  const auto ok =
      run_process({xeflow_run(), (source_root() / "topologies/pingpong.yaml").string(), "--validate"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("ok") != std::string::npos);
  const auto list = run_process({xeflow_run(), "--list-operators"});
  CHECK(list.exit_code == 0);
  for (const char* name : {"sequence_source", "random_source", "file_source", "scale", "fma", "pass_through",
                           "verify_sink", "null_sink", "file_sink"})
    CHECK(list.out.find(name) != std::string::npos);
  const auto missing = run_process({xeflow_run(), "/nonexistent/topology.yaml"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("/nonexistent/topology.yaml") != std::string::npos);
  const auto bad_flag = run_process({xeflow_run(), "--no-such-flag"});
  CHECK(bad_flag.exit_code == 2);
}

namespace {

/// The property names of a JSON Schema object, sorted.
std::vector<std::string> property_names(const nlohmann::json& object_schema) {
  std::vector<std::string> names;
  for (const auto& [key, value] : object_schema.at("properties").items()) names.push_back(key);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("e2e.operator_catalog_and_topology_schema") {
  const auto text = run_process({xeflow_run(), "--list-operators"});
  CHECK(text.exit_code == 0);
  // Ranges and allowed values are listed with each parameter.
  CHECK(text.out.find("mode: string {exact|checksum} = exact") != std::string::npos);
  CHECK(text.out.find("lanes: integer [1, 1048576] = 1") != std::string::npos);

  const auto listed = run_process({xeflow_run(), "--list-operators", "--json"});
  REQUIRE(listed.exit_code == 0);
  const nlohmann::json catalog = nlohmann::json::parse(listed.out);
  REQUIRE(catalog.is_array());
  const auto find_class = [&](const std::string& name) -> const nlohmann::json& {
    for (const nlohmann::json& c : catalog)
      if (c["class"] == name) return c;
    FAIL("no class " << name);
    return catalog[0];
  };
  const nlohmann::json& verify = find_class("verify_sink");
  CHECK(verify["role"] == "sink");
  CHECK(verify["gpu"] == false);
  CHECK(verify["params"][0]["choices"] == nlohmann::json({"exact", "checksum"}));
  const nlohmann::json& scale = find_class("scale");
  CHECK(scale["gpu"] == true);
  CHECK(scale["params"][0]["name"] == "factor");
  CHECK(scale["params"][0]["kind"] == "real");

  const auto stray = run_process({xeflow_run(), "--json"});
  CHECK(stray.exit_code == 2);
  CHECK(stray.err.find("--json goes with --list-operators") != std::string::npos);

  const auto printed = run_process({xeflow_run(), "--schema"});
  REQUIRE(printed.exit_code == 0);
  const nlohmann::json schema = nlohmann::json::parse(printed.out);
  CHECK(schema["$schema"] == "http://json-schema.org/draft-07/schema#");
  // Every map's keys are the loader's, no more and no fewer.
  const auto& keys = xf::topology_keys();
  const nlohmann::json& top = schema;
  const nlohmann::json& topic = top["properties"]["topics"]["additionalProperties"];
  const nlohmann::json& op = top["properties"]["operators"]["additionalProperties"];
  const nlohmann::json& object = top["properties"]["shared_objects"]["additionalProperties"];
  const nlohmann::json& runtime = top["properties"]["runtime"];
  CHECK(property_names(top) == sorted(keys.at("")));
  CHECK(property_names(topic) == sorted(keys.at("topic")));
  CHECK(property_names(topic["properties"]["columns"]["items"]) == sorted(keys.at("column")));
  CHECK(property_names(op) == sorted(keys.at("operator")));
  CHECK(property_names(object) == sorted(keys.at("shared_object")));
  CHECK(property_names(runtime) == sorted(keys.at("runtime")));
  for (const char* section : {"tuning", "coherence", "file_cache"})
    CHECK(property_names(runtime["properties"][section]) ==
          sorted(keys.at(std::string("runtime.") + section)));
  // One rule per class, binding its parameters.
  CHECK(op["allOf"].size() == catalog.size());

  // Every value the schema allows for a keyword with a fixed set, the loader takes: a topology with it
  // loads without a complaint about that key (other problems of the tiny topology aside).
  struct place {
    const nlohmann::json* section;
    std::string yaml;  ///< with KEY and VALUE to fill in
  };
  const std::vector<place> places{
      {&topic, "topics:\n  t: {KEY: VALUE}\n"},
      {&op, "operators:\n  o: {class: null_sink, KEY: VALUE}\n"},
      {&object, "shared_objects:\n  o: {KEY: VALUE}\n"},
      {&runtime, "runtime: {KEY: VALUE}\n"},
      {&runtime["properties"]["coherence"], "runtime: {coherence: {KEY: VALUE}}\n"},
      {&runtime["properties"]["file_cache"], "runtime: {file_cache: {KEY: VALUE}}\n"}};
  int enums = 0;
  for (const place& p : places)
    for (const auto& [key, property] : p.section->at("properties").items()) {
      if (!property.contains("enum") || key == "class") continue;
      for (const nlohmann::json& value : property["enum"]) {
        std::string yaml = p.yaml;
        yaml.replace(yaml.find("KEY"), 3, key);
        yaml.replace(yaml.find("VALUE"), 5, value.get<std::string>());
        CAPTURE(yaml);
        ++enums;
        try {
          (void)xf::load_topology_text(yaml, "enum.yaml", xf::test::builtin_registry());
        } catch (const xf::config_error& e) {
          CHECK(std::string(e.what()).find(key + " must be") == std::string::npos);
        }
      }
    }
  CHECK(enums >= 30);
}

TEST_CASE("e2e.trace_writes_a_chrome_trace_of_the_run") {
  const fs::path out = fs::temp_directory_path() / "xeflow_e2e_trace.json";
  const auto traced = [&](const std::string& sample) {
    const auto r = run_process({xeflow_run(), (source_root() / "topologies/c_g2c.yaml").string(), "--host",
                                "-q", "--set", "operators.source.params.total_bytes=64MiB", "--trace",
                                out.string(), "--trace-sample", sample});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::ifstream in(out);
    return nlohmann::json::parse(in);
  };
  const nlohmann::json doc = traced("8");
  CHECK(doc["otherData"]["topology"] == "c_g2c");
  CHECK(doc["otherData"]["sample_every"] == 8);
  CHECK(doc["otherData"]["events_dropped"] == 0);
  std::map<std::string, int> spans;  // by category
  std::set<std::string> threads;
  std::uint64_t source_frames = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] != "X") continue;
    ++spans[e["cat"].get<std::string>()];
    CHECK(e["dur"].get<double>() >= 0);
    CHECK(e["ts"].get<double>() >= 0);
    // The source's calls past the end (each thread learns there that the stream ended) are spans too.
    if (e["name"] == "source" && e["args"]["offset"].get<std::uint64_t>() < 1024) {
      ++source_frames;
      CHECK(e["args"]["offset"].get<std::uint64_t>() % 8 == 0);
    }
  }
  // 64 MiB of 64 KiB frames: 1024 offsets, one in eight on the timeline.
  CHECK(source_frames == 128);
  CHECK(spans["round"] > 0);  // the host executor's traced block's rounds
  CHECK(threads.count("cpu source #0") == 1);
  CHECK(threads.count("host block 0") == 1);
  const nlohmann::json every = traced("1");
  std::uint64_t all_frames = 0;
  for (const nlohmann::json& e : every["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "source" && e["args"]["offset"].get<std::uint64_t>() < 1024)
      ++all_frames;
  CHECK(all_frames == 1024);
  fs::remove(out);

  const auto unwritable = run_process({xeflow_run(), (source_root() / "topologies/c_g2c.yaml").string(),
                                       "--host", "-q", "--trace", "/nonexistent/dir/t.json"});
  CHECK(unwritable.exit_code == 2);
  CHECK(unwritable.err.find("cannot write the trace to /nonexistent/dir/t.json") != std::string::npos);
}

TEST_CASE("e2e.a_map_that_changes_its_function_mid_stream_verifies") {
  // A periodic source (8 dataset frames) through fma, whose cost switches at frame 21: the verify sink's
  // checksum cache is keyed by phase, so frames past the switch are checked against the heavier chain.
  // Without phases it reused the light chain's checksums there and failed every frame after the switch.
  const fs::path topology = write_temp("switching.yaml", R"(topics:
  t0: {frame_size: 16KiB, capacity: 16}
  t1: {frame_size: 16KiB, capacity: 16}
operators:
  source: {class: dataset_source, threads: 2, outputs: [t0], params: {total_bytes: 1MiB, dataset_frames: 8}}
  g: {class: fma, inputs: [t0], outputs: [t1], params: {iterations: 4, a: 3, b: 1, switch_offset: 21, iterations_after: 64}}
  verify: {class: verify_sink, threads: 2, inputs: [t1], params: {mode: checksum}}
)");
  const auto r = run_process({xeflow_run(), topology.string(), "--host", "-q", "--stats", "json"});
  fs::remove(topology);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  check_verified(parse_json(r));
}

TEST_CASE("e2e.a_table_that_changes_mid_stream_is_read_as_of_each_frame") {
  // topologies/table_versions.yaml: table_writer publishes version v at offset v · every, table_lookup
  // reads each frame's version on the host executor's blocks (or CPU threads), table_check reads the
  // object on the CPU and fails the run if any frame used another version. Under each protocol, with and
  // without the writer promising ahead (without, readers wait for the writer's finished frames), with 2
  // and 3 buffers.
  const fs::path topology = source_root() / "topologies/table_versions.yaml";
  struct variant {
    std::string protocol, promise, versions, lookup_on;
  };
  for (const variant& v : {variant{"rolling", "true", "2", "gpu"}, variant{"lazy", "false", "2", "gpu"},
                           variant{"batch", "true", "3", "gpu"}, variant{"rolling", "false", "3", "cpu"}}) {
    CAPTURE(v.protocol);
    CAPTURE(v.promise);
    CAPTURE(v.versions);
    CAPTURE(v.lookup_on);
    const auto r = run_process(
        {xeflow_run(), topology.string(), "--host", "-q", "--stats", "json", "--set",
         "operators.source.params.total_bytes=16MiB", "--set", "shared_objects.table.protocol=" + v.protocol,
         "--set", "shared_objects.table.versions=" + v.versions, "--set",
         "operators.writer.params.promise=" + v.promise, "--set", "operators.lookup.on=" + v.lookup_on});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto doc = parse_json(r);
    check_verified(doc);
    // 256 frames of 64 KiB, a version every 64: versions 1, 2, 3 (the last frame reads version 3).
    for (const auto& o : doc["operators"]) {
      if (o["name"] == "writer") CHECK(o["counters"]["versions"] == 4);
      if (o["name"] == "check") {
        CHECK(o["counters"]["wrong_frames"] == 0);
        CHECK(o["counters"]["frames"] == 256);
        CHECK(o["counters"]["last_version"] == 3);
      }
    }
    REQUIRE(doc["shared_objects"].size() == 1);
    CHECK(doc["shared_objects"][0]["protocol"] == v.protocol);
    CHECK(doc["shared_objects"][0]["versions"] == 4);
  }
}

TEST_CASE("e2e.xeflow_tune_refuses_what_it_cannot_tune") {
  const auto missing = run_process({xeflow_tune(), "/nonexistent/topology.yaml"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("/nonexistent/topology.yaml") != std::string::npos);
  const std::string topology = (source_root() / "topologies/c_g2c.yaml").string();
  const auto bad_stream = run_process({xeflow_tune(), topology, "--stream", "5XB"});
  CHECK(bad_stream.exit_code == 2);
  CHECK(bad_stream.err.find("--stream") != std::string::npos);
  const auto bad_set = run_process({xeflow_tune(), topology, "--set", "runtime.warps_per_block=40"});
  CHECK(bad_set.exit_code == 2);
  CHECK(bad_set.err.find("warps_per_block") != std::string::npos);
  if (!xf::probe_device().usable) {
    // Here (CI has no GPU): a clear refusal, not a host run that has no warps to split.
    const auto r = run_process({xeflow_tune(), topology});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("tuned on a GPU") != std::string::npos);
  }
}

namespace {
const char* kFaultTopology = R"(name: faulty
topics:
  t0: {frame_size: 16KiB, capacity: 8}
  t1: {frame_size: 16KiB, capacity: 8}
operators:
  source: {class: sequence_source, threads: 2, outputs: [t0], params: {total_bytes: 64GiB}}
  boom: {class: throw_at, threads: 2, inputs: [t0], outputs: [t1], params: {at: 300}}
  sink: {class: null_sink, threads: 2, inputs: [t1]}
)";

}  // namespace

TEST_CASE("e2e.operator_that_throws_ends_the_run_naming_the_site") {
  const fs::path topology = write_temp("faulty.yaml", kFaultTopology);
  const auto r =
      run_process({faulty_launcher(), topology.string(), "--host", "-q"}, std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("operator 'boom', topic 't0', offset 300") != std::string::npos);
  CHECK(r.err.find("deliberate failure") != std::string::npos);
  // The stream was 64 GiB: it can only have ended this early because the failure stopped everything.
  CHECK(r.seconds < 30);
}

TEST_CASE("e2e.verify_sink_catches_corruption_in_transit") {
  const std::string yaml = R"(topics:
  t0: {frame_size: 16KiB, capacity: 8}
  t1: {frame_size: 16KiB, capacity: 8}
operators:
  source: {class: sequence_source, outputs: [t0], params: {total_bytes: 8MiB}}
  flip: {class: corrupt_at, on: gpu, inputs: [t0], outputs: [t1], params: {at: 77}}
  verify: {class: verify_sink, inputs: [t1]}
)";
  const fs::path topology = write_temp("corrupt.yaml", yaml);
  const auto r = run_process({faulty_launcher(), topology.string(), "--host", "-q", "--stats", "json"},
                             std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("offset 77") != std::string::npos);
  const auto doc = parse_json(r);
  CHECK(doc["status"] == "failed");
  for (const auto& op : doc["operators"])
    if (op["name"] == "verify") CHECK(op["counters"]["corrupt"].get<std::uint64_t>() == 1);
}

TEST_CASE("e2e.sigint_drains_and_reports") {
  xf::test::child_process child({xeflow_run(), (source_root() / "topologies/pingpong.yaml").string(),
                                 "--host", "-q", "--stats", "json", "--set",
                                 "operators.source.params.total_bytes=1TiB"});
  std::this_thread::sleep_for(std::chrono::milliseconds(kSanitized ? 3000 : 1500));
  child.signal(SIGINT);
  const auto r = child.wait(std::chrono::seconds(60));
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 130);
  const auto doc = parse_json(r);
  CHECK(doc["status"] == "interrupted");
  check_verified(doc);  // drained: every frame published before the interrupt arrived, verified
}

TEST_CASE("e2e.prefetch_source_streams_fields_and_writes_back_in_host_mode") {
  // 100 003 records: 24 full frames of 4096 records and a short one.
  constexpr std::uint64_t records = 100'003;
  const fs::path dataset =
      fs::temp_directory_path() / ("xeflow-prefetch-" + std::to_string(getpid()) + ".bin");
  write_prefetch_dataset(dataset, records);
  const fs::path topology = write_temp("prefetch.yaml", prefetch_topology(dataset, "host"));
  const auto doc = run_verified(topology);
  fs::remove(topology);
  for (const auto& op : doc["operators"]) {
    if (op["name"] == "particles") {
      CHECK(op["counters"]["records"] == records);
      CHECK(op["counters"]["bytes_gathered"] == records * 4);  // a quarter of each record crossed
      CHECK(op["counters"]["dataset_bytes"] == records * 16);
    }
    if (op["name"] == "store") CHECK(op["counters"]["records_written"] == records);
  }
  check_prefetch_written_back(dataset, records);
  fs::remove(dataset);
}

TEST_CASE("e2e.kmeans_assignment_pass_matches_the_cpu_reference_in_host_mode") {
  // 100 000 particles: 18 full frames of 5461 and a short one; ids written into the dataset by xeflow equal
  // the CPU reference's first iteration, byte for byte.
  check_kmeans_pass_matches_reference(
      "host", 100'000, xeflow_kmeans_pass("host", [](const fs::path& topology) { run_verified(topology); }));
}

TEST_CASE("e2e.wordcount_bad_text_names_operator_topic_offset_and_what_is_wrong") {
  // A capital letter in the second frame (frames of 4 KiB hold 4 KiB - 64 bytes of word starts).
  std::string text;
  while (text.size() < 6000) text += "lower case words only ";
  text += "Except this\n";
  const fs::path file = write_temp("bad-text.txt", text);
  const fs::path result = fs::temp_directory_path() / ("xeflow-bad-counts-" + std::to_string(getpid()));
  const auto r = run_process({xeflow_run(), (source_root() / "topologies/wordcount.yaml").string(), "--host",
                              "-q", "--set", "topics.text.frame_size=4KiB", "--set",
                              "operators.source.params.path=" + file.string(), "--set",
                              "operators.count.params.result=" + result.string()});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(
            "operator 'count', topic 'text', offset 1: the operator failed the frame (code 1): a byte that "
            "is not a lowercase letter, space or newline") != std::string::npos);
  CHECK_FALSE(fs::exists(result));  // a failed run writes no result
  fs::remove(file);
}

TEST_CASE("e2e.sink_baseline_refuses_topologies_it_cannot_run" *
          doctest::skip(std::getenv("XF_SINK_BASELINE") == nullptr ||
                        *std::getenv("XF_SINK_BASELINE") == '\0')) {
  // The shape is checked before any GPU is touched: one CPU source, its topic, one GPU sink.
  const auto r = run_process({sink_baseline(), (source_root() / "topologies/pingpong.yaml").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("topology 'pingpong': operator 'scale'") != std::string::npos);
  const auto bad = run_process(
      {sink_baseline(), (source_root() / "topologies/wordcount.yaml").string(), "--mode", "triple"});
  CHECK(bad.exit_code == 2);
}

// Faults injected (XEFLOW_INJECT, docs/fault-injection.md) and defects of the same class: every case must
// end the run within 2 s with exit 1, name the site, print valid stats and leave no output file looking
// complete.
namespace {

/// The bound on a faulty run's end: process start, the run up to the fault, the teardown and the stats.
/// Sanitizers slow every step several times over.
constexpr double kFaultEndSeconds = kSanitized ? 6.0 : 2.0;

/// A short stream (4 MiB of 16 KiB frames: 256 offsets) through a kernel operator on the host executor
/// into a file sink at `out`; one host block, so thread 0 of the run is the block's and 1, 2 the source's.
std::string sink_topology(const fs::path& out) {
  return R"(name: faults
topics:
  t0: {frame_size: 16KiB, capacity: 8}
  t1: {frame_size: 16KiB, capacity: 8}
operators:
  source: {class: sequence_source, threads: 2, outputs: [t0], params: {total_bytes: 4MiB}}
  copy: {class: pass_through, on: gpu, inputs: [t0], outputs: [t1]}
  out: {class: file_sink, threads: 2, inputs: [t1], params: {path: ')" +
         out.string() + R"('}}
runtime: {executor: host, blocks: 1}
)";
}

/// A GPU file source reading `data` through the file cache (host executor) into a null sink; the
/// watchdog gives up on a read after 300 ms.
std::string cache_topology(const fs::path& data) {
  return R"(name: cache_faults
topics:
  frames: {frame_size: 64KiB, capacity: 16}
operators:
  files: {class: readahead_file_source, on: gpu, outputs: [frames], params: {path: ')" +
         data.string() + R"('}}
  sink: {class: null_sink, inputs: [frames]}
runtime:
  executor: host
  blocks: 2
  watchdog_ms: 300
  file_cache: {size: 4MiB, page_size: 4KiB, readahead: 64KiB}
)";
}

/// argv run with XEFLOW_INJECT=`faults` in its environment.
process_result run_injected(const std::string& faults, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/env", "XEFLOW_INJECT=" + faults});
  return run_process(argv, std::chrono::seconds(30));
}

/// The run failed cleanly: exit 1 within the bound, every one of `named` in its error, and valid JSON
/// stats saying so.
void check_failed_cleanly(const process_result& r, const std::vector<std::string>& named) {
  INFO("stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.seconds < kFaultEndSeconds);
  for (const std::string& n : named) CHECK_MESSAGE(r.err.find(n) != std::string::npos, "names " << n);
  const nlohmann::json doc = parse_json(r);
  CHECK(doc["status"] == "failed");
  for (const std::string& n : named)
    CHECK_MESSAGE(doc["error"].get<std::string>().find(n) != std::string::npos, "stats name " << n);
}

/// A scratch directory for output files, removed with everything in it.
struct scratch_dir {
  fs::path path = fs::temp_directory_path() / ("xeflow-faults-" + std::to_string(getpid()));
  scratch_dir() { fs::create_directories(path); }
  ~scratch_dir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("e2e.injected_faults_end_the_run_naming_the_site") {
  const scratch_dir dir;
  const fs::path out = dir.path / "out.bin";
  const fs::path topology = dir.path / "faults.yaml";
  std::ofstream(topology) << sink_topology(out);
  const std::vector<std::string> run{xeflow_run(), topology.string(), "-q", "--stats", "json"};
  struct fault_case {
    std::string spec;
    std::vector<std::string> named;
  };
  const std::string file = "file '" + out.string() + "'";
  const std::string partial = "the output so far is in '" + out.string() + ".partial'";
  const std::vector<fault_case> cases{
      // Byte 40·16 KiB + 100: frame 40's write fails after 100 bytes.
      {"sink_write:enospc@655460",
       {"operator 'out', topic 't1', offset 40", file, "write failed at byte offset 655460",
        "No space left on device", partial}},
      {"sink_write/out:eio@655460",
       {"operator 'out', topic 't1', offset 40", file, "byte offset 655460", "Input/output error", partial}},
      {"cpu_frame/out:throw@40",
       {"operator 'out', topic 't1', offset 40", "injected fault cpu_frame:throw@40"}},
      {"gpu_frame/copy:fail@40",
       {"operator 'copy', topic 't0', offset 40", "injected fault gpu_frame:fail@40"}},
      {"worker/out:kill@40",
       {"operator 'out', topic 't1', offset 40", "exited in the middle of its frame without publishing it"}},
      {"worker/source:kill@9",
       {"operator 'source', topic 't0', offset 9", "exited in the middle of its frame"}},
      {"topic_alloc:nomem@1", {"topic 't1'", "cannot allocate the topic"}},
      {"thread_create:again@2",
       {"operator 'source'", "cannot create its worker thread 2 of 2 (its threads: 2)",
        "Resource temporarily unavailable"}},
      {"thread_create:again@0",
       {"operator 'copy'", "host executor's block thread 1 of 1 (runtime.blocks: 1)",
        "Resource temporarily unavailable"}},
  };
  for (const fault_case& c : cases) {
    CAPTURE(c.spec);
    fs::remove(out);
    const auto r = run_injected(c.spec, run);
    check_failed_cleanly(r, c.named);
    CHECK_FALSE(fs::exists(out));  // never renamed onto the user's name
  }
}

TEST_CASE("e2e.injected_cache_read_faults_name_file_and_byte") {
  const scratch_dir dir;
  const fs::path data = dir.path / "data.bin";
  std::ofstream(data, std::ios::binary) << std::string(std::size_t{2} << 20, 'x');
  const fs::path topology = dir.path / "cache.yaml";
  std::ofstream(topology) << cache_topology(data);
  const std::vector<std::string> run{xeflow_run(), topology.string(), "-q", "--stats", "json"};
  const std::string file = "operator 'files', topic 'frames', offset ";
  const std::string path = "file '" + data.string() + "'";
  check_failed_cleanly(run_injected("cache_read:eio@300000", run),
                       {file, path, "read failed at byte offset 300000: Input/output error"});
  check_failed_cleanly(run_injected("cache_read/files:short@300000", run),
                       {file, path, "file ends at byte offset 300000", "truncated while being read"});
  // A hung read: the watchdog (300 ms) gives up on it, and the hung I/O thread returns once it did.
  check_failed_cleanly(run_injected("cache_read:hang@300000", run),
                       {file, path, "has not completed after", "runtime.watchdog_ms"});
}

TEST_CASE("e2e.a_malformed_fault_spec_is_refused") {
  const auto r = run_injected("cache_read:enospc@1",
                              {xeflow_run(), (source_root() / "topologies/pingpong.yaml").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("XEFLOW_INJECT: 'cache_read:enospc@1': site cache_read cannot do enospc") !=
        std::string::npos);
  const auto n =
      run_injected("worker:kill@x", {xeflow_run(), (source_root() / "topologies/pingpong.yaml").string()});
  CHECK(n.exit_code == 2);
  CHECK(n.err.find("N must be a non-negative integer, not 'x'") != std::string::npos);
}

TEST_CASE("e2e.a_file_sink_replaces_its_file_only_when_the_run_completed") {
  const scratch_dir dir;
  const fs::path out = dir.path / "out.bin";
  std::ofstream(out) << "the previous result";
  const fs::path topology = dir.path / "faults.yaml";
  std::ofstream(topology) << sink_topology(out);
  // Failed: the previous file stays as it was, the partial output beside it.
  const auto failed = run_injected("cpu_frame/out:throw@100", {xeflow_run(), topology.string(), "-q"});
  CHECK(failed.exit_code == 1);
  std::ifstream previous(out);
  CHECK(std::string(std::istreambuf_iterator<char>(previous), {}) == "the previous result");
  CHECK(fs::exists(out.string() + ".partial"));
  CHECK(failed.err.find("operator 'out': the run did not complete, so its output was not renamed: what was "
                        "written is in '" +
                        out.string() + ".partial'") != std::string::npos);
  // Completed: renamed over it, whole.
  const auto ok = run_process({xeflow_run(), topology.string(), "-q"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(fs::file_size(out) == 4u << 20);
  CHECK_FALSE(fs::exists(out.string() + ".partial"));
  // A device is written in place: no truncate, no rename.
  std::ofstream(topology) << sink_topology("/dev/null");
  const auto null = run_process({xeflow_run(), topology.string(), "-q"});
  INFO(null.err);
  CHECK(null.exit_code == 0);
  CHECK_FALSE(fs::exists("/dev/null.partial"));
}

TEST_CASE("e2e.two_writers_of_one_file_are_refused_and_holes_are_found") {
  const scratch_dir dir;
  const fs::path out = dir.path / "out.bin";
  // Two sinks, one file: refused at validation, at the second one's path.
  const fs::path twice = dir.path / "twice.yaml";
  std::ofstream(twice) << "topics:\n  t: {frame_size: 4KiB}\noperators:\n"
                          "  source: {class: sequence_source, outputs: [t], params: {total_bytes: 64KiB}}\n"
                          "  a: {class: file_sink, inputs: [t], params: {path: '" +
                              out.string() + "'}}\n  b: {class: file_sink, inputs: [t], params: {path: '" +
                              (dir.path / "." / "out.bin").string() + "'}}\n";
  const auto refused = run_process({xeflow_run(), twice.string(), "--validate"});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find(twice.string() + ":6:") != std::string::npos);
  CHECK(refused.err.find("is a file operator 'a' writes too (" + twice.string() + ":5:") !=
        std::string::npos);
  // Two sources of different lengths on one topic: the shorter one's offsets past its end are void, so
  // the file would have zero-filled holes there. The sink names the first. The longer one is long enough
  // (2048 frames through a ring of 8) that the shorter one's thread starts before it ends: a short source
  // that claimed its first offset after the stream's last frame would only add a void at the end (with
  // 64 frames that happened on a loaded 2-core machine).
  const fs::path holes = dir.path / "holes.yaml";
  std::ofstream(holes) << "topics:\n  t: {frame_size: 4KiB, capacity: 8}\noperators:\n"
                          "  long: {class: sequence_source, outputs: [t], params: {total_bytes: 8MiB}}\n"
                          "  short: {class: sequence_source, outputs: [t], params: {total_bytes: 16KiB}}\n"
                          "  out: {class: file_sink, inputs: [t], params: {path: '" +
                              out.string() + "'}}\n";
  const auto r = run_process({xeflow_run(), holes.string(), "-q", "--stats", "json"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("operator 'out', topic 't', offset ") != std::string::npos);
  CHECK(r.err.find("was never written") != std::string::npos);
  CHECK(parse_json(r)["status"] == "failed");
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("e2e.a_write_back_with_another_records_per_frame_is_refused") {
  // The source makes frames of 4096 records; the sink is told 4000 (another frame count) or 4095 (the
  // same count, another last frame): either would write results into the wrong records.
  constexpr std::uint64_t records = 100'003;
  const scratch_dir dir;
  const fs::path dataset = dir.path / "records.bin";
  write_prefetch_dataset(dataset, records);
  for (const char* wrong : {"4000", "4095"}) {
    CAPTURE(wrong);
    std::string yaml = prefetch_topology(dataset, "host");
    const std::string right = "records_per_frame: 4096";
    yaml.replace(yaml.find(right), right.size(), std::string("records_per_frame: ") + wrong);
    const fs::path topology = dir.path / "writeback.yaml";
    std::ofstream(topology) << yaml;
    const auto r = run_process({xeflow_run(), topology.string(), "-q", "--stats", "json"});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("operator 'store', topic 'scaled'") != std::string::npos);
    CHECK(r.err.find("must be the source's") != std::string::npos);
    CHECK(parse_json(r)["status"] == "failed");
  }
  // The dataset was not touched: word 2 is still as generated.
  std::ifstream in(dataset, std::ios::binary);
  std::uint32_t words[4] = {};
  in.read(reinterpret_cast<char*>(words), sizeof words);
  CHECK(words[2] == 2);
}

TEST_CASE("e2e.stats_that_cannot_be_written_fail_the_command") {
  const scratch_dir dir;
  const fs::path topology = dir.path / "faults.yaml";
  std::ofstream(topology) << sink_topology("/dev/null");
  for (const char* redirect : {"> /dev/full", ">&-"}) {
    CAPTURE(redirect);
    const auto r = run_process({"/bin/sh", "-c", std::string("exec \"$0\" \"$@\" ") + redirect, xeflow_run(),
                                topology.string(), "-q", "--stats", "json"});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("cannot write the stats to standard output: ") != std::string::npos);
  }
  // A name that is not UTF-8 cannot reach the stats: the loader refuses the text at the byte
  // (executor_test checks that the JSON would replace it rather than abort).
  std::ofstream(topology) << "name: \"caf\xe9\"\n"
                          << sink_topology("/dev/null").substr(std::string("name: faults\n").size());
  const auto r = run_process({xeflow_run(), topology.string(), "-q", "--stats", "json"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(topology.string() + ":1:11: error: the byte 0xE9 is not UTF-8 text") != std::string::npos);
}

TEST_CASE("e2e.sigterm_and_sighup_drain_like_sigint") {
  for (const int sig : {SIGTERM, SIGHUP}) {
    CAPTURE(sig);
    xf::test::child_process child({xeflow_run(), (source_root() / "topologies/pingpong.yaml").string(),
                                   "--host", "-q", "--stats", "json", "--set",
                                   "operators.source.params.total_bytes=1TiB"});
    std::this_thread::sleep_for(std::chrono::milliseconds(kSanitized ? 1500 : 400));
    child.signal(sig);
    const auto r = child.wait(std::chrono::seconds(30));
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 130);
    const auto doc = parse_json(r);
    CHECK(doc["status"] == "interrupted");
    check_verified(doc);
  }
}

TEST_CASE("e2e.a_second_interrupt_aborts_without_a_false_loss") {
  // The second signal aborts: threads waiting for offsets they took give up while others received later
  // offsets. That is not a loss the verify sink may report.
  xf::test::child_process child({xeflow_run(), (source_root() / "topologies/pingpong.yaml").string(),
                                 "--host", "-q", "--stats", "json", "--set",
                                 "operators.source.params.total_bytes=1TiB"});
  std::this_thread::sleep_for(std::chrono::milliseconds(kSanitized ? 1500 : 400));
  child.signal(SIGINT);
  child.signal(SIGINT);
  const auto r = child.wait(std::chrono::seconds(30));
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 130);
  CHECK(parse_json(r)["status"] == "interrupted");
  CHECK(r.err.find("lost") == std::string::npos);
}

TEST_CASE("e2e.an_interrupt_during_a_verify_sinks_start_up_is_heard") {
  // Checksum mode over a periodic source fills its cache before the first frame: 8192 frames of 64 KiB
  // replayed through FMA-64, about 8 s on CI's cores (minutes for larger periods). An interrupt must end
  // that at once.
  const fs::path topology = write_temp("slow-start.yaml", R"(topics:
  t0: {frame_size: 64KiB, capacity: 16}
  t1: {frame_size: 64KiB, capacity: 16}
operators:
  source: {class: dataset_source, outputs: [t0], params: {total_bytes: 1GiB, dataset_frames: 8192}}
  g: {class: fma, inputs: [t0], outputs: [t1], params: {iterations: 64}}
  verify: {class: verify_sink, threads: 2, inputs: [t1], params: {mode: checksum}}
runtime: {executor: host}
)");
  xf::test::child_process child({xeflow_run(), topology.string(), "-q", "--stats", "json"});
  std::this_thread::sleep_for(std::chrono::milliseconds(kSanitized ? 1500 : 400));
  child.signal(SIGINT);
  const auto start = std::chrono::steady_clock::now();
  const auto r = child.wait(std::chrono::seconds(30));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < kFaultEndSeconds);
  CHECK(r.exit_code == 130);
  CHECK(parse_json(r)["status"] == "interrupted");
}

TEST_CASE("e2e.a_write_past_the_file_size_limit_is_reported") {
  // ulimit -f: the kernel refuses the write with EFBIG (SIGXFSZ ignored) instead of killing the run.
  const scratch_dir dir;
  const fs::path out = dir.path / "out.bin";
  const fs::path topology = dir.path / "faults.yaml";
  std::ofstream(topology) << sink_topology(out);
  const auto r = run_process({"/bin/sh", "-c", "ulimit -f 256; exec \"$0\" \"$@\"", xeflow_run(),
                              topology.string(), "-q", "--stats", "json"});
  check_failed_cleanly(r, {"operator 'out', topic 't1'", "file '" + out.string() + "'", "File too large"});
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("e2e.a_result_file_that_cannot_be_written_stays_partial") {
  const scratch_dir dir;
  const fs::path text = dir.path / "words.txt";
  std::ofstream(text) << "some lower case words and some more words\n";
  const fs::path result = dir.path / "counts.txt";
  const auto r = run_injected(
      "sink_write:eio@5",
      {xeflow_run(), (source_root() / "topologies/wordcount.yaml").string(), "--host", "-q", "--stats",
       "json", "--set", "topics.text.frame_size=4KiB", "--set", "topics.text.device_memory=64KiB", "--set",
       "operators.count.params.table_slots=1Ki", "--set", "operators.source.params.path=" + text.string(),
       "--set", "operators.count.params.result=" + result.string()});
  check_failed_cleanly(r, {"operator 'count'", "result file '" + result.string() + "'",
                           "write failed at byte offset 5: Input/output error",
                           "what was written is in '" + result.string() + ".partial'"});
  CHECK_FALSE(fs::exists(result));
  CHECK(fs::file_size(result.string() + ".partial") == 5);
}
