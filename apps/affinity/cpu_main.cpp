// xeflow-affinity-cpu: the multi-threaded CPU reference of the transaction-affinity query, by scanning the
// data file or (with --index) through the index file.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "apps/affinity/affinity.hpp"
#include "apps/dataset_support/tool_cli.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  affinity::query q;
  std::string data_path, index_path;
  bool json = false;
  CLI::App app{
      "xeflow-affinity-cpu: for merchant A, counts for every other merchant B the distinct cards "
      "that transacted at both A and B (two passes over a transaction file from "
      "xeflow-gen-affinity, memory-mapped) and prints the top 10 and a digest of all counts. "
      "Without --index the data file is scanned record by record; with it, records are reached "
      "through their offsets and split evenly across threads. Both give the same result."};
  app.option_defaults()->always_capture_default();
  app.add_option("file", data_path, "transaction data file")->required();
  app.add_option("--merchant", q.merchant,
                 "A, the target merchant (0 is the most popular in generated data)");
  app.add_option("--index", index_path,
                 "index file (u64 record offsets): query through it instead of scanning");
  add_threads_option(app, q.threads);
  unsigned repeats = 1;
  add_repeat_option(app, repeats);
  app.add_flag("--json", json, "print one JSON object (top 10, digest, time, GB/s)");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-affinity-cpu", std::cerr, [&] {
    const affinity::result r = index_path.empty()
                                   ? affinity::run_scan_file(data_path, q, repeats)
                                   : affinity::run_indexed_file(data_path, index_path, q, repeats);
    if (json) {
      std::cout << affinity::to_json(r).dump() << "\n";
      return;
    }
    std::cout << r.records << " records; merchant " << r.merchant << ": " << r.cards_at_merchant
              << " distinct cards, sharing cards with " << r.shared.size() << " other merchants\n";
    for (const auto& m : r.top)
      std::cout << "  merchant " << std::setw(10) << m.merchant << ": " << m.cards << " cards\n";
    print_timing(std::cout, r.digest, r.seconds, r.warm_seconds, 2.0 * static_cast<double>(r.dataset_bytes),
                 std::string(r.path == affinity::access_path::scan ? "scan" : "index") + ", 2 passes, " +
                     std::to_string(r.threads) + " threads");
  });
}
