// Differential runs of a topology: xeflow-run with --ledger and --stats json, and the comparisons two
// runs must pass — the same per-offset ledger (every CPU subscriber's frames: bytes, source offset, void,
// CRC-32) and the same counters (frames and bytes per operator and topic, the topics' ends, the
// operators' own counters).
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/run_checks.hpp"
#include "tests/support/subprocess.hpp"
#include "tests/support/topology_files.hpp"

namespace xf::test {

struct ledger_run {
  process_result process;
  nlohmann::json stats;
  std::vector<std::string> ledger;  ///< its lines, sorted by topic, group and offset
};

/// Runs `topology` with `sets` (a short_run's, plus the caller's) and `--ledger`; REQUIREs it completed.
inline ledger_run run_with_ledger(const std::filesystem::path& topology, std::vector<std::string> sets,
                                  const std::string& label) {
  const std::filesystem::path ledger =
      std::filesystem::temp_directory_path() / ("xeflow-ledger-" + std::to_string(::getpid()) + "-" + label);
  std::vector<std::string> args{xeflow_run(), topology.string(), "-q",           "--stats",
                                "json",       "--ledger",        ledger.string()};
  args.insert(args.end(), sets.begin(), sets.end());
  ledger_run r{run_process(args, std::chrono::minutes(3)), {}, {}};
  INFO(label << " stderr: " << r.process.err);
  REQUIRE_FALSE(r.process.timed_out);
  REQUIRE(r.process.exit_code == 0);
  r.stats = parse_json(r.process);
  REQUIRE(r.stats["status"] == "completed");
  std::ifstream in(ledger);
  for (std::string line; std::getline(in, line);) r.ledger.push_back(line);
  std::filesystem::remove(ledger);
  return r;
}

/// Every (topic, group) of the ledger holds offsets 0 … n-1 once each, and its frames and bytes (void
/// offsets aside) are the topic's published totals.
inline void check_ledger_accounts(const ledger_run& r) {
  std::map<std::pair<std::string, int>, std::vector<std::uint64_t>> offsets;
  std::map<std::pair<std::string, int>, std::pair<std::uint64_t, std::uint64_t>> totals;  // frames, bytes
  for (const std::string& line : r.ledger) {
    std::istringstream fields(line);
    std::string topic;
    int group = 0, is_void = 0;
    std::uint64_t offset = 0, bytes = 0, tag = 0, crc = 0;
    fields >> topic >> group >> offset >> bytes >> tag >> is_void >> crc;
    REQUIRE_FALSE(fields.fail());
    offsets[{topic, group}].push_back(offset);
    if (!is_void) {
      ++totals[{topic, group}].first;
      totals[{topic, group}].second += bytes;
    }
  }
  for (const auto& [key, list] : offsets) {
    const auto& topic_group = key;  // INFO captures it: clang 14 cannot capture a structured binding
    INFO("topic " << topic_group.first << " group " << topic_group.second);
    for (std::size_t i = 0; i < list.size(); ++i) REQUIRE(list[i] == i);
    for (const auto& t : r.stats["topics"])
      if (t["name"] == key.first) {
        CHECK(totals[key].first == t["frames"].get<std::uint64_t>());
        CHECK(totals[key].second == t["bytes"].get<std::uint64_t>());
        CHECK(list.size() == t["end_offset"].get<std::uint64_t>());
      }
  }
}

/// What two runs of one topology must agree on exactly, from its stats. `with_ends`: the topics' end
/// offsets too (a CPU source ends its stream with a void offset, a kernel's file source without one).
inline std::vector<std::string> stats_ledger(const nlohmann::json& stats, bool with_ends = true) {
  std::vector<std::string> out;
  for (const auto& o : stats["operators"]) {
    std::ostringstream line;
    line << "operator " << o["name"].get<std::string>() << " in " << o["frames_in"] << "/" << o["bytes_in"]
         << " out " << o["frames_out"] << "/" << o["bytes_out"];
    if (o.contains("counters")) {
      // What a table source reads of a frame depends on its readers' placement, not on the results: page
      // readers in the kernel name their pages (frame_out::parts), the same operators on CPU threads
      // take whole frames.
      nlohmann::json counters = o["counters"];
      if (o.value("class", "") == "table_source")
        for (const char* placement_dependent : {"bytes_read", "bytes_left"})
          counters.erase(placement_dependent);
      line << " counters " << counters.dump();
    }
    out.push_back(line.str());
  }
  for (const auto& t : stats["topics"]) {
    std::ostringstream line;
    line << "topic " << t["name"].get<std::string>() << " " << t["frames"] << "/" << t["bytes"];
    if (with_ends) line << " end " << t["end_offset"];
    out.push_back(line.str());
  }
  return out;
}

/// The ledger's lines of frames (void offsets dropped).
inline std::vector<std::string> frames_only(const std::vector<std::string>& ledger) {
  std::vector<std::string> out;
  for (const std::string& line : ledger) {
    std::istringstream fields(line);
    std::string topic;
    std::uint64_t group = 0, offset = 0, bytes = 0, tag = 0, is_void = 0;
    fields >> topic >> group >> offset >> bytes >> tag >> is_void;
    if (is_void == 0) out.push_back(line);
  }
  return out;
}

/// Two runs gave the same ledger and the same counters, line by line (the first difference is shown).
/// `exact` false: void offsets and the topics' ends may differ (a CPU source against a kernel's source).
inline void check_same_results(const ledger_run& a, const ledger_run& b, bool exact = true) {
  const std::vector<std::string> la = exact ? a.ledger : frames_only(a.ledger);
  const std::vector<std::string> lb = exact ? b.ledger : frames_only(b.ledger);
  CHECK(la.size() == lb.size());
  for (std::size_t i = 0; i < la.size() && i < lb.size(); ++i)
    if (la[i] != lb[i]) {
      CHECK_MESSAGE(la[i] == lb[i], "ledger line " << i);
      break;
    }
  const std::vector<std::string> sa = stats_ledger(a.stats, exact), sb = stats_ledger(b.stats, exact);
  REQUIRE(sa.size() == sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) CHECK(sa[i] == sb[i]);
}

}  // namespace xf::test
