// xeflow-setquery-gen: writes O'Neil's Set Query BENCH table as a table file (setquery_table.hpp).
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "apps/setquery/setquery_table.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  namespace sq = xf::apps::setquery;
  std::string path, rows_text = std::to_string(sq::default_rows);
  unsigned threads = default_threads();
  std::uint32_t seed = sq::default_seed, rows_per_frame = sq::default_rows_per_frame;
  bool json = false;
  CLI::App app{
      "xeflow-setquery-gen: writes the Set Query benchmark's BENCH table (KSEQ, K500K ... K2, S1 ... S8) "
      "as a columnar table file for table_source. KN values come from the Park-Miller generator "
      "(16807 x mod 2^31-1); row i depends only on the seed and i, never on --threads."};
  app.option_defaults()->always_capture_default();
  app.add_option("--out", path, "the table file (created or replaced)")->required();
  app.add_option("--rows", rows_text, "rows (count units: 10M, 1G); at most 2147483647");
  app.add_option("--seed", seed, "the generator's x0")->check(CLI::Range(1u, 2147483646u));
  app.add_option("--rows-per-frame", rows_per_frame,
                 "rows a frame holds (the topologies in topologies/setquery_*.yaml use the default)")
      ->check(CLI::Range(1u, 1u << 22));
  add_threads_option(app, threads);
  app.add_flag("--json", json, "print a JSON summary");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-setquery-gen", std::cerr, [&] {
    const std::uint64_t rows = parse_count("--rows", rows_text);
    if (rows < 1 || rows > sq::max_rows)
      throw usage_error("--rows '" + rows_text + "': give 1 .. 2147483647");
    const auto start = std::chrono::steady_clock::now();
    sq::write_setquery_table(path, rows, threads, seed, rows_per_frame);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
      std::cout << nlohmann::json{{"file", path}, {"rows", rows},       {"rows_per_frame", rows_per_frame},
                                  {"seed", seed}, {"threads", threads}, {"seconds", seconds}}
                       .dump()
                << "\n";
    } else {
      std::cout << "wrote " << rows << " rows (" << rows_per_frame << " a frame, seed " << seed << ") to "
                << path << " in " << seconds << " s\n";
    }
  });
}
