// xeflow-kmeans-cpu: the multi-threaded CPU reference of K-means (Lloyd's algorithm over a memory-mapped
// particle file); writes every particle's cluster id back into the file and prints centres and digest.
#include <iostream>

#include "apps/dataset_support/tool_cli.hpp"
#include "apps/kmeans/kmeans.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  kmeans::options opt;
  std::string path;
  bool json = false;
  CLI::App app{
      "xeflow-kmeans-cpu: K-means (Lloyd's algorithm, a fixed number of iterations, the first K "
      "particles as initial centres) over a particle file from xeflow-gen-kmeans, memory-mapped. "
      "Writes each particle's cluster id into the file. Results are identical for any --threads."};
  app.option_defaults()->always_capture_default();
  app.add_option("file", path, "particle file (read and written in place)")->required();
  app.add_option("--clusters", opt.clusters, "K")->check(CLI::Range(1u, 1u << 16));
  app.add_option("--iterations", opt.iterations, "assignment + update steps")
      ->check(CLI::Range(1u, 1u << 20));
  add_threads_option(app, opt.threads);
  unsigned repeats = 1;
  add_repeat_option(app, repeats);
  app.add_flag("--json", json, "print one JSON object (centres, digest, time, GB/s)");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-kmeans-cpu", std::cerr, [&] {
    const kmeans::result r = kmeans::run_file(path, opt, repeats);
    if (json) {
      std::cout << kmeans::to_json(r).dump() << "\n";
      return;
    }
    kmeans::print_result(std::cout, r,
                         std::to_string(r.iterations) + " passes, " + std::to_string(r.threads) + " threads");
  });
}
