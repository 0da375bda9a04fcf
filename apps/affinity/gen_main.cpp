// xeflow-gen-affinity: writes a transaction file (affinity_format.hpp) and optionally its index file.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/affinity/affinity.hpp"
#include "apps/dataset_support/tool_cli.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  affinity::generate_config cfg;
  std::string data_path, index_path, records_text = "1M", cards_text = "100k", merchants_text = "10k";
  bool json = false;
  CLI::App app{
      "xeflow-gen-affinity: writes N variable-length purchase records ([u32 record_bytes][u64 card]"
      "[u32 merchant][u32 amount_cents][u16 item_count][u16 pad][item_count x u32 item_code]) of C "
      "cards at M merchants with Zipf-skewed popularity (merchant 0 the most popular), and with "
      "--index the file of record offsets. The same seed gives the same files for any --threads."};
  app.option_defaults()->always_capture_default();
  app.add_option("file", data_path, "output data file (created or overwritten)")->required();
  app.add_option("--index", index_path, "also write the index file (u64 offset of every record) here");
  app.add_option("--records", records_text, "N, transactions (count units: 20M, 64k, 1Mi)");
  app.add_option("--cards", cards_text, "C, distinct cards (count units)");
  app.add_option("--merchants", merchants_text, "M, merchants (count units; ids 0..M-1)");
  app.add_option("--zipf", cfg.zipf, "merchant popularity exponent: merchant r has weight 1/(r+1)^s")
      ->check(CLI::Range(0.0, 10.0));
  app.add_option("--seed", cfg.seed, "random seed");
  add_threads_option(app, cfg.threads);
  app.add_flag("--json", json, "print a JSON summary");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-gen-affinity", std::cerr, [&] {
    cfg.records = parse_count("--records", records_text);
    cfg.cards = parse_count("--cards", cards_text);
    const std::uint64_t merchants = parse_count("--merchants", merchants_text);
    if (merchants < 1 || merchants > 100'000'000)
      throw usage_error("--merchants '" + merchants_text + "': give 1 .. 100M merchants");
    cfg.merchants = static_cast<std::uint32_t>(merchants);
    const auto start = std::chrono::steady_clock::now();
    const affinity::generated_files files = affinity::generate_files(data_path, index_path, cfg);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
      std::cout << nlohmann::json{{"file", data_path},        {"index", index_path},
                                  {"records", files.records}, {"bytes", files.data_bytes},
                                  {"cards", cfg.cards},       {"merchants", cfg.merchants},
                                  {"zipf", cfg.zipf},         {"seed", cfg.seed},
                                  {"seconds", seconds}}
                       .dump()
                << "\n";
    } else {
      std::cout << "wrote " << files.records << " records (" << files.data_bytes << " bytes; " << cfg.cards
                << " cards, " << cfg.merchants << " merchants, seed " << cfg.seed << ") to " << data_path;
      if (!index_path.empty()) std::cout << " and their offsets to " << index_path;
      std::cout << " in " << seconds << " s\n";
    }
  });
}
