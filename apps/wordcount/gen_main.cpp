// xeflow-gen-wordcount: writes a word-count text (wordcount_format.hpp) drawn from a Zipf-like vocabulary.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/dataset_support/tool_cli.hpp"
#include "apps/wordcount/wordcount.hpp"

int main(int argc, char** argv) {
  using namespace xf::apps;
  wordcount::generate_config cfg;
  std::string path, bytes_text = "64MiB", vocabulary_text = "100k";
  bool json = false;
  CLI::App app{
      "xeflow-gen-wordcount: writes a text of lowercase words separated by single spaces and "
      "newlines, drawn from a vocabulary of V random words with Zipf-like frequencies. The same "
      "seed gives the same file for any --threads."};
  app.option_defaults()->always_capture_default();
  app.add_option("file", path, "output file (created or overwritten)")->required();
  app.add_option("--bytes", bytes_text,
                 "text size (units: KiB, MiB, GiB, GB...); the file ends at the "
                 "first line end past it");
  app.add_option("--vocabulary", vocabulary_text, "V, distinct words (count units: 100k, 1M)");
  app.add_option("--zipf", cfg.zipf, "exponent s: the word of rank r has weight 1/(r+1)^s")
      ->check(CLI::Range(0.0, 10.0));
  app.add_option("--max-words-per-line", cfg.max_words_per_line, "lines hold 1..this many words")
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--seed", cfg.seed, "random seed");
  add_threads_option(app, cfg.threads);
  app.add_flag("--json", json, "print a JSON summary");
  if (const auto code = parse_or_exit(app, argc, argv, std::cout, std::cerr)) return *code;

  return run_tool("xeflow-gen-wordcount", std::cerr, [&] {
    cfg.bytes = parse_byte_size("--bytes", bytes_text);
    const std::uint64_t vocabulary = parse_count("--vocabulary", vocabulary_text);
    if (vocabulary < 1 || vocabulary > 100'000'000)
      throw usage_error("--vocabulary '" + vocabulary_text + "': give 1 .. 100M words");
    cfg.vocabulary = static_cast<std::uint32_t>(vocabulary);
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t bytes = wordcount::generate_file(path, cfg);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
      std::cout << nlohmann::json{{"file", path},     {"bytes", bytes},   {"vocabulary", cfg.vocabulary},
                                  {"zipf", cfg.zipf}, {"seed", cfg.seed}, {"seconds", seconds}}
                       .dump()
                << "\n";
    } else {
      std::cout << "wrote " << bytes << " bytes of text (vocabulary " << cfg.vocabulary << ", zipf "
                << cfg.zipf << ", seed " << cfg.seed << ") to " << path << " in " << seconds << " s\n";
    }
  });
}
