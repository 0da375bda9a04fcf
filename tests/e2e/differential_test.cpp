// The host executor as an oracle, checked without a GPU: every topology in topologies/ runs on the host
// executor's blocks (the kernel's round, framework/kernel/round_steps.hpp) with a per-offset ledger that
// must account for every offset and results equal to the references' (query answers, word counts, output
// files), and again with its GPU operators placed on CPU threads (the same operators' code outside the
// round): both runs must give the same ledger and counters. On a GPU, the
// gpu suite holds the device's kernel to the same ledger (gpu.device_and_host_executors_agree).
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "tests/support/differential.hpp"

namespace fs = std::filesystem;
using namespace xf::test;

namespace {

/// `--set` arguments placing every GPU operator of `topology` on CPU threads.
std::vector<std::string> gpu_operators_on_cpu(const fs::path& topology) {
  std::vector<std::string> sets;
  const YAML::Node doc = YAML::LoadFile(topology.string());
  for (const auto& op : doc["operators"])
    if (op.second["on"] && op.second["on"].as<std::string>() == "gpu")
      sets.insert(sets.end(), {"--set", "operators." + op.first.as<std::string>() + ".on=cpu"});
  return sets;
}

/// The lines of `b` whose topic and subscriber group `a` also records (placed on CPU threads, GPU operators
/// add subscribers: whole topics, or groups beside CPU subscribers of a topic).
ledger_run restricted_to_topics_of(ledger_run b, const ledger_run& a) {
  const auto topic_and_group = [](const std::string& line) {
    const std::size_t topic_end = line.find(' ');
    return line.substr(0, line.find(' ', topic_end + 1));
  };
  std::set<std::string> recorded;
  for (const std::string& line : a.ledger) recorded.insert(topic_and_group(line));
  std::vector<std::string> kept;
  for (std::string& line : b.ledger)
    if (recorded.count(topic_and_group(line))) kept.push_back(std::move(line));
  b.ledger = std::move(kept);
  return b;
}

}  // namespace

TEST_CASE("differential.host_executor_agrees_with_cpu_threads_on_every_topology") {
  const std::vector<fs::path> files = every_topology();
  REQUIRE(files.size() >= 8);
  for (const auto& file : files) {
    SUBCASE(file.filename().string().c_str()) {
      INFO(file);
      const short_run run(file, "16MiB");
      std::vector<std::string> host = run.sets();
      host.insert(host.end(), {"--set", "runtime.executor=host"});
      const ledger_run on_host = run_with_ledger(file, host, "host");
      check_ledger_accounts(on_host);
      run.check_results(on_host.stats);  // query answers, word counts, outputs: the references'
      std::vector<std::string> cpu = host;
      const std::vector<std::string> placed = gpu_operators_on_cpu(file);
      if (placed.empty()) {
        MESSAGE(file.filename().string() << ": no GPU operator to place on CPU threads");
      } else {
        cpu.insert(cpu.end(), placed.begin(), placed.end());
        const ledger_run on_cpu = run_with_ledger(file, cpu, "cpu");
        check_ledger_accounts(on_cpu);
        // A CPU source ends its stream with a void offset, the kernel's file source without one.
        check_same_results(on_host, restricted_to_topics_of(on_cpu, on_host), /*exact=*/false);
      }
    }
  }
}
