// The topologies in topologies/ as the end-to-end and GPU tests run them: every YAML file, and what a test
// adds so that a run is short and self-contained (a stream length for the generated sources, a freshly
// generated particle file for the prefetch source).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/run_checks.hpp"
#include "tests/support/subprocess.hpp"

namespace xf::test {

/// The YAML files of topologies/, sorted.
inline std::vector<std::filesystem::path> every_topology() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_root() / "topologies"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// The `--set` arguments that make a run of `topology` short: the operator named `source` streams `bytes`;
/// the operators of a particle dataset (prefetch_source, prefetch_writeback, and the address stage's
/// prefetch_ranges and prefetch_assembler) get a generated K-means file of 200 000 particles (made on
/// construction, removed on destruction) instead of the path they name.
class short_run {
 public:
  short_run(const std::filesystem::path& topology, const std::string& bytes) {
    const YAML::Node doc = YAML::LoadFile(topology.string());
    for (const auto& op : doc["operators"]) {
      const std::string name = op.first.as<std::string>();
      const std::string cls = op.second["class"].as<std::string>();
      if (cls == "prefetch_source" || cls == "prefetch_writeback" || cls == "prefetch_ranges" ||
          cls == "prefetch_assembler") {
        if (dataset_.empty()) {
          dataset_ = std::filesystem::temp_directory_path() /
                     ("xeflow-particles-" + std::to_string(::getpid()) + "-" + topology.stem().string());
          const auto gen = run_process({gen_kmeans(), dataset_.string(), "--records", "200000"});
          INFO(gen.err);
          REQUIRE(gen.exit_code == 0);
        }
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.path=" + dataset_.string()});
      } else if (name == "source") {
        sets_.insert(sets_.end(), {"--set", "operators.source.params.total_bytes=" + bytes});
      }
    }
  }
  ~short_run() {
    std::error_code ignored;
    if (!dataset_.empty()) std::filesystem::remove(dataset_, ignored);
  }
  short_run(const short_run&) = delete;
  short_run& operator=(const short_run&) = delete;

  const std::vector<std::string>& sets() const { return sets_; }

 private:
  std::filesystem::path dataset_;
  std::vector<std::string> sets_;
};

}  // namespace xf::test
