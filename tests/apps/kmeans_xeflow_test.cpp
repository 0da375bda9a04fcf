// xeflow-kmeans on the host executor: Lloyd iterations bit-identical to the CPU reference for other thread
// counts and frame sizes, per-iteration stats in its JSON, and its exit codes for bad input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/core/units.hpp"
#include "tests/apps/dataset_fixture.hpp"
#include "tests/support/kmeans_iterations.hpp"
#include "tests/support/run_checks.hpp"

using namespace xf::test;

TEST_CASE("kmeans_xeflow.host_iterations_match_the_cpu_reference") {
  // 200 000 particles: 36 frames of 5461 at 64 KiB, 4 reduction blocks (threads 2 and 3 split them
  // differently); at 4 KiB, 587 frames of 341.
  constexpr std::uint64_t particles = 200'000;
  for (const char* frame_size : {"64KiB", "4KiB"}) {
    SUBCASE(frame_size) {
      const nlohmann::json j = check_kmeans_iterations_match_reference(
          particles, 8, 3, {"--host", "--threads", "2", "--frame-size", frame_size});
      CHECK(j["executor"].get<std::string>().rfind("host", 0) == 0);
      CHECK(j["records_per_frame"] == xf::parse_bytes(frame_size).value() / 12);  // x, y, z travel
      const nlohmann::json& per_iteration = j["iteration_stats"];
      REQUIRE(per_iteration.size() == 3);
      // The generator leaves every particle unassigned: the first pass changes them all.
      CHECK(per_iteration[0]["changed"] == particles);
      CHECK(per_iteration[2]["changed"] == j["changed_last_iteration"]);
      for (const auto& it : per_iteration) {
        CHECK(it["assign_seconds"].get<double>() > 0);
        CHECK(it["update_seconds"].get<double>() >= 0);
      }
      CHECK(j["seconds"].get<double>() >=
            j["assign_seconds"].get<double>() + j["update_seconds"].get<double>());
    }
  }
}

TEST_CASE("kmeans_xeflow.one_run_and_one_run_per_iteration_give_the_same_result") {
  // The default runs every iteration in one run (the centres a shared object the update publishes while
  // the next pass streams); --per-iteration runs one per assignment pass. Both must equal the reference.
  constexpr std::uint64_t particles = 150'000;
  const nlohmann::json one =
      check_kmeans_iterations_match_reference(particles, 5, 4, {"--host", "--threads", "3"});
  CHECK(one["mode"] == "one_run");
  CHECK(one["iteration_stats"].size() == 4);
  CHECK(one["run_seconds"].get<double>() > 0);
  const nlohmann::json per = check_kmeans_iterations_match_reference(
      particles, 5, 4, {"--host", "--threads", "3", "--per-iteration"});
  CHECK(per["mode"] == "per_iteration");
  CHECK(one["digest"] == per["digest"]);
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(one["iteration_stats"][i]["changed"] == per["iteration_stats"][i]["changed"]);
}

TEST_CASE("kmeans_xeflow.bad_input_exits_with_a_reason") {
  const scratch_dir dir;
  const std::string file = dir.file("p");
  REQUIRE(run_tool("XF_GEN_KMEANS", {file, "--records", "100", "--clusters", "3"}).exit_code == 0);
  // What each run must exit with and say on stderr.
  auto check_fails = [](const std::vector<std::string>& args, int exit_code, const std::string& reason) {
    const process_result r = run_tool("XF_KMEANS_XEFLOW", args);
    INFO(r.err);
    CHECK(r.exit_code == exit_code);
    CHECK(r.err.find(reason) != std::string::npos);
  };
  check_fails({dir.file("missing"), "--host"}, 1, dir.file("missing") + ": cannot open");
  check_fails({file, "--host", "--clusters", "33"}, 2, "kmeans_assign takes 1 to 32 centres");
  check_fails({file, "--host", "--clusters", "0"}, 2, "--clusters");
  check_fails({file, "--host", "--iterations", "0"}, 2, "--iterations");
  check_fails({file, "--host", "--frame-size", "1000"}, 2, "multiple of 4 KiB");
  check_fails({file, "--host", "--frame-size", "12X"}, 2, "--frame-size '12X'");
  check_fails({file, "--no-such-option"}, 2, "--no-such-option");
  check_fails({}, 2, "file is required");

  write_file(dir.file("few"), read_file(file).substr(0, 4 * 64));
  check_fails({dir.file("few"), "--host", "--clusters", "5"}, 1,
              "holds 4 particles, fewer than the 5 clusters");
  write_file(dir.file("short"), read_file(file).substr(0, 2 * 64 + 10));
  check_fails({dir.file("short"), "--host", "--clusters", "1"}, 1,
              "byte offset 128: truncated particle record");

  CHECK(run_tool("XF_KMEANS_XEFLOW", {"--help"}).exit_code == 0);
  // A file as small as its clusters still runs (one short frame per pass).
  const process_result tiny =
      run_tool("XF_KMEANS_XEFLOW", {dir.file("few"), "--host", "--clusters", "4", "--iterations", "2"});
  INFO(tiny.err);
  CHECK(tiny.exit_code == 0);
}
