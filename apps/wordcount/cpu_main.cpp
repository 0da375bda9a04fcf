// xeflow-wordcount-cpu: the multi-threaded CPU reference of word count over a memory-mapped text file.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "apps/dataset_support/tool_cli.hpp"
#include "apps/wordcount/wordcount.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  wordcount::options opt;
  std::string path;
  bool json = false;
  CLI::App app{
      "xeflow-wordcount-cpu: counts every word of a text (lowercase words separated by spaces and "
      "newlines, e.g. from xeflow-gen-wordcount), memory-mapped, with per-thread hash tables merged "
      "at the end. Prints the word count, distinct words, the top 10 and a digest of all counts."};
  app.option_defaults()->always_capture_default();
  app.add_option("file", path, "text file")->required();
  add_threads_option(app, opt.threads);
  unsigned repeats = 1;
  add_repeat_option(app, repeats);
  app.add_flag("--json", json, "print one JSON object (counts, top 10, digest, time, GB/s)");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-wordcount-cpu", std::cerr, [&] {
    const wordcount::result r = wordcount::run_file(path, opt, repeats);
    if (json) {
      std::cout << wordcount::to_json(r).dump() << "\n";
      return;
    }
    std::cout << r.words << " words, " << r.distinct_words << " distinct\n";
    for (const auto& [word, count] : r.top)
      std::cout << "  " << std::setw(12) << count << "  " << word << "\n";
    print_timing(std::cout, r.digest, r.seconds, r.warm_seconds, static_cast<double>(r.dataset_bytes),
                 std::to_string(r.threads) + " threads");
  });
}
