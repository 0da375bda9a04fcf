// GPU end to end: the device executor on the H100 — every topology verified on the virtualised kernel,
// each coherence policy, large frames split over blocks, the error paths (a failed frame, a hung block,
// an illegal address) ending cleanly within seconds, and the topic protocol stressed with the GPU on both
// sides of a topic. Every case needs a GPU and is skipped (and counted as skipped) without one.
#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "framework/device_probe.hpp"
#include "tests/support/run_checks.hpp"
#include "tests/support/subprocess.hpp"

namespace fs = std::filesystem;
using xf::test::process_result;
using xf::test::run_process;
using namespace xf::test;

namespace {

const xf::device_status& gpu() {
  static const xf::device_status status = xf::probe_device();
  return status;
}
/// Evaluated when the test cases register (before doctest runs): no doctest output from here.
bool no_gpu() {
  return !gpu().usable;
}

/// The run completed on the device executor and every verify sink saw frames and no anomaly.
void check_verified_on_device(const process_result& r) {
  INFO("stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const auto doc = parse_json(r);
  CHECK(doc["status"] == "completed");
  CHECK(doc["executor"].get<std::string>().rfind("device", 0) == 0);
  check_verified(doc);
}

std::vector<std::string> device_run(const fs::path& topology, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{xeflow_run(), topology.string(),        "-q", "--stats", "json",
                                "--set",      "runtime.executor=device"};
  for (auto& e : extra) args.push_back(std::move(e));
  return args;
}

}  // namespace

TEST_CASE("gpu.device_status") {
  // Always runs: says in the log which GPU the cases below ran on, or why they were skipped.
  if (gpu().usable)
    MESSAGE("GPU: " << gpu().description);
  else
    MESSAGE("GPU tests skipped: " << gpu().reason);
  CHECK(gpu().usable == gpu().reason.empty());
}

TEST_CASE("gpu.every_topology_runs_verified_on_the_device" * doctest::skip(no_gpu())) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(source_root() / "topologies"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 7);
  for (const auto& file : files) {
    SUBCASE(file.filename().string().c_str()) {
      INFO(file);
      check_verified_on_device(
          run_process(device_run(file, {"--set", "operators.source.params.total_bytes=256MiB"}),
                      std::chrono::minutes(2)));
    }
  }
}

TEST_CASE("gpu.pingpong_streams_a_gibibyte_verified" * doctest::skip(no_gpu())) {
  check_verified_on_device(
      run_process(device_run(source_root() / "topologies/pingpong.yaml"), std::chrono::minutes(2)));
}

TEST_CASE("gpu.every_coherence_policy_is_correct" * doctest::skip(no_gpu())) {
  // The ablation's settings must all be right, however slow: all naive, then each layer tuned in turn.
  const char* settings[][3] = {{"naive", "naive", "naive"},
                               {"read_mostly", "naive", "naive"},
                               {"read_mostly", "placed", "naive"},
                               {"read_mostly", "placed", "placed"}};
  for (const auto& s : settings) {
    const std::string name = std::string(s[0]) + "/" + s[1] + "/" + s[2];
    SUBCASE(name.c_str()) {
      check_verified_on_device(
          run_process(device_run(source_root() / "topologies/c_g2c.yaml",
                                 {"--set", std::string("runtime.coherence.catalog=") + s[0], "--set",
                                  std::string("runtime.coherence.index=") + s[1], "--set",
                                  std::string("runtime.coherence.frames=") + s[2], "--set",
                                  "operators.source.params.total_bytes=64MiB"}),
                      std::chrono::minutes(3)));
    }
  }
}

TEST_CASE("gpu.large_frames_are_split_over_blocks" * doctest::skip(no_gpu())) {
  for (const char* frame : {"1MiB", "4MiB"}) {
    SUBCASE(frame) {
      check_verified_on_device(
          run_process(device_run(source_root() / "topologies/c_g3c.yaml",
                                 {"--set", std::string("topics.t0.frame_size=") + frame, "--set",
                                  std::string("topics.t1.frame_size=") + frame, "--set",
                                  std::string("topics.t2.frame_size=") + frame, "--set",
                                  std::string("topics.t3.frame_size=") + frame, "--set",
                                  "operators.source.params.total_bytes=1000MiB"}),
                      std::chrono::minutes(2)));
    }
  }
}

namespace {
std::string fault_topology(const std::string& op_class, const std::string& extra_runtime = "") {
  return R"(topics:
  t0: {frame_size: 16KiB, capacity: 16}
  t1: {frame_size: 16KiB, capacity: 16}
operators:
  source: {class: sequence_source, threads: 2, outputs: [t0], params: {total_bytes: 64GiB}}
  boom: {class: )" +
         op_class + R"(, on: gpu, inputs: [t0], outputs: [t1], params: {at: 300}}
  sink: {class: null_sink, inputs: [t1]}
runtime: {executor: device)" +
         extra_runtime + "}\n";
}
}  // namespace

TEST_CASE("gpu.failed_frame_ends_the_run_naming_the_site" * doctest::skip(no_gpu())) {
  const fs::path topology = write_temp("fail.yaml", fault_topology("fail_at"));
  const auto r = run_process({faulty_launcher(), topology.string(), "-q"}, std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("operator 'boom', topic 't0', offset 300") != std::string::npos);
  CHECK(r.err.find("failed the frame (code 7)") != std::string::npos);
  CHECK(r.seconds < 20);  // a 64 GiB stream: only the failure can have ended it this early
}

TEST_CASE("gpu.hung_block_is_caught_by_the_watchdog" * doctest::skip(no_gpu())) {
  const fs::path topology = write_temp("hang.yaml", fault_topology("hang_at", ", watchdog_ms: 500"));
  const auto r = run_process({faulty_launcher(), topology.string(), "-q"}, std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("stopped making progress") != std::string::npos);
  CHECK(r.err.find("offset 300 of 't0'") != std::string::npos);  // the dump shows the stuck frame
  CHECK(r.seconds < 20);
}

TEST_CASE("gpu.cpu_failure_stops_the_running_kernel" * doctest::skip(no_gpu())) {
  // The kernel would wait for t0's end forever: only the host's stop request (copied into device memory
  // beside the running kernel) can end it.
  const fs::path topology = write_temp("cpu_fail.yaml", R"(topics:
  t0: {frame_size: 16KiB, capacity: 16}
  t1: {frame_size: 16KiB, capacity: 16}
  t2: {frame_size: 16KiB, capacity: 16}
operators:
  source: {class: sequence_source, threads: 2, outputs: [t0], params: {total_bytes: 64GiB}}
  gpu: {class: scale, on: gpu, inputs: [t0], outputs: [t1], params: {factor: 3}}
  boom: {class: throw_at, inputs: [t1], outputs: [t2], params: {at: 300}}
  sink: {class: null_sink, inputs: [t2]}
runtime: {executor: device}
)");
  const auto r = run_process({faulty_launcher(), topology.string(), "-q"}, std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("deliberate failure at offset 300") != std::string::npos);
  CHECK(r.seconds < 20);
}

TEST_CASE("gpu.illegal_address_is_reported_and_the_process_exits" * doctest::skip(no_gpu())) {
  const fs::path topology = write_temp("wild.yaml", fault_topology("wild_write_at"));
  const auto r = run_process({faulty_launcher(), topology.string(), "-q"}, std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cudaErrorIllegalAddress") != std::string::npos);
  CHECK(r.seconds < 20);
}

TEST_CASE("gpu.corruption_in_transit_is_caught" * doctest::skip(no_gpu())) {
  const std::string yaml = R"(topics:
  t0: {frame_size: 16KiB, capacity: 8}
  t1: {frame_size: 16KiB, capacity: 8}
operators:
  source: {class: sequence_source, outputs: [t0], params: {total_bytes: 8MiB}}
  flip: {class: corrupt_at, on: gpu, inputs: [t0], outputs: [t1], params: {at: 77}}
  verify: {class: verify_sink, inputs: [t1]}
runtime: {executor: device}
)";
  const fs::path topology = write_temp("corrupt.yaml", yaml);
  const auto r =
      run_process({faulty_launcher(), topology.string(), "-q", "--stats", "json"}, std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("offset 77") != std::string::npos);
  const auto doc = parse_json(r);
  for (const auto& op : doc["operators"])
    if (op["name"] == "verify") CHECK(op["counters"]["corrupt"].get<std::uint64_t>() == 1);
}

TEST_CASE("gpu.topic_protocol_with_the_gpu_on_both_sides" * doctest::skip(no_gpu())) {
  // C(G)4C with 4 KiB frames: t1..t3 are published and subscribed by kernel blocks. Small capacities make
  // every slot turn over constantly; at capacity 1024 over 10^7 frames stream through. The source
  // publishes in place and the sink checks every frame's checksum, so the CPU keeps up with the GPU.
  for (const std::uint32_t capacity : {1u, 2u, 3u, 64u, 1024u}) {
    const std::uint64_t frames = capacity == 1024 ? 10'000'000 : 16'384;
    SUBCASE(std::to_string(capacity).c_str()) {
      std::string yaml = "topics:\n";
      for (int t = 0; t <= 4; ++t)
        yaml +=
            "  t" + std::to_string(t) + ": {frame_size: 4KiB, capacity: " + std::to_string(capacity) + "}\n";
      yaml +=
          "operators:\n  source: {class: dataset_source, threads: 4, outputs: [t0], params: {total_bytes: " +
          std::to_string(frames * 4096) + "}}\n";
      const char* ops[] = {"scale", "fma", "pass_through", "scale"};
      for (int g = 1; g <= 4; ++g)
        yaml += "  g" + std::to_string(g) + ": {class: " + ops[g - 1] + ", on: gpu, inputs: [t" +
                std::to_string(g - 1) + "], outputs: [t" + std::to_string(g) + "]}\n";
      yaml += "  verify: {class: verify_sink, threads: 6, inputs: [t4], params: {mode: checksum}}\n";
      const fs::path topology = write_temp("stress.yaml", yaml);
      const auto r = run_process(device_run(topology), std::chrono::minutes(5));
      fs::remove(topology);
      check_verified_on_device(r);
      const auto doc = parse_json(r);
      for (const auto& op : doc["operators"])
        if (op["name"] == "verify") CHECK(op["counters"]["frames"].get<std::uint64_t>() == frames);
    }
  }
}
