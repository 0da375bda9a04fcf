// xeflow-setquery-cpu: the CPU baseline of the Set Query benchmark. Loads a BENCH table into memory once,
// then times the in-memory engine (setquery_queries.hpp) on each query family — its variants together in
// one pass, as the GPU runs a family — with and without the index, and checks the answers against the
// reference's result files.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "apps/setquery/setquery_queries.hpp"

namespace {

namespace sq = xf::apps::setquery;

/// One family's passes under one index setting.
struct family_timing {
  std::string family;
  bool use_index = false;
  std::size_t variants = 0;
  std::vector<double> pass_ms;  // one per repetition
  std::uint64_t blocks = 0;     // the table's blocks times the family's variants
  std::uint64_t blocks_skipped = 0;
  bool checked = false;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

double min_of(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

std::string answers_text(const family_timing& f) {
  return f.checked ? "equal to the reference" : "not checked";
}

/// Throws naming the variant when its answer is not byte for byte DIR/ID.csv.
void check_answers(const std::vector<sq::reference_answer>& answers, const std::string& dir, bool use_index) {
  for (const sq::reference_answer& a : answers) {
    const std::string path = (std::filesystem::path(dir) / (a.id + ".csv")).string();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path + " (the expected answer of " + a.id + ")");
    const std::string expected{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (expected != a.csv)
      throw std::runtime_error(a.id + " (index " + (use_index ? "on" : "off") +
                               "): the answer differs from " + path);
  }
}

/// The selected variants grouped by family, families in the order they come.
std::vector<std::vector<const sq::query_variant*>> by_family(
    const std::vector<const sq::query_variant*>& all) {
  std::vector<std::vector<const sq::query_variant*>> groups;
  for (const sq::query_variant* q : all) {
    auto same = [&](const auto& g) { return g.front()->family == q->family; };
    const auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end())
      groups.push_back({q});
    else
      it->push_back(q);
  }
  return groups;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace xf::apps;
  std::string path, index = "both", expected_dir, json_path;
  std::vector<std::string> names;
  unsigned threads = default_threads(), reps = 5;
  CLI::App app{
      "xeflow-setquery-cpu: the CPU baseline of the Set Query benchmark. Loads a table file from "
      "xeflow-setquery-gen into memory once (timed apart), then runs each query family (all of its "
      "variants in one pass over the table, as the GPU runs a family) --reps times with the index off "
      "and/or on, and prints the median and fastest pass per family and setting. blocks: the table's "
      "1,024-row blocks times the family's variants; skipped: those the index (zone min/max, bloom "
      "filters) ruled out unread."};
  app.option_defaults()->always_capture_default();
  app.add_option("table", path, "the BENCH table file")->required();
  app.add_option("--query", names, "families (Q1 ... Q4B) or variant ids (Q4A_3); default: all 7 families");
  add_threads_option(app, threads);
  app.add_option("--index", index, "consult the frames' index pages: on, off, or both (off, then on)")
      ->check(CLI::IsMember({"on", "off", "both"}));
  app.add_option("--reps", reps, "passes per family and setting")->check(CLI::Range(1u, 1000u));
  app.add_option("--expected", expected_dir,
                 "check every variant's answer against DIR/ID.csv (xeflow-setquery-ref --out-dir)");
  app.add_option("--json", json_path, "also write the results as a JSON document to this file");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-setquery-cpu", std::cerr, [&] {
    std::vector<const sq::query_variant*> variants;
    try {
      variants = sq::select_variants(names);
    } catch (const std::invalid_argument& e) {
      throw usage_error(std::string("--query: ") + e.what());
    }
    std::vector<bool> settings;
    if (index != "on") settings.push_back(false);
    if (index != "off") settings.push_back(true);

    using clock = std::chrono::steady_clock;
    const xf::columnar_table_file file(path);
    const auto load_start = clock::now();
    const sq::in_memory_table table(file, threads);
    const double load_seconds = std::chrono::duration<double>(clock::now() - load_start).count();
    std::cout << "loaded " << table.rows() << " rows (" << table.frames() << " frames, " << std::fixed
              << std::setprecision(2) << table.frames() * table.frame_bytes() / double(1 << 30) << " GiB) in "
              << std::setprecision(3) << load_seconds << " s; " << threads << " threads\n";

    worker_team team(threads);
    std::vector<family_timing> timings;
    for (const auto& family : by_family(variants)) {
      for (const bool use_index : settings) {
        family_timing f{family.front()->family, use_index, family.size(), {}, 0, 0, false};
        for (unsigned rep = 0; rep < reps; ++rep) {
          const auto start = clock::now();
          const sq::engine_pass pass = sq::evaluate_in_memory(table, family, team, use_index);
          f.pass_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count());
          if (rep != 0) continue;  // every pass answers the same; the first one is checked and counted
          f.blocks = pass.blocks * family.size();
          for (const std::uint64_t skipped : pass.blocks_skipped) f.blocks_skipped += skipped;
          if (!expected_dir.empty()) {
            check_answers(pass.answers, expected_dir, use_index);
            f.checked = true;
          }
        }
        timings.push_back(std::move(f));
      }
    }

    std::cout << std::left << std::setw(7) << "family" << std::setw(6) << "index" << std::right
              << std::setw(9) << "variants" << std::setw(12) << "median ms" << std::setw(11) << "min ms"
              << std::setw(12) << "blocks" << std::setw(12) << "skipped"
              << "  answers\n";
    for (const family_timing& f : timings)
      std::cout << std::left << std::setw(7) << f.family << std::setw(6) << (f.use_index ? "on" : "off")
                << std::right << std::setw(9) << f.variants << std::setw(12) << std::setprecision(3)
                << median_of(f.pass_ms) << std::setw(11) << min_of(f.pass_ms) << std::setw(12) << f.blocks
                << std::setw(12) << f.blocks_skipped << "  " << answers_text(f) << "\n";

    if (!json_path.empty()) {
      nlohmann::json j{{"benchmark", "setquery-cpu"}, {"table", path},
                       {"threads", threads},          {"rows", table.rows()},
                       {"frames", table.frames()},    {"reps", reps},
                       {"load_seconds", load_seconds}};
      j["families"] = nlohmann::json::array();
      for (const family_timing& f : timings)
        j["families"].push_back({{"family", f.family},
                                 {"index", f.use_index ? "on" : "off"},
                                 {"variants", f.variants},
                                 {"median_ms", median_of(f.pass_ms)},
                                 {"min_ms", min_of(f.pass_ms)},
                                 {"blocks", f.blocks},
                                 {"blocks_skipped", f.blocks_skipped},
                                 {"answers", answers_text(f)}});
      std::ofstream out(json_path, std::ios::trunc);
      out << j.dump(2) << "\n";
      if (!out.good()) throw std::runtime_error("cannot write " + json_path);
    }
  });
}
