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
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "framework/plan/device_probe.hpp"
#include "tests/support/datatype_topology.hpp"
#include "tests/support/differential.hpp"
#include "tests/support/kmeans_iterations.hpp"
#include "tests/support/prefetch_topology.hpp"
#include "tests/support/run_checks.hpp"
#include "tests/support/subprocess.hpp"
#include "tests/support/topology_files.hpp"

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

/// The run completed on the device executor and every verify sink saw frames and no anomaly — or, for a
/// short_run's topology, its results are right (short_run::check_results).
void check_verified_on_device(const process_result& r, const short_run* run = nullptr) {
  INFO("stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const auto doc = parse_json(r);
  CHECK(doc["status"] == "completed");
  CHECK(doc["executor"].get<std::string>().rfind("device", 0) == 0);
  if (run != nullptr)
    run->check_results(doc);
  else
    check_verified(doc);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
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
  const std::vector<fs::path> files = every_topology();
  REQUIRE(files.size() >= 8);
  for (const auto& file : files) {
    SUBCASE(file.filename().string().c_str()) {
      INFO(file);
      const short_run run(file, "256MiB");
      const auto as_written = run_process(device_run(file, run.sets()), std::chrono::minutes(2));
      check_verified_on_device(as_written, &run);
      // Again with every topic crossing by the kernel's own loads and stores: `transfer: auto` gives these
      // topologies' deep 64 KiB rings to the copy engines, so this is the path they would not take.
      std::vector<std::string> mapped = run.sets();
      const auto doc = parse_json(as_written);  // named: a range-for over a temporary's member dangles
      for (const auto& t : doc["topics"])
        mapped.insert(mapped.end(), {"--set", "topics." + t["name"].get<std::string>() + ".transfer=mapped"});
      INFO("transfer mapped");
      check_verified_on_device(run_process(device_run(file, mapped), std::chrono::minutes(2)), &run);
    }
  }
}

TEST_CASE("gpu.setquery_answers_with_a_rounds_idle_warps_spread_over_its_items" * doctest::skip(no_gpu())) {
  // runtime.spread_warps: a round gives the warps its computing items leave idle to those items, so an
  // item runs on more warps than its own, a different number from round to round. Through an 8-frame ring
  // (each frame shared by several items), in both transfer modes, every query's answer stays the
  // reference's, and busy rounds keep most of a block's warps busy.
  for (const auto& file : every_topology()) {
    if (file.filename().string().rfind("setquery_", 0) != 0) continue;
    SUBCASE(file.filename().string().c_str()) {
      const short_run run(file, "64MiB");
      for (const char* mode : {"dma", "mapped"}) {
        INFO(file << ", transfer " << mode);
        std::vector<std::string> sets = run.sets();
        sets.insert(sets.end(), {"--set", "runtime.spread_warps=on", "--set", "topics.bench.capacity=8",
                                 "--set", std::string("topics.bench.transfer=") + mode});
        const auto r = run_process(device_run(file, sets), std::chrono::minutes(2));
        check_verified_on_device(r, &run);
        const auto doc = parse_json(r);
        const auto& k = doc["kernel"];
        const double busy = k["busy_rounds"].get<double>() * k["warps_per_block"].get<double>();
        REQUIRE(busy > 0);
        CHECK(k["placed_warps"].get<double>() / busy > 0.5);
      }
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
  // Both ways across PCIe: the kernel reading and writing host memory (mapped), and the copy engines.
  for (const char* transfer : {"mapped", "dma"})
    for (const char* frame : {"1MiB", "4MiB"}) {
      const std::string name = std::string(frame) + " " + transfer;
      SUBCASE(name.c_str()) {
        std::vector<std::string> sets;
        for (const char* t : {"t0", "t1", "t2", "t3"}) {
          sets.insert(sets.end(), {"--set", std::string("topics.") + t + ".frame_size=" + frame});
          sets.insert(sets.end(), {"--set", std::string("topics.") + t + ".transfer=" + transfer});
        }
        sets.insert(sets.end(), {"--set", "operators.source.params.total_bytes=1000MiB"});
        check_verified_on_device(
            run_process(device_run(source_root() / "topologies/c_g3c.yaml", sets), std::chrono::minutes(2)));
      }
    }
}

namespace {
/// Runs `topology` on the device with every topic's transfer set to dma (and `extra`), checks it verified,
/// and that the copy engines carried each topic that crosses PCIe the expected way.
void check_copied(const fs::path& topology, const std::vector<std::string>& topics,
                  const std::map<std::string, std::string>& copied_to, std::vector<std::string> extra) {
  for (const auto& t : topics) extra.insert(extra.end(), {"--set", "topics." + t + ".transfer=dma"});
  const auto r = run_process(device_run(topology, extra), std::chrono::minutes(2));
  check_verified_on_device(r);
  const auto doc = parse_json(r);
  for (const auto& t : doc["topics"]) {
    const std::string name = t["name"];
    INFO("topic " << name);
    const auto want = copied_to.find(name);
    if (want == copied_to.end()) {
      CHECK_FALSE(t.contains("copy_engines"));
      continue;
    }
    REQUIRE(t.contains("copy_engines"));
    CHECK(t["copy_engines"]["to"] == want->second);
    // Every byte of the stream crossed, in copies that grew past one frame when the bridge fell behind.
    CHECK(t["copy_engines"]["bytes"].get<std::uint64_t>() >= t["bytes"].get<std::uint64_t>());
    CHECK(t["copy_engines"]["copies"].get<std::uint64_t>() > 0);
    // Each frame copy is a CUDA call, beside the seq words' copies or the events; the thread was busy.
    CHECK(t["copy_engines"]["cuda_calls"].get<std::uint64_t>() >
          t["copy_engines"]["copies"].get<std::uint64_t>());
    CHECK(t["copy_engines"]["bridge_busy_seconds"].get<double>() > 0.0);
  }
}
}  // namespace

TEST_CASE("gpu.copy_engines_carry_frames_both_ways" * doctest::skip(no_gpu())) {
  SUBCASE("small frames, a short last frame") {
    check_copied(source_root() / "topologies/pingpong.yaml", {"c2g", "g2c"},
                 {{"c2g", "device"}, {"g2c", "host"}},
                 {"--set", "operators.source.params.total_bytes=536891392"});  // 512 MiB + 20 KiB
  }
  SUBCASE("several groups on a copied topic, on both sides") {
    check_copied(source_root() / "topologies/fanout.yaml", {"raw", "scaled", "fused"},
                 {{"raw", "device"}, {"scaled", "host"}, {"fused", "host"}}, {});
  }
  SUBCASE("every stage crosses PCIe (C(GC)3), 256 KiB frames") {
    std::vector<std::string> sets{"--set", "operators.source.params.total_bytes=600MiB"};
    for (const char* t : {"t0", "t1", "t2", "t3", "t4", "t5"})
      sets.insert(sets.end(), {"--set", std::string("topics.") + t + ".frame_size=256KiB"});
    check_copied(source_root() / "topologies/c_gc3.yaml", {"t0", "t1", "t2", "t3", "t4", "t5"},
                 {{"t0", "device"},
                  {"t1", "host"},
                  {"t2", "device"},
                  {"t3", "host"},
                  {"t4", "device"},
                  {"t5", "host"}},
                 sets);
  }
  SUBCASE("1 MiB frames in parts (transfer auto), capacity 3: the slot ring wraps constantly") {
    std::vector<std::string> sets{"--set",
                                  "operators.source.params.total_bytes=314576896"};  // 300 MiB + 4 KiB
    for (const char* t : {"t0", "t1", "t2", "t3", "t4"}) {
      sets.insert(sets.end(), {"--set", std::string("topics.") + t + ".frame_size=1MiB"});
      sets.insert(sets.end(), {"--set", std::string("topics.") + t + ".capacity=3"});
    }
    check_copied(source_root() / "topologies/c_g4c.yaml", {}, {{"t0", "device"}, {"t4", "host"}}, sets);
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

TEST_CASE("gpu.injected_frame_fault_ends_the_device_run_naming_the_site" * doctest::skip(no_gpu())) {
  // XEFLOW_INJECT's gpu_frame site (docs/fault-injection.md) travels to the kernel in its operator table:
  // the device's round fails frame 300 of the built-in scale as the host executor's would.
  const fs::path topology = write_temp("inject.yaml", R"(topics:
  t0: {frame_size: 16KiB, capacity: 16}
  t1: {frame_size: 16KiB, capacity: 16}
operators:
  source: {class: sequence_source, threads: 2, outputs: [t0], params: {total_bytes: 64GiB}}
  g: {class: scale, on: gpu, inputs: [t0], outputs: [t1], params: {factor: 3}}
  sink: {class: null_sink, inputs: [t1]}
runtime: {executor: device}
)");
  const auto r = run_process({"/usr/bin/env", "XEFLOW_INJECT=gpu_frame/g:fail@300", xeflow_run(),
                              topology.string(), "-q", "--stats", "json"},
                             std::chrono::seconds(60));
  fs::remove(topology);
  INFO(r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("operator 'g', topic 't0', offset 300") != std::string::npos);
  CHECK(r.err.find("injected fault gpu_frame:fail@300") != std::string::npos);
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  CHECK(doc["status"] == "failed");
  CHECK(doc["executor"].get<std::string>().rfind("device", 0) == 0);
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
  // The dump shows the stuck frame (or its parts, where the plan split it over blocks).
  CHECK(r.err.find("boom: offset 300 ") != std::string::npos);
  CHECK(r.err.find(" of 't0', running the operator on it") != std::string::npos);
  CHECK(r.seconds < 20);
}

TEST_CASE("gpu.cpu_failure_stops_the_running_kernel" * doctest::skip(no_gpu())) {
  // The kernel would wait for t0's end forever: only the host's stop request (copied into device memory
  // beside the running kernel) can end it — and the copy engines' bridge with it, which would wait too.
  for (const char* transfer : {"mapped", "dma"}) {
    SUBCASE(transfer) {
      std::string yaml = "topics:\n";
      for (const char* t : {"t0", "t1", "t2"})
        yaml += std::string("  ") + t + ": {frame_size: 16KiB, capacity: 16, transfer: " + transfer + "}\n";
      yaml += R"(operators:
  source: {class: sequence_source, threads: 2, outputs: [t0], params: {total_bytes: 64GiB}}
  gpu: {class: scale, on: gpu, inputs: [t0], outputs: [t1], params: {factor: 3}}
  boom: {class: throw_at, inputs: [t1], outputs: [t2], params: {at: 300}}
  sink: {class: null_sink, inputs: [t2]}
runtime: {executor: device}
)";
      const fs::path topology = write_temp("cpu_fail.yaml", yaml);
      const auto r = run_process({faulty_launcher(), topology.string(), "-q"}, std::chrono::seconds(60));
      fs::remove(topology);
      INFO(r.err);
      REQUIRE_FALSE(r.timed_out);
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("deliberate failure at offset 300") != std::string::npos);
      CHECK(r.seconds < 20);
    }
  }
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

TEST_CASE("gpu.compute_sanitizer_memcheck_is_clean" * doctest::skip(no_gpu())) {
  const char* tool = std::getenv("XF_COMPUTE_SANITIZER");
  if (tool == nullptr || *tool == '\0') {
    MESSAGE("memcheck skipped: compute-sanitizer was not found when the build was configured");
    return;
  }
  // Bounded runs through C(G)2C, both ways across PCIe: the kernel's own loads and stores (16 KiB frames)
  // and the copy engines (1 MiB). Memcheck slows every access, so the streams are small and few blocks
  // poll; the watchdog allows for the slowdown.
  for (const char* frame : {"16KiB", "1MiB"}) {
    SUBCASE(frame) {
      std::vector<std::string> args{tool, "--tool", "memcheck", "--error-exitcode", "9"};
      args.insert(args.end(), {xeflow_run(), (source_root() / "topologies/c_g2c.yaml").string(), "-q"});
      for (const char* set : {"runtime.executor=device", "runtime.blocks=8", "runtime.watchdog_ms=120000",
                              "operators.source.params.total_bytes=16MiB"})
        args.insert(args.end(), {"--set", set});
      for (const char* t : {"t0", "t1", "t2"})
        args.insert(args.end(), {"--set", std::string("topics.") + t + ".frame_size=" + frame});
      const auto r = run_process(args, std::chrono::minutes(5));
      INFO("stdout: " << r.out);
      INFO("stderr: " << r.err);
      REQUIRE_FALSE(r.timed_out);
      CHECK(r.exit_code == 0);
      CHECK((r.out + r.err).find("ERROR SUMMARY: 0 errors") != std::string::npos);
    }
  }
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

namespace {
/// FMA-4 → FMA-256 over 8 GiB; from frame `heavy_switch` on (0: never) the heavy operator runs FMA-4 too, so
/// the spread of the round times collapses mid-stream and auto-online must tune again.
std::string tuned_topology(const std::string& frame, const std::string& tuning,
                           std::int64_t heavy_switch = 0) {
  return R"(topics:
  t0: {frame_size: )" +
         frame + R"(, capacity: 1024}
  t1: {frame_size: )" +
         frame + R"(, capacity: 1024}
  t2: {frame_size: )" +
         frame + R"(, capacity: 1024}
operators:
  source: {class: dataset_source, threads: 4, outputs: [t0], params: {total_bytes: 8GiB, dataset_frames: 64}}
  light: {class: fma, on: gpu, inputs: [t0], outputs: [t1], params: {iterations: 4, a: 3, b: 1}}
  heavy: {class: fma, on: gpu, inputs: [t1], outputs: [t2], params: {iterations: 256, a: 3, b: 1, switch_offset: )" +
         std::to_string(heavy_switch) + R"(, iterations_after: 4}}
  verify: {class: verify_sink, threads: 8, inputs: [t2], params: {mode: checksum}}
runtime: {executor: device, warps_per_block: 32, partition: auto-online, tuning: )" +
         tuning + "}\n";
}
}  // namespace

TEST_CASE("gpu.partitions_switch_mid_stream_without_losing_a_frame" * doctest::skip(no_gpu())) {
  // auto-online with a hair trigger while 8 GiB stream through two GPU operators of different costs; three
  // quarters of the way the heavy one becomes as light as the other, so one more tuning follows (noise alone
  // re-tuned the 16 KiB run but not always the shorter 256 KiB one). Not half way: at 256 KiB the first
  // tuning samples 800 heavy items and ended just after the half-way switch once (H100, 2026-11-24), so it
  // measured the new costs itself and none followed. Every tuning switches partitions
  // between rounds at least once per sampled window; the checksum sink sees every frame, once, in order.
  // 16 KiB frames give each operator several items per round (warps split unevenly among them); 256 KiB
  // frames one item of many warps.
  const std::pair<const char*, std::int64_t> frame_sizes[] = {{"16KiB", 16 << 10}, {"256KiB", 256 << 10}};
  for (const auto& [frame, frame_bytes] : frame_sizes) {
    SUBCASE(frame) {
      const std::int64_t frames = (std::int64_t{8} << 30) / frame_bytes;
      const fs::path topology = write_temp(
          "tuned.yaml", tuned_topology(frame, "{samples: 800, retune_spread_percent: 1, retune_hold_ms: 1}",
                                       frames / 4 * 3));
      const auto r = run_process(device_run(topology), std::chrono::minutes(2));
      fs::remove(topology);
      check_verified_on_device(r);
      const auto doc = parse_json(r);
      REQUIRE(doc.contains("partition"));
      const auto& p = doc["partition"];
      INFO("partition section: " << p.dump().substr(0, 4000));
      CHECK(p["policy"] == "auto-online");
      CHECK(p["tunings"].size() >= 2);
      CHECK(p["switches"].get<int>() >= 16);  // two tunings of 8 coarse windows at least
      int warps = 0;
      for (const auto& op : p["operators"]) {
        CHECK(op["items"].get<std::uint64_t>() > 0);
        CHECK(op["warps"].get<int>() >= op["items_per_round"].get<int>());
        warps += op["warps"].get<int>();
      }
      CHECK(warps == 32);
      MESSAGE(frame << ": " << p["tunings"].size() << " tunings, " << p["switches"] << " switches, final "
                    << p["operators"][0]["warps"] << ":" << p["operators"][1]["warps"]);
    }
  }
}

TEST_CASE("gpu.xeflow_tune_works_on_every_topology" * doctest::skip(no_gpu())) {
  for (const auto& file : every_topology()) {
    SUBCASE(file.filename().string().c_str()) {
      const fs::path written = fs::temp_directory_path() / ("xeflow_tuned_" + file.filename().string());
      // 1 GiB: a dataset source cannot stream longer than its file, and sampling takes tens of ms.
      const short_run run(file, "1GiB");
      std::vector<std::string> tune{xeflow_tune(), file.string(), "--write", written.string()};
      // The dataset, key and result paths only: xeflow-tune makes the generated sources long enough to
      // sample.
      for (std::size_t k = 0; k + 1 < run.sets().size(); k += 2)
        if (run.sets()[k + 1].find(".params.path=") != std::string::npos ||
            run.sets()[k + 1].find(".params.key_file=") != std::string::npos ||
            run.sets()[k + 1].find(".params.result=") != std::string::npos ||
            run.sets()[k + 1].find(".params.cards=") != std::string::npos)
          tune.insert(tune.end(), {"--set", run.sets()[k + 1]});
      const auto r = run_process(tune, std::chrono::minutes(2));
      INFO(r.out << r.err);
      REQUIRE_FALSE(r.timed_out);
      REQUIRE(r.exit_code == 0);
      CHECK((r.out.find("chosen partition: ") != std::string::npos ||
             r.out.find("nothing to tune") != std::string::npos));
      // The trial run leaves no output of its sinks behind under a temporary name.
      for (const std::string& set : tune)
        if (const std::size_t at = set.find(".params.");
            at != std::string::npos && set.rfind("operators.", 0) == 0)
          if (const std::size_t eq = set.find('=', at); eq != std::string::npos)
            CHECK_FALSE(fs::exists(set.substr(eq + 1) + ".partial"));
      // The written topology has the partition as explicit warps and runs verified.
      std::ifstream in(written);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      CHECK(text.find("partition: explicit") != std::string::npos);
      check_verified_on_device(run_process(device_run(written, run.sets()), std::chrono::minutes(2)), &run);
      fs::remove(written);
    }
  }
}

TEST_CASE("gpu.prefetch_source_streams_fields_and_writes_back" * doctest::skip(no_gpu())) {
  // The host-mode case of e2e on the device executor: fields cross to the GPU, results come back to a
  // verify sink and into the dataset. 4 KiB and 64 KiB frames (mapped and copy-engine transfers).
  constexpr std::uint64_t records = 1'000'003;
  for (const std::uint64_t frame : {std::uint64_t{4096}, std::uint64_t{65536}}) {
    SUBCASE(std::to_string(frame).c_str()) {
      const fs::path dataset =
          fs::temp_directory_path() / ("xeflow-prefetch-gpu-" + std::to_string(getpid()));
      write_prefetch_dataset(dataset, records);
      const fs::path topology = write_temp("prefetch.yaml", prefetch_topology(dataset, "device", frame));
      check_verified_on_device(run_process(device_run(topology), std::chrono::minutes(2)));
      fs::remove(topology);
      check_prefetch_written_back(dataset, records);
      fs::remove(dataset);
    }
  }
}

TEST_CASE("gpu.kmeans_assignment_pass_matches_the_cpu_reference" * doctest::skip(no_gpu())) {
  check_kmeans_pass_matches_reference(
      "device", 2'000'000, xeflow_kmeans_pass("device", [](const fs::path& topology) {
        // The ids cross by the copy engines: kmeans_assign publishes a third of each frame (its ids), and
        // only that third may cross — the copies' bytes are the published bytes, within the last frame's
        // (a 2D copy of a run takes its longest frame's width from each).
        const auto r =
            run_process(device_run(topology, {"--set", "topics.ids.transfer=dma"}), std::chrono::minutes(2));
        check_verified_on_device(r);
        const auto doc = parse_json(r);
        for (const auto& t : doc["topics"]) {
          if (t["name"] != "ids") continue;
          REQUIRE(t.contains("copy_engines"));
          const auto published = t["bytes"].get<std::uint64_t>(),
                     copied = t["copy_engines"]["bytes"].get<std::uint64_t>();
          CHECK(published == 2'000'000ull * 4);
          CHECK(copied >= published);
          CHECK(copied < published + t["frame_bytes"].get<std::uint64_t>());
        }
      }));
}

TEST_CASE("gpu.kmeans_iterations_on_the_device_match_the_cpu_reference" * doctest::skip(no_gpu())) {
  // xeflow-kmeans with every assignment pass in the persistent kernel: 3 Lloyd iterations, the reference's
  // digest, centres and ids. 2M particles: 367 frames of 5461 per pass, 31 reduction blocks.
  const nlohmann::json j = check_kmeans_iterations_match_reference(2'000'000, 8, 3, {"--threads", "4"});
  CHECK(j["executor"].get<std::string>().rfind("device", 0) == 0);
  CHECK(j["iteration_stats"].size() == 3);
}

TEST_CASE("gpu.kmeans_baselines_write_what_the_cpu_reference_writes" * doctest::skip(no_gpu())) {
  for (const char* mode : {"single", "double", "managed"}) {
    SUBCASE(mode) {
      check_kmeans_pass_matches_reference(
          mode, 2'000'000, [mode](const fs::path& dataset, const std::string&) {
            const auto r = run_process({kmeans_gpu_baseline(), dataset.string(), "--mode", mode, "--clusters",
                                        "5", "--chunk", "100000", "--json"},
                                       std::chrono::minutes(2));
            INFO(r.out << r.err);
            REQUIRE_FALSE(r.timed_out);
            CHECK(r.exit_code == 0);
          });
    }
  }
}

TEST_CASE("gpu.sink_baselines_count_what_xeflow_and_the_cpu_reference_count" * doctest::skip(no_gpu())) {
  // The GPU sinks' baselines (the benchmark's single / double / managed contenders) over a 64 MiB text: the
  // same words, distinct words and digest as the CPU reference.
  const fs::path text =
      fs::temp_directory_path() / ("xeflow-sink-baseline-" + std::to_string(getpid()) + ".txt");
  REQUIRE(run_process({gen_wordcount(), text.string(), "--bytes", "64MiB"}).exit_code == 0);
  const auto cpu = run_process({wordcount_cpu(), text.string(), "--json"});
  REQUIRE(cpu.exit_code == 0);
  const auto expected = nlohmann::json::parse(cpu.out);
  for (const char* mode : {"single", "double", "managed"}) {
    CAPTURE(mode);
    const auto r =
        run_process({sink_baseline(), (source_root() / "topologies/wordcount.yaml").string(), "--mode", mode,
                     "--json", "--set", "operators.source.params.path=" + text.string(), "--set",
                     "operators.count.params.result=''"},
                    std::chrono::minutes(2));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    const auto& c = doc["sink_counters"];
    CHECK(c["words"] == expected["words"]);
    CHECK(c["distinct_words"] == expected["distinct_words"]);
    char digest[24];
    std::snprintf(digest, sizeof digest, "0x%08llx",
                  static_cast<unsigned long long>(c["digest"].get<std::uint64_t>()));
    CHECK(std::string(digest) == expected["digest"].get<std::string>());
    CHECK(doc["bytes_to_device"] == fs::file_size(text));
  }
  fs::remove(text);
}

TEST_CASE("gpu.setquery_ckc_baselines_answer_what_the_reference_answers" * doctest::skip(no_gpu())) {
  // The copy-kernel-copy baselines of skip transfer (whole columns, whole table) run the query operator's
  // compute over a table copied to the GPU: every Set Query variant's result file equals the reference's.
  const fs::path dir = fs::temp_directory_path() / ("xeflow-setquery-ckc-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path table = dir / "bench.xft";
  REQUIRE(run_process({gen_setquery(), "--rows", "600000", "--out", table.string()}).exit_code == 0);
  REQUIRE(run_process({setquery_reference(), table.string(), "--out-dir", (dir / "expected").string()})
              .exit_code == 0);
  // The table in one chunk, then in chunks of 7 of its 37 frames (a table larger than the GPU's memory).
  for (const char* chunk : {"0", "7"}) {
    CAPTURE(chunk);
    const fs::path out = dir / ("ckc-" + std::string(chunk));
    const auto r = run_process({setquery_ckc(), table.string(), "--reps", "2", "--chunk-frames", chunk,
                                "--out-dir", out.string(), "--json", (out / "ckc.json").string()},
                               std::chrono::minutes(2));
    INFO(r.out << r.err);
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(read_text(out / "ckc.json"))["chunks"] ==
          (std::string(chunk) == "7" ? 6 : 1));
    std::size_t compared = 0;
    for (const char* layout : {"columns", "table"})
      for (const auto& entry : fs::directory_iterator(dir / "expected")) {
        CAPTURE(layout);
        CAPTURE(entry.path().filename());
        CHECK(read_text(out / layout / entry.path().filename()) == read_text(entry.path()));
        ++compared;
      }
    CHECK(compared == 2 * 62);
  }
  fs::remove_all(dir);
}

TEST_CASE("gpu.datatypes_pack_and_unpack_on_the_device_as_the_host_engine_does" * doctest::skip(no_gpu())) {
  // The persistent kernel's lanes walk the committed types from the parameter arena: the Y-Z face (a run an
  // element), records' fields (a struct, unaligned runs) and a transposition (overlapping instances), each
  // frame compared with dt::pack and dt::unpack on the host. Default lanes, then one element a lane.
  for (const char* lane : {"0", "1"}) {
    CAPTURE(lane);
    const datatype_pipeline pipeline(std::string("device-") + lane);
    std::vector<std::string> extra{"--set", "runtime.executor=device"};
    for (const char* op : {"pack_faces", "unpack_faces", "pack_fields", "transpose", "transpose_back"})
      extra.insert(extra.end(),
                   {"--set", std::string("operators.") + op + ".params.elements_per_lane=" + lane});
    const auto r = run_process(pipeline.command(extra), std::chrono::minutes(2));
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(r.exit_code == 0);
    CHECK(parse_json(r)["executor"].get<std::string>().rfind("device", 0) == 0);
    pipeline.check();
  }
}

TEST_CASE("gpu.device_and_host_executors_agree_on_every_topology" * doctest::skip(no_gpu())) {
  // The host executor drives the kernel's round on CPU threads: the device's persistent kernel must give
  // the same per-offset ledger (every CPU subscriber's frames, CRC-32 included) and the same counters.
  const std::vector<fs::path> files = every_topology();
  REQUIRE(files.size() >= 8);
  for (const auto& file : files) {
    SUBCASE(file.filename().string().c_str()) {
      INFO(file);
      const short_run run(file, "64MiB");
      std::vector<std::string> device = run.sets(), host = run.sets();
      device.insert(device.end(), {"--set", "runtime.executor=device"});
      host.insert(host.end(), {"--set", "runtime.executor=host"});
      const ledger_run on_device = run_with_ledger(file, device, "device");
      CHECK(on_device.stats["executor"].get<std::string>().rfind("device", 0) == 0);
      const ledger_run on_host = run_with_ledger(file, host, "host");
      check_ledger_accounts(on_device);
      check_same_results(on_device, on_host);
    }
  }
}
