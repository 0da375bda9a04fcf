// A run's provenance and the stats format's version: what collect_provenance finds on this machine, and
// how the JSON stats of one process and of a ranked run carry them.
#include "framework/runtime/provenance.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <climits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/plan/device_probe.hpp"
#include "framework/runtime/build_info.hpp"
#include "framework/runtime/run_stats.hpp"

using namespace xf;

namespace {

run_stats stats_on(const std::string& host, const std::string& commit) {
  run_stats s;
  s.topology = "t";
  s.executor = "host (test)";
  s.provenance.version = "0.1.0";
  s.provenance.commit = commit;
  s.provenance.build_type = "release";
  s.provenance.cuda_runtime = "12.4";
  s.provenance.host = host;
  return s;
}

}  // namespace

TEST_CASE("provenance.this_process_without_a_gpu") {
  const run_provenance p = collect_provenance();
  const build_info build = this_build();
  CHECK(p.version == build.version);
  CHECK(p.commit == build.commit);
  CHECK(p.build_type == build.build_type);
  CHECK_FALSE(p.version.empty());
  CHECK_FALSE(p.commit.empty());
  CHECK_FALSE(p.build_type.empty());
  CHECK_FALSE(p.gpu.has_value());  // no GPU asked for
  char host[HOST_NAME_MAX + 1] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  CHECK(p.host == host);
#if defined(XF_HAVE_CUDA)
  // The runtime's version needs no GPU; the driver's is there when a driver is installed.
  REQUIRE(p.cuda_runtime.has_value());
  CHECK(p.cuda_runtime->find('.') != std::string::npos);
  if (p.cuda_driver) CHECK(p.cuda_driver->find('.') != std::string::npos);
#else
  CHECK_FALSE(p.cuda_runtime.has_value());
  CHECK_FALSE(p.cuda_driver.has_value());
  CHECK(probe_cuda_versions().runtime.empty());
  CHECK(probe_cuda_versions().driver.empty());
#endif
}

TEST_CASE("provenance.a_gpu_the_run_used_is_named") {
  if (device_count() == 0) {
    // Without CUDA or a GPU, an ordinal has no name: null rather than a guess.
    CHECK_FALSE(collect_provenance(0).gpu.has_value());
    MESSAGE("skipped (GPU test): no GPU to name: " << probe_device().reason);
    return;
  }
  const device_status gpu = probe_device(0);
  const run_provenance p = collect_provenance(0);
  REQUIRE(p.gpu.has_value());
  CHECK(*p.gpu == gpu.name);
  CHECK(gpu.description.rfind(gpu.name, 0) == 0);
}

TEST_CASE("stats_json.schema_version_then_provenance_first") {
  run_stats s = stats_on("node7", "1a2b3c4d5e6f");
  s.provenance.gpu = "NVIDIA H100 80GB HBM3";
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(format_stats_json(s));
  REQUIRE(doc.size() > 2);
  CHECK(doc.begin().key() == "schema_version");
  CHECK(doc["schema_version"].is_number_integer());
  CHECK(doc["schema_version"] == stats_schema_version);
  CHECK(std::next(doc.begin()).key() == "provenance");
  const auto& p = doc["provenance"];
  CHECK(p == nlohmann::ordered_json{{"version", "0.1.0"},
                                    {"commit", "1a2b3c4d5e6f"},
                                    {"build_type", "release"},
                                    {"cuda_runtime", "12.4"},
                                    {"cuda_driver", nullptr},
                                    {"gpu", "NVIDIA H100 80GB HBM3"},
                                    {"host", "node7"}});
}

TEST_CASE("stats_json.a_ranked_run_gives_provenance_once_and_each_rank_its_machine") {
  run_stats zero = stats_on("node0", "1a2b3c4d5e6f");
  zero.ranks = 2;
  run_stats one = stats_on("node1", "1a2b3c4d5e6f-dirty");  // another installation on rank 1's node
  one.rank = 1;
  one.ranks = 2;
  one.provenance.cuda_driver = "13.0";
  one.provenance.gpu = "NVIDIA H200";
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(
      format_ranked_stats_json({format_stats_json(zero), format_stats_json(one)}));
  CHECK(doc.begin().key() == "schema_version");
  CHECK(doc["schema_version"] == stats_schema_version);
  CHECK(doc["provenance"] == nlohmann::ordered_json::parse(format_stats_json(zero))["provenance"]);
  CHECK(doc["ranks"] == 2);
  REQUIRE(doc["per_rank"].size() == 2);
  for (const auto& rank : doc["per_rank"]) CHECK_FALSE(rank.contains("schema_version"));
  CHECK(doc["per_rank"][0]["provenance"] ==
        nlohmann::ordered_json{{"cuda_driver", nullptr}, {"gpu", nullptr}, {"host", "node0"}});
  CHECK(doc["per_rank"][1]["provenance"] == nlohmann::ordered_json{{"commit", "1a2b3c4d5e6f-dirty"},
                                                                   {"cuda_driver", "13.0"},
                                                                   {"gpu", "NVIDIA H200"},
                                                                   {"host", "node1"}});
  CHECK(doc["per_rank"][1]["rank"] == 1);
  CHECK(doc["per_rank"][1]["topology"] == "t");
}
