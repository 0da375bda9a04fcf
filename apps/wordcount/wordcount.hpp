// Word count (BigKernel §V): the text generator (words from a Zipf-like vocabulary) and the multi-threaded
// CPU reference, which is both the expected result and the CPU baseline of the prefetch-source benchmark.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/core/units.hpp"

namespace xf::apps::wordcount {

struct generate_config {
  std::uint64_t bytes = 64 * MiB;      ///< text size; the file ends at the first line end at or after it
  std::uint32_t vocabulary = 100'000;  ///< V distinct words
  double zipf = 1.0;                   ///< word of rank r (0-based) has weight 1 / (r + 1)^zipf
  std::uint32_t max_words_per_line = 16;
  std::uint64_t seed = 1;
  unsigned threads = 1;  ///< does not change the file
};

/// The V distinct words of the vocabulary, most frequent first: 1..10 random lowercase letters each.
std::vector<std::string> vocabulary(const generate_config& cfg);

/// Writes the text: blocks of about 1 MiB, each whole lines of 1..max_words_per_line words drawn from the
/// vocabulary, words separated by one space, lines ended by '\n'. The same seed gives the same file for
/// any thread count. Returns the bytes written (>= cfg.bytes, by less than a line per MiB).
std::uint64_t generate_file(const std::string& path, const generate_config& cfg);

struct options {
  unsigned threads = 1;
};

struct result {
  std::uint64_t words = 0;
  std::uint64_t distinct_words = 0;
  /// Every distinct word with its count, sorted by word (bytewise).
  std::vector<std::pair<std::string, std::uint64_t>> counts;
  /// The 10 most frequent (fewer if fewer distinct words): count descending, then word ascending.
  std::vector<std::pair<std::string, std::uint64_t>> top;
  /// CRC-32 (zlib) of the lines "WORD COUNT\n" (count in decimal) in `counts` order: the output of
  /// `tr -s ' \n' '\n' | LC_ALL=C sort | uniq -c`, reformatted.
  std::uint32_t digest = 0;
  // Not part of the result proper:
  unsigned threads = 0;
  std::uint64_t dataset_bytes = 0;
  double seconds = 0;                ///< the first run, mapping included (run_file)
  std::vector<double> warm_seconds;  ///< the repeated runs on the same mapping (run_file with repeats)
};

/// Counts the words of `text` with `opt.threads` threads: the text is cut into equal byte ranges moved
/// forward to word starts, each thread counts into its own table, and the tables are merged in parallel by
/// the words' first two letters. dataset_error naming `name` and the offset of the first byte that is not
/// a letter, space or newline.
result run(std::string_view text, const options& opt, const std::string& name = "<text>");

/// run() over a file mapped read-only; `seconds` includes the mapping. With repeats > 1, run() runs that
/// many times on the one mapping and warm_seconds holds the later runs' times.
result run_file(const std::string& path, const options& opt, unsigned repeats = 1);

/// {"app":"wordcount", words, distinct_words, top: [{word, count}], digest: "0x…", threads, dataset_bytes,
///  passes (1), seconds, gb_per_s (dataset bytes / seconds / 10^9), and with repeats warm_seconds,
///  warm_gb_per_s (add_timing)}.
nlohmann::json to_json(const result& r);

}  // namespace xf::apps::wordcount
