// xeflow-encoding-cpu as a user runs it: a short stream of each operation, verified and measured (the JSON's
// fields), and the command line's errors naming the option with exit code 2. No timings are asserted.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/apps/dataset_fixture.hpp"

namespace {

using namespace xf::test;

nlohmann::json run_json(const std::vector<std::string>& args) {
  std::vector<std::string> with_json = args;
  with_json.push_back("--json");
  const process_result r = run_tool("XF_ENCODING_CPU", with_json);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

TEST_CASE("encoding_cpu.raid6_streams_verified_frames") {
  const nlohmann::json j = run_json({"--op", "raid6", "--k", "8", "--frame-size", "64KiB", "--total", "4MiB",
                                     "--dataset-frames", "8", "--threads", "2", "--seed", "7"});
  CHECK(j["op"] == "raid6");
  CHECK(j["k"] == 8);
  CHECK(j["frame_bytes"] == 65536);
  CHECK(j["frames"] == 64);
  CHECK(j["bytes"] == 4 << 20);
  CHECK(j["threads"] == 2);
  CHECK(j["verified_frames"] == 8);
  CHECK(j["gbps"].get<double>() > 0);
  CHECK(j["latency_p50_us"].get<double>() <= j["latency_p99_us"].get<double>());
  CHECK(j["library"].get<std::string>().rfind("ISA-L", 0) == 0);
}

TEST_CASE("encoding_cpu.aes_modes_stream_verified_frames") {
  for (const char* op : {"aes-ecb", "aes-ctr"}) {
    CAPTURE(op);
    const nlohmann::json j =
        run_json({"--op", op, "--frame-size", "4KiB", "--total", "1MiB", "--dataset-frames", "16"});
    CHECK(j["op"] == op);
    CHECK(j["k"].is_null());
    CHECK(j["frames"] == 256);
    CHECK(j["threads"] == 1);
    CHECK(j["verified_frames"] == 16);
    CHECK(j["library"].get<std::string>().rfind("OpenSSL", 0) == 0);
  }
  const process_result line = run_tool("XF_ENCODING_CPU", {"--op", "aes-ctr", "--total", "1MiB"});
  REQUIRE_MESSAGE(line.exit_code == 0, line.err);
  CHECK_MESSAGE(line.out.find("aes-ctr frame 64KiB threads 1: ") == 0, line.out);
  CHECK(line.out.find("GB/s (input bytes), latency p50 ") != std::string::npos);
}

TEST_CASE("encoding_cpu.bad_options_exit_2_naming_the_option") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--op", "raid5"}, "--op"},
      {{"--k", "1"}, "--k"},
      {{"--k", "4", "--frame-size", "1000"}, "--frame-size"},
      {{"--k", "3", "--frame-size", "64KiB"}, "multiple of 192"},
      {{"--op", "aes-ecb", "--frame-size", "100"}, "--frame-size"},
      {{"--total", "4 parsecs"}, "--total"},
      {{"--frame-size", "64KiB", "--total", "1KiB"}, "--total"},
      {{"--dataset-frames", "0"}, "--dataset-frames"},
      {{"--threads", "0"}, "--threads"},
  };
  for (const auto& c : cases) {
    // Plain references: clang's lambdas (CAPTURE's) cannot capture structured bindings.
    const std::vector<std::string>& args = c.first;
    const std::string& named = c.second;
    CAPTURE(args.front());
    CAPTURE(named);
    const process_result r = run_tool("XF_ENCODING_CPU", args);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
  }
}

}  // namespace
