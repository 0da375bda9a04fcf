// xeflow-kmeans against the CPU reference, for the apps suite (host executor) and the GPU suite (device
// executor): the same Lloyd iterations on two copies of a generated particle file must agree bit for bit.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/kmeans/kmeans_format.hpp"
#include "tests/apps/dataset_fixture.hpp"
#include "tests/support/run_checks.hpp"
#include "tests/support/subprocess.hpp"

namespace xf::test {

/// A tool's run that must succeed within a minute; its `--json` output.
inline nlohmann::json run_kmeans_json(const std::vector<std::string>& argv) {
  const process_result r = run_process(argv, std::chrono::minutes(1));
  INFO(argv[0] << " stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  REQUIRE(r.exit_code == 0);
  return parse_json(r);
}

/// Generates `particles` particles around `clusters` true centres and copies the file; runs xeflow-kmeans
/// (`xeflow_args` added: executor, threads, frame size) on one copy and xeflow-kmeans-cpu (3 threads) on
/// the other, both with --clusters `clusters` --iterations `iterations`. Digest, centres and
/// changed_last_iteration must be identical, and so must the files (the ids written back), record by
/// record. Returns xeflow-kmeans' JSON, for the caller's checks of its own fields.
inline nlohmann::json check_kmeans_iterations_match_reference(std::uint64_t particles, std::uint32_t clusters,
                                                              std::uint32_t iterations,
                                                              const std::vector<std::string>& xeflow_args) {
  const scratch_dir dir;
  const std::string reference = dir.file("reference"), streamed = dir.file("streamed");
  const process_result gen = run_process({gen_kmeans(), reference, "--records", std::to_string(particles),
                                          "--clusters", std::to_string(clusters), "--seed", "11"});
  INFO(gen.err);
  REQUIRE(gen.exit_code == 0);
  write_file(streamed, read_file(reference));

  const std::vector<std::string> lloyd{"--clusters", std::to_string(clusters), "--iterations",
                                       std::to_string(iterations), "--json"};
  std::vector<std::string> cpu_argv{kmeans_cpu(), reference, "--threads", "3"};
  cpu_argv.insert(cpu_argv.end(), lloyd.begin(), lloyd.end());
  std::vector<std::string> xeflow_argv{kmeans_xeflow(), streamed};
  xeflow_argv.insert(xeflow_argv.end(), lloyd.begin(), lloyd.end());
  xeflow_argv.insert(xeflow_argv.end(), xeflow_args.begin(), xeflow_args.end());
  const nlohmann::json cpu = run_kmeans_json(cpu_argv);
  const nlohmann::json xeflow = run_kmeans_json(xeflow_argv);

  CHECK(xeflow["particles"] == particles);
  CHECK(xeflow["iterations"] == iterations);
  CHECK(xeflow["digest"] == cpu["digest"]);
  CHECK(xeflow["centres"] == cpu["centres"]);  // floats as JSON numbers: equal only when bit-identical
  CHECK(xeflow["changed_last_iteration"] == cpu["changed_last_iteration"]);

  const std::string a = read_file(reference), b = read_file(streamed);
  constexpr std::uint64_t record = apps::kmeans::particle_bytes;
  REQUIRE(a.size() == particles * record);
  REQUIRE(b.size() == a.size());
  std::uint64_t differing = 0;
  for (std::uint64_t r = 0; r < particles; ++r)
    differing += a.compare(r * record, record, b, r * record, record) != 0;
  CHECK(differing == 0);
  return xeflow;
}

}  // namespace xf::test
