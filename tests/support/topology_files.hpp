// The topologies in topologies/ as the end-to-end and GPU tests run them: every YAML file, and what a test
// adds so that a run is short and self-contained (a stream length for the generated sources, a freshly
// generated particle file for the prefetch source).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "framework/core/units.hpp"
#include "tests/support/run_checks.hpp"
#include "tests/support/sanitizer.hpp"
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
/// prefetch_ranges and prefetch_assembler) get a generated K-means file of `bytes` (at least 200 000
/// particles; a readahead_file_source streams that file too), a text_source — or an address stage feeding a
/// word_count — a generated word-count text of `bytes` (at most 256 MiB), a prefetch_varlen_source a
/// generated affinity dataset of 300 000 records, a word_count or affinity_cards a result file, and an
/// affinity_shared the cards of pass 1 (affinity_cards.yaml run on the host over the same dataset), a
/// table_source a generated Set Query table (a row for every 200 bytes, 20 000 to 1 000 000) and each query a
/// result file, a file_source a file of random bytes (whole frames), a file_sink a result file and an
/// operator with a key_file a random key — all made on construction, removed on destruction — instead of
/// the paths they name.
class short_run {
 public:
  /// `length` of stream ("24MiB"), a quarter of it under a sanitizer (sanitized_bytes).
  short_run(const std::filesystem::path& topology, const std::string& length) {
    const std::string bytes = sanitized_bytes(length);
    const YAML::Node doc = YAML::LoadFile(topology.string());
    const std::string stem = std::to_string(::getpid()) + "-" + topology.stem().string();
    // An address stage feeding a word_count reads a text, not particles.
    bool counts_words = false;
    for (const auto& op : doc["operators"])
      counts_words |= op.second["class"].as<std::string>() == "word_count";
    for (const auto& op : doc["operators"]) {
      const std::string name = op.first.as<std::string>();
      const std::string cls = op.second["class"].as<std::string>();
      if (counts_words && (cls == "text_source" || cls == "prefetch_ranges" || cls == "prefetch_assembler")) {
        if (text_.empty()) {
          text_ = std::filesystem::temp_directory_path() / ("xeflow-text-" + stem);
          const auto gen = run_process({gen_wordcount(), text_.string(), "--bytes", text_bytes(bytes)});
          INFO(gen.err);
          REQUIRE(gen.exit_code == 0);
        }
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.path=" + text_.string()});
      } else if (cls == "prefetch_varlen_source") {
        records_ = std::filesystem::temp_directory_path() / ("xeflow-purchases-" + stem);
        const auto gen = run_process(
            {gen_affinity(), records_.string(), "--records", std::to_string(sanitized_count(300'000))});
        INFO(gen.err);
        REQUIRE(gen.exit_code == 0);
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.path=" + records_.string()});
      } else if (cls == "affinity_cards" || cls == "affinity_shared") {
        affinity_.push_back(name);
        merchant_ = op.second["params"]["merchant"] ? op.second["params"]["merchant"].as<std::string>() : "0";
        const std::filesystem::path result = temp_result(stem, name);
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.result=" + result.string()});
        if (cls == "affinity_shared") pass_two_ = name;
      } else if (cls == "table_source") {
        table_ = std::filesystem::temp_directory_path() / ("xeflow-bench-" + stem + ".xft");
        const std::uint64_t rows = std::clamp<std::uint64_t>(bytes_of(bytes) / 200, 20'000, 1'000'000);
        const auto gen =
            run_process({gen_setquery(), "--rows", std::to_string(rows), "--out", table_.string()});
        INFO(gen.err);
        REQUIRE(gen.exit_code == 0);
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.path=" + table_.string()});
      } else if (cls == "query") {
        const std::filesystem::path result = temp_result(stem, name);
        queries_.push_back({name, result});
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.result=" + result.string()});
      } else if (cls == "word_count") {
        word_counts_.push_back(name);
        const std::filesystem::path result = temp_result(stem, name);
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.result=" + result.string()});
      } else if (cls == "prefetch_source" || cls == "prefetch_writeback" || cls == "prefetch_ranges" ||
                 cls == "prefetch_assembler" || cls == "readahead_file_source") {
        if (dataset_.empty()) {
          dataset_ = std::filesystem::temp_directory_path() /
                     ("xeflow-particles-" + std::to_string(::getpid()) + "-" + topology.stem().string());
          const auto gen = run_process({gen_kmeans(), dataset_.string(), "--records", particles(bytes)});
          INFO(gen.err);
          REQUIRE(gen.exit_code == 0);
        }
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.path=" + dataset_.string()});
      } else if (cls == "file_source") {
        // Random bytes, whole frames of the source's topic (RAID-6 encodes whole stripes only).
        const std::string topic = op.second["outputs"][0].as<std::string>();
        const std::uint64_t frame = *parse_bytes(doc["topics"][topic]["frame_size"].as<std::string>());
        const std::uint64_t total = std::max(frame, bytes_of(bytes) / frame * frame);
        inputs_.push_back(std::filesystem::temp_directory_path() / ("xeflow-input-" + stem + "-" + name));
        write_random(inputs_.back(), total);
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.path=" + inputs_.back().string()});
      } else if (cls == "file_sink") {
        const std::filesystem::path result = temp_result(stem, name);
        sets_.insert(sets_.end(), {"--set", "operators." + name + ".params.path=" + result.string()});
      } else if (name == "source") {
        sets_.insert(sets_.end(), {"--set", "operators.source.params.total_bytes=" + bytes});
      }
      if (op.second["params"] && op.second["params"]["key_file"]) {  // AES: a random key of its own
        inputs_.push_back(std::filesystem::temp_directory_path() / ("xeflow-key-" + stem + "-" + name));
        write_random(inputs_.back(), 16);
        sets_.insert(sets_.end(),
                     {"--set", "operators." + name + ".params.key_file=" + inputs_.back().string()});
      }
    }
    if (!pass_two_.empty()) make_pass_one_cards(topology, stem);
  }
  ~short_run() {
    std::error_code ignored;
    if (!dataset_.empty()) std::filesystem::remove(dataset_, ignored);
    if (!text_.empty()) std::filesystem::remove(text_, ignored);
    if (!records_.empty()) std::filesystem::remove(records_, ignored);
    if (!cards_.empty()) std::filesystem::remove(cards_, ignored);
    if (!table_.empty()) std::filesystem::remove(table_, ignored);
    for (const auto& r : results_) std::filesystem::remove(r, ignored);
    for (const auto& f : inputs_) std::filesystem::remove(f, ignored);
  }
  short_run(const short_run&) = delete;
  short_run& operator=(const short_run&) = delete;

  const std::vector<std::string>& sets() const { return sets_; }

  /// The run's results are right: every query's result file equals xeflow-setquery-ref's answer for the
  /// variant it is named after (q1_k500k: Q1_K500K); every word_count's counters equal the CPU reference's
  /// on the generated text and its result file was written; otherwise every verify sink saw frames and no
  /// anomaly.
  void check_results(const nlohmann::json& doc) const {
    if (!queries_.empty()) {
      check_queries();
      check_column_pages(doc);
      return;
    }
    if (!affinity_.empty()) {
      check_affinity(doc);
      return;
    }
    if (word_counts_.empty()) {
      check_verified(doc);
      return;
    }
    const auto cpu = run_process({wordcount_cpu(), text_.string(), "--json"});
    INFO(cpu.err);
    REQUIRE(cpu.exit_code == 0);
    const auto expected = nlohmann::json::parse(cpu.out);
    for (std::size_t k = 0; k < word_counts_.size(); ++k) {
      INFO("operator " << word_counts_[k]);
      const auto op = std::find_if(doc["operators"].begin(), doc["operators"].end(),
                                   [&](const nlohmann::json& o) { return o["name"] == word_counts_[k]; });
      REQUIRE(op != doc["operators"].end());
      const auto& c = (*op)["counters"];
      CHECK(c["words"] == expected["words"]);
      CHECK(c["distinct_words"] == expected["distinct_words"]);
      char digest[24];
      std::snprintf(digest, sizeof digest, "0x%08llx",
                    static_cast<unsigned long long>(c["digest"].get<std::uint64_t>()));
      CHECK(std::string(digest) == expected["digest"].get<std::string>());
      CHECK(std::filesystem::exists(results_[k]));
    }
  }

 private:
  static const nlohmann::json& operator_named(const nlohmann::json& doc, const std::string& name) {
    const auto op = std::find_if(doc["operators"].begin(), doc["operators"].end(),
                                 [&](const nlohmann::json& o) { return o["name"] == name; });
    REQUIRE(op != doc["operators"].end());
    return *op;
  }

  std::filesystem::path temp_result(const std::string& stem, const std::string& name) {
    results_.push_back(std::filesystem::temp_directory_path() / ("xeflow-result-" + stem + "-" + name));
    return results_.back();
  }

  /// Pass 2 starts from pass 1's cards: affinity_cards.yaml, run on the host over the same dataset.
  void make_pass_one_cards(const std::filesystem::path& topology, const std::string& stem) {
    cards_ = std::filesystem::temp_directory_path() / ("xeflow-cards-" + stem);
    const auto pass_one =
        run_process({xeflow_run(), (topology.parent_path() / "affinity_cards.yaml").string(), "--host", "-q",
                     "--set", "operators.records.params.path=" + records_.string(), "--set",
                     "operators.cards.params.merchant=" + merchant_, "--set",
                     "operators.cards.params.result=" + cards_.string()});
    INFO(pass_one.err);
    REQUIRE(pass_one.exit_code == 0);
    sets_.insert(sets_.end(), {"--set", "operators." + pass_two_ + ".params.cards=" + cards_.string()});
  }

  /// Every query's result equals the Set Query reference's answer over the same table.
  void check_queries() const {
    const std::filesystem::path expected = table_.string() + ".expected";
    const auto ref = run_process({setquery_reference(), table_.string(), "--out-dir", expected.string()});
    INFO(ref.err);
    REQUIRE(ref.exit_code == 0);
    const auto text = [](const std::filesystem::path& p) {
      std::ifstream in(p);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    for (const auto& query : queries_) {
      const std::string& name = query.first;
      const std::filesystem::path& result = query.second;
      std::string id = name;
      for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      INFO("query " << name);
      REQUIRE(std::filesystem::exists(expected / (id + ".csv")));
      CHECK(text(result) == text(expected / (id + ".csv")));
    }
    std::error_code ignored;
    std::filesystem::remove_all(expected, ignored);
  }

  /// The table topic's pages per column are its queries' page counters summed, and every column a query
  /// named is there.
  static void check_column_pages(const nlohmann::json& doc) {
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> expected;  // column → (pages, skipped)
    for (const auto& op : doc["operators"]) {
      if (op["class"] != "query") continue;
      for (const auto& [key, value] : op["counters"].items()) {
        if (key.rfind("pages.", 0) == 0) expected[key.substr(6)].first += value.get<std::uint64_t>();
        if (key.rfind("pages_skipped.", 0) == 0)
          expected[key.substr(14)].second += value.get<std::uint64_t>();
      }
    }
    REQUIRE_FALSE(expected.empty());
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> reported;
    for (const auto& t : doc["topics"])
      if (t.contains("columns"))
        for (const auto& c : t["columns"]) {
          reported[c["column"]] = {c["pages"], c["pages_skipped"]};
          CHECK(c["bytes_skipped"] == c["pages_skipped"].get<std::uint64_t>() * 4096);
        }
    CHECK(reported == expected);
    // The table's source read only what the queries may touch: never a query reads every column.
    for (const auto& op : doc["operators"]) {
      if (op["class"] != "table_source") continue;
      const auto& c = op["counters"];
      const auto& topic = doc["topics"][0];
      REQUIRE(topic["frames"].get<std::uint64_t>() > 0);
      const std::uint64_t frame_bytes =
          topic["bytes"].get<std::uint64_t>() / topic["frames"].get<std::uint64_t>();
      CHECK(c["bytes_read"].get<std::uint64_t>() + c["bytes_left"].get<std::uint64_t>() ==
            c["frames_read"].get<std::uint64_t>() * frame_bytes);
      CHECK(c["bytes_left"].get<std::uint64_t>() > 0);
    }
  }

  /// Every affinity sink's counters equal the CPU reference's on the generated dataset.
  void check_affinity(const nlohmann::json& doc) const {
    const auto cpu = run_process({affinity_cpu(), records_.string(), "--merchant", merchant_, "--json"});
    INFO(cpu.err);
    REQUIRE(cpu.exit_code == 0);
    const auto expected = nlohmann::json::parse(cpu.out);
    for (const std::string& name : affinity_) {
      INFO("operator " << name);
      const auto& c = operator_named(doc, name)["counters"];
      CHECK(c["cards_at_merchant"] == expected["cards_at_merchant"]);
      if (name != pass_two_) continue;
      CHECK(c["shared_merchants"] == expected["shared_merchants"]);
      char digest[24];
      std::snprintf(digest, sizeof digest, "0x%08llx",
                    static_cast<unsigned long long>(c["digest"].get<std::uint64_t>()));
      CHECK(std::string(digest) == expected["digest"].get<std::string>());
    }
  }

  /// A generated text as long as the run's bytes ("24MiB", "1GiB"), capped at 16 MiB so the CPU reference
  /// stays quick.
  /// "24MiB", "1GiB" in bytes.
  static std::uint64_t bytes_of(const std::string& bytes) {
    return std::stoull(bytes) << (bytes.find("GiB") != std::string::npos ? 30 : 20);
  }
  static std::string text_bytes(const std::string& bytes) {
    return std::to_string(std::min<std::uint64_t>(bytes_of(bytes), std::uint64_t{256} << 20));
  }
  static void write_random(const std::filesystem::path& path, std::uint64_t bytes) {
    std::mt19937_64 rng(bytes);
    std::vector<std::uint64_t> words((bytes + 7) / 8);
    for (auto& w : words) w = rng();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(bytes));
    REQUIRE(out.good());
  }
  /// Particles in the generated K-means file: `bytes` of them (64 each), at least 200 000.
  static std::string particles(const std::string& bytes) {
    return std::to_string(std::max<std::uint64_t>(bytes_of(bytes) / 64, 200'000));
  }

  std::filesystem::path dataset_;
  std::filesystem::path text_;
  std::filesystem::path records_;
  std::filesystem::path cards_;
  std::filesystem::path table_;
  std::vector<std::pair<std::string, std::filesystem::path>> queries_;  ///< operator, result file
  std::string merchant_ = "0";
  std::vector<std::string> affinity_;
  std::string pass_two_;
  std::vector<std::string> word_counts_;
  std::vector<std::filesystem::path> results_;
  std::vector<std::filesystem::path> inputs_;  ///< generated input files and keys
  std::vector<std::string> sets_;
};

}  // namespace xf::test
