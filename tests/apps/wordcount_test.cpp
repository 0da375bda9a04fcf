// Word-count generator and CPU reference: the generated text's format and determinism, results identical
// for any thread count and equal to a naive count, edge cases of the scan (long words, runs of separators,
// no final newline), malformed bytes named by offset, and the tools' exit codes.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/dataset_support/dataset_file.hpp"
#include "apps/dataset_support/seeded_random.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "apps/wordcount/text_scan.hpp"
#include "apps/wordcount/word_table.hpp"
#include "apps/wordcount/wordcount.hpp"
#include "apps/wordcount/wordcount_format.hpp"
#include "tests/apps/dataset_fixture.hpp"

using namespace xf::apps;
using namespace xf::apps::wordcount;
using xf::test::read_file;
using xf::test::scratch_dir;
using xf::test::write_file;

namespace {

using counts = std::vector<std::pair<std::string, std::uint64_t>>;

/// Counting written plainly: split on anything that is not a letter, a std::map, sorted by word.
counts naive_counts(const std::string& text) {
  std::map<std::string, std::uint64_t> m;
  std::string word;
  for (char c : text + " ") {
    if (c >= 'a' && c <= 'z') {
      word.push_back(c);
    } else if (!word.empty()) {
      ++m[word];
      word.clear();
    }
  }
  return {m.begin(), m.end()};
}

std::uint32_t naive_digest(const counts& cs) {
  std::string lines;
  for (const auto& [w, n] : cs) lines += w + " " + std::to_string(n) + "\n";
  return static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(lines.data()), static_cast<uInt>(lines.size())));
}

counts naive_top(counts cs) {
  std::stable_sort(cs.begin(), cs.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  cs.resize(std::min<std::size_t>(10, cs.size()));
  return cs;
}

void check_against_naive(const std::string& text, unsigned threads) {
  CAPTURE(threads);
  const counts expected = naive_counts(text);
  options opt;
  opt.threads = threads;
  const result r = run(text, opt);
  CHECK(r.counts == expected);
  std::uint64_t words = 0;
  for (const auto& c : expected) words += c.second;
  CHECK(r.words == words);
  CHECK(r.distinct_words == expected.size());
  CHECK(r.top == naive_top(expected));
  CHECK(r.digest == naive_digest(expected));
}

generate_config small_config() {
  generate_config cfg;
  cfg.bytes = 3 * xf::MiB + 12345;  // four generator blocks, the last one short
  cfg.vocabulary = 5000;
  cfg.seed = 5;
  return cfg;
}

}  // namespace

TEST_CASE("wordcount.non_letter_mask_is_exact_per_byte") {
  for (unsigned b = 0; b < 256; ++b) {
    // byte b at every position among letters
    for (unsigned at = 0; at < 8; ++at) {
      std::uint64_t v = 0x6162636465666768ull;  // letters
      v = (v & ~(0xffull << (8 * at))) | (std::uint64_t{b} << (8 * at));
      const std::uint64_t expected = is_letter(static_cast<unsigned char>(b)) ? 0 : 0x80ull << (8 * at);
      REQUIRE(non_letter_mask(v) == expected);
    }
  }
}

TEST_CASE("wordcount.block_classification_portable_and_sse2_agree") {
  std::uint64_t state = 3;
  std::string block(64, ' ');
  for (int round = 0; round < 2000; ++round) {
    for (char& c : block) {
      const std::uint64_t r = xf::apps::splitmix64(state);
      // Mostly text bytes, sometimes any byte: letters, separators and their neighbours ('`', '{', 0x80+).
      c = static_cast<char>(r % 4 == 0 ? (r >> 8) & 0xff : "az` {\n\tqm"[(r >> 8) % 9]);
    }
    if (round == 0) block.assign(64, 'a');
    if (round == 1) block.assign(64, '\xff');
    block_masks expected;
    for (unsigned i = 0; i < 64; ++i) {
      const auto c = static_cast<unsigned char>(block[i]);
      expected.letters |= std::uint64_t{is_letter(c)} << i;
      expected.separators |= std::uint64_t{is_separator(c)} << i;
    }
    const block_masks swar = classify_block_swar(block.data());
    REQUIRE(swar.letters == expected.letters);
    REQUIRE(swar.separators == expected.separators);
#if defined(__SSE2__)
    const block_masks sse2 = classify_block_sse2(block.data());
    REQUIRE(sse2.letters == expected.letters);
    REQUIRE(sse2.separators == expected.separators);
#endif
  }
}

TEST_CASE("wordcount.generator_is_deterministic_and_well_formed") {
  scratch_dir dir;
  generate_config cfg = small_config();
  cfg.threads = 1;
  const std::uint64_t bytes = generate_file(dir.file("a"), cfg);
  cfg.threads = 3;
  CHECK(generate_file(dir.file("b"), cfg) == bytes);
  const std::string text = read_file(dir.file("a"));
  CHECK(text == read_file(dir.file("b")));
  CHECK(text.size() == bytes);
  CHECK(bytes >= cfg.bytes);
  CHECK(bytes < cfg.bytes + 4 * 1024);
  cfg.seed = 6;
  generate_file(dir.file("c"), cfg);
  CHECK(text != read_file(dir.file("c")));

  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');
  CHECK(is_letter(static_cast<unsigned char>(text.front())));
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    REQUIRE((is_letter(c) || is_separator(c)));
    if (is_separator(c) && i + 1 < text.size()) REQUIRE(is_letter(static_cast<unsigned char>(text[i + 1])));
  }
  // Every word comes from the vocabulary; the most frequent word is the vocabulary's first.
  const std::vector<std::string> vocab = vocabulary(small_config());
  CHECK(vocab.size() == 5000);
  const counts cs = naive_counts(text);
  for (const auto& [w, n] : cs) REQUIRE(std::find(vocab.begin(), vocab.end(), w) != vocab.end());
  CHECK(naive_top(cs).front().first == vocab.front());
}

TEST_CASE("wordcount.same_result_for_1_2_7_threads_and_a_naive_count") {
  scratch_dir dir;
  generate_file(dir.file("t"), small_config());
  const std::string text = read_file(dir.file("t"));
  for (unsigned threads : {1u, 2u, 7u}) check_against_naive(text, threads);

  options opt;
  opt.threads = 7;
  const result from_file = run_file(dir.file("t"), opt);
  CHECK(from_file.counts == naive_counts(text));
  CHECK(from_file.dataset_bytes == text.size());
}

TEST_CASE("wordcount.scan_edge_cases") {
  const std::string long_a = "abcdefghijklmnopqrstuvwxyz";  // 26 letters: compared beyond the inline 16
  const std::string long_b = "abcdefghijklmnopqrstuvwxyy";  // same first 16 and length, differs at the end
  const std::vector<std::string> texts = {
      "",
      "\n\n  \n",
      "a",
      "word",
      "abcdefgh abcdefgh abcdefghabcdefgh abcdefghabcdefgh\n",  // exactly 8 and 16 letters
      "the  cat\n\nthe cat   sat\n the",                        // runs of separators, no final newline
      long_a + " " + long_b + " " + long_a + "\n" + long_b + " " + long_a,
      "a b c d e f g h i j k l m n o p q r s t u v w x y z a b c",
      std::string(1000, 'q') + " " + std::string(1000, 'q') + " " + std::string(999, 'q'),
  };
  for (const std::string& text : texts) {
    CAPTURE(text.substr(0, 60));
    for (unsigned threads : {1u, 2u, 3u, 7u}) check_against_naive(text, threads);
  }
}

TEST_CASE("wordcount.hash_of_a_whole_word_matches_the_scan") {
  // The scan folds chunks as it finds them; make_word_key does it over a whole word: same keys, so a table
  // fed by both agrees.
  const std::string text = "xylophone xylophone abcdefghijklmnopq abcdefghijklmnopq";
  word_table table;
  table.add(text.data(), 9, make_word_key(text.data(), 9));
  options opt;
  const result r = run(text, opt);
  REQUIRE(r.counts.size() == 2);
  CHECK(r.counts[1] == std::pair<std::string, std::uint64_t>{"xylophone", 2});
  CHECK(table.size() == 1);
  table.add(text.data() + 10, 9, make_word_key(text.data() + 10, 9));
  CHECK(table.size() == 1);
}

TEST_CASE("wordcount.malformed_text_names_the_offset") {
  options opt;
  auto offset_of_error = [&](const std::string& text, unsigned threads) -> std::uint64_t {
    opt.threads = threads;
    try {
      run(text, opt, "input.txt");
    } catch (const dataset_error& e) {
      CHECK(std::string(e.what()).find("input.txt: byte offset " + std::to_string(*e.offset())) == 0);
      return *e.offset();
    }
    FAIL("no error");
    return 0;
  };
  for (unsigned threads : {1u, 2u, 7u}) {
    CAPTURE(threads);
    CHECK(offset_of_error("abc Def", threads) == 4);
    CHECK(offset_of_error("abc d\tf", threads) == 5);
    CHECK(offset_of_error("abcdefghijk\xc3\xa9 z", threads) == 11);
    // Two faults far apart: the first is reported, whichever thread met it.
    std::string text = std::string(5000, 'a') + " " + std::string(5000, 'b');
    text[7000] = '.';
    text[100] = '0';
    CHECK(offset_of_error(text, threads) == 100);
  }
}

TEST_CASE("wordcount.command_line_exit_codes") {
  scratch_dir dir;
  const std::string file = dir.file("t");
  auto gen = xf::test::run_tool("XF_GEN_WORDCOUNT", {file, "--bytes", "200KiB", "--vocabulary", "2k"});
  REQUIRE_MESSAGE(gen.exit_code == 0, gen.err);
  const std::string text = read_file(file);

  const auto json = xf::test::run_tool("XF_WORDCOUNT_CPU", {file, "--threads", "3", "--json"});
  REQUIRE_MESSAGE(json.exit_code == 0, json.err);
  const auto j = nlohmann::json::parse(json.out);
  const counts expected = naive_counts(text);
  CHECK(j["distinct_words"] == expected.size());
  CHECK(j["top"].size() == 10);
  CHECK(j["digest"] == xf::apps::hex32(naive_digest(expected)));

  const auto repeated = xf::test::run_tool("XF_WORDCOUNT_CPU", {file, "--json", "--repeat", "2"});
  REQUIRE_MESSAGE(repeated.exit_code == 0, repeated.err);
  CHECK(nlohmann::json::parse(repeated.out)["warm_seconds"].size() == 1);
  CHECK(nlohmann::json::parse(repeated.out)["digest"] == j["digest"]);

  CHECK(xf::test::run_tool("XF_WORDCOUNT_CPU", {"--help"}).exit_code == 0);
  CHECK(xf::test::run_tool("XF_GEN_WORDCOUNT", {"--help"}).exit_code == 0);
  CHECK(xf::test::run_tool("XF_WORDCOUNT_CPU", {file, "--threads", "0"}).exit_code == 2);
  const auto bad_bytes = xf::test::run_tool("XF_GEN_WORDCOUNT", {dir.file("x"), "--bytes", "12 XB"});
  CHECK(bad_bytes.exit_code == 2);
  CHECK(bad_bytes.err.find("--bytes") != std::string::npos);
  CHECK(xf::test::run_tool("XF_GEN_WORDCOUNT", {dir.file("x"), "--vocabulary", "0"}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_WORDCOUNT_CPU", {dir.file("missing")}).exit_code == 1);
  write_file(dir.file("bad"), "good words\nBad\n");
  const auto bad = xf::test::run_tool("XF_WORDCOUNT_CPU", {dir.file("bad")});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find(dir.file("bad") + ": byte offset 11") != std::string::npos);
}
