// xeflow-gen-kmeans: writes a K-means particle file (kmeans_format.hpp) of N particles around K centres.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/dataset_support/tool_cli.hpp"
#include "apps/kmeans/kmeans.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  kmeans::generate_config cfg;
  std::string path, records_text, bytes_text;
  bool json = false;
  CLI::App app{
      "xeflow-gen-kmeans: writes a K-means dataset: 64-byte particle records (x, y, z float32, "
      "cluster u32 = 0xffffffff, 48 payload bytes) scattered (Gaussian) around K random centres. "
      "The same seed gives the same file for any --threads."};
  app.option_defaults()->always_capture_default();
  app.add_option("file", path, "output file (created or overwritten)")->required();
  auto* records = app.add_option("--records,--particles", records_text,
                                 "particles to write (count units: 1M, 64k, 16Mi); default 1M");
  app.add_option("--bytes", bytes_text,
                 "alternatively the file size (units: MiB, GiB, GB...), rounded down to "
                 "whole 64-byte records")
      ->excludes(records);
  app.add_option("--clusters", cfg.clusters, "K, the number of true centres")
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--spread", cfg.spread, "standard deviation of each coordinate around its centre")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--extent", cfg.extent, "centres are uniform in [-extent, extent]^3")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", cfg.seed, "random seed");
  add_threads_option(app, cfg.threads);
  app.add_flag("--json", json, "print a JSON summary");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-gen-kmeans", std::cerr, [&] {
    if (!records_text.empty()) cfg.particles = parse_count("--records", records_text);
    if (!bytes_text.empty()) cfg.particles = parse_byte_size("--bytes", bytes_text) / kmeans::particle_bytes;
    const auto start = std::chrono::steady_clock::now();
    kmeans::generate_file(path, cfg);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::uint64_t bytes = cfg.particles * kmeans::particle_bytes;
    if (json) {
      std::cout << nlohmann::json{{"file", path},
                                  {"particles", cfg.particles},
                                  {"clusters", cfg.clusters},
                                  {"seed", cfg.seed},
                                  {"bytes", bytes},
                                  {"seconds", seconds}}
                       .dump()
                << "\n";
    } else {
      std::cout << "wrote " << cfg.particles << " particles (" << bytes << " bytes, " << cfg.clusters
                << " true centres, seed " << cfg.seed << ") to " << path << " in " << seconds << " s\n";
    }
  });
}
