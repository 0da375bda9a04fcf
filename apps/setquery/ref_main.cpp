// xeflow-setquery-ref: the exact CPU answers of the Set Query variants over a BENCH table file, as the
// `query` operator's result files (setquery_queries.hpp).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "apps/dataset_support/parallel.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "apps/setquery/setquery_queries.hpp"
#include "framework/core/errors.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  namespace sq = xf::apps::setquery;
  std::string path, out_dir;
  std::vector<std::string> names;
  unsigned threads = default_threads();
  CLI::App app{
      "xeflow-setquery-ref: answers Set Query variants (Q1 ... Q4B, every KN variant) over a table file "
      "from xeflow-setquery-gen with a multi-threaded scan, prints a table (id, rows matched, answer) and, "
      "with --out-dir, writes DIR/ID.csv per variant in the query operator's result format."};
  app.option_defaults()->always_capture_default();
  app.add_option("table", path, "the BENCH table file")->required();
  app.add_option("--query", names, "variant ids (Q1_K500K, Q4A_3) or families (Q2B); default: all");
  app.add_option("--out-dir", out_dir, "write ID.csv files here (created if missing)");
  add_threads_option(app, threads);
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-setquery-ref", std::cerr, [&] {
    std::vector<const sq::query_variant*> variants;
    try {
      variants = sq::select_variants(names);
    } catch (const std::invalid_argument& e) {
      throw usage_error(std::string("--query: ") + e.what());
    }
    const xf::columnar_table_file table(path);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<sq::reference_answer> answers = sq::evaluate_reference(table, variants, threads);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!out_dir.empty()) {
      std::filesystem::create_directories(out_dir);
      for (const auto& a : answers) {
        const std::string file = (std::filesystem::path(out_dir) / (a.id + ".csv")).string();
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(a.csv.data(), static_cast<std::streamsize>(a.csv.size()));
        if (!out.good()) throw std::runtime_error("cannot write " + file);
      }
    }
    std::cout << std::left << std::setw(10) << "id" << std::right << std::setw(14) << "rows matched"
              << "  answer\n";
    for (std::size_t i = 0; i < answers.size(); ++i) {
      const auto& a = answers[i];
      // An aggregate's answer is its one result line; a projection's is its row count (the file holds them).
      const std::string body = a.csv.substr(a.csv.find('\n') + 1);
      const std::string answer = variants[i]->projection() ? std::to_string(a.matched_rows) + " rows"
                                                           : body.substr(0, body.find('\n'));
      std::cout << std::left << std::setw(10) << a.id << std::right << std::setw(14) << a.matched_rows << "  "
                << variants[i]->select_text() << " = " << answer << "   WHERE " << variants[i]->where_text()
                << "\n";
    }
    std::cout << answers.size() << " variants over " << table.rows() << " rows in " << seconds << " s ("
              << threads << " threads)\n";
  });
}
