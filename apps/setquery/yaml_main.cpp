// xeflow-setquery-yaml: writes the Set Query topologies (setquery_topology.hpp), one file per query family.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "apps/dataset_support/tool_cli.hpp"
#include "apps/setquery/setquery_queries.hpp"
#include "apps/setquery/setquery_topology.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  namespace sq = xf::apps::setquery;
  std::string out_dir = "topologies";
  sq::topology_options options;
  CLI::App app{
      "xeflow-setquery-yaml: writes setquery_q1.yaml ... setquery_q4b.yaml: a table_source publishing the "
      "columnar topic `bench` (the BENCH schema as xeflow-setquery-gen writes it) and one GPU query "
      "operator per variant of the family. The committed topologies/ files are this tool's defaults."};
  app.option_defaults()->always_capture_default();
  app.add_option("--out-dir", out_dir, "directory the files go to (created if missing)");
  app.add_option("--table", options.table_path, "the table file table_source reads");
  app.add_option("--results", options.results_dir, "directory of the query operators' ID.csv results");
  app.add_option("--rows-per-frame", options.rows_per_frame, "as given to xeflow-setquery-gen")
      ->check(CLI::Range(1u, 1u << 22));
  app.add_option("--capacity", options.capacity, "frames in flight on `bench`")
      ->check(CLI::Range(1u, 1u << 20));
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-setquery-yaml", std::cerr, [&] {
    std::filesystem::create_directories(out_dir);
    for (std::string_view family : sq::query_families) {
      const std::string file = (std::filesystem::path(out_dir) / sq::topology_file_name(family)).string();
      const std::string text = sq::topology_yaml(family, options);
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      if (!out.good()) throw std::runtime_error("cannot write " + file);
      std::cout << "wrote " << file << "\n";
    }
  });
}
