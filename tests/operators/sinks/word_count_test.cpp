// Tests of word_count on the host: the counts do not depend on how many virtual threads cover the frames
// nor how the frames are cut, they equal a plain count, finish() writes the reference's lines and digest,
// and bad bytes, long words and a full table fail the frame with their codes.
#include <doctest/doctest.h>

#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "framework/model/registry.hpp"
#include "operators/builtin.hpp"
#include "operators/sinks/word_count.hpp"

using namespace xf;

namespace {

struct counted {
  operator_counters counters;
  std::uint32_t failure = 0;
};

/// Folds `frames` into one accumulator with `threads` virtual threads each, then finishes it. Frames are
/// folded from `workers` host threads at once, as the host executor's blocks do.
counted count_words(const std::vector<std::string>& frames, std::uint32_t threads, unsigned workers = 1,
                    word_count_op::params p = {}) {
  std::vector<std::byte> state(word_count_op::state_bytes(p) + 64);
  auto* accumulator =
      reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(state.data()) + 63) / 64 * 64);
  std::atomic<std::uint64_t> failure{0};
  auto fold = [&](unsigned worker) {
    for (std::size_t f = worker; f < frames.size(); f += workers) {
      frame_task<std::uint8_t> task;
      task.in = reinterpret_cast<const std::uint8_t*>(frames[f].data());
      task.count = frames[f].size();
      task.offset = f;
      task.thread_count = threads;
      task.state = accumulator;
      std::uint64_t failed = 0;
      task.failure = &failed;
      for (std::uint32_t t = 0; t < threads; ++t) {
        task.thread_id = t;
        word_count_op::compute(p, task);
      }
      if (failed != 0) failure = failed;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) pool.emplace_back(fold, w);
  for (auto& t : pool) t.join();
  counted r;
  r.failure = static_cast<std::uint32_t>(failure.load());
  if (r.failure == 0) r.counters = word_count_op::finish(p, {accumulator, word_count_op::state_bytes(p)});
  return r;
}

/// The plain count: "WORD COUNT\n" lines in word order.
std::string reference_lines(const std::string& text) {
  std::map<std::string, std::uint64_t> counts;
  std::istringstream in(text);
  for (std::string word; in >> word;) ++counts[word];
  std::string lines;
  for (const auto& [w, c] : counts) lines += w + " " + std::to_string(c) + "\n";
  return lines;
}

std::string zipf_text() {
  std::string text;
  std::uint64_t x = 12345;
  for (int w = 0; w < 20'000; ++w) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const auto rank = static_cast<unsigned>((x >> 33) % 500);  // 500 words, the low ranks most often
    const unsigned word = rank % 7 == 0 ? rank / 7 : rank;
    for (unsigned k = word;; k /= 26) {
      text.push_back(static_cast<char>('a' + k % 26));
      if (k < 26) break;
    }
    text.push_back(w % 11 == 10 ? '\n' : ' ');
  }
  return text;
}

/// `text` cut after separators into pieces of about `bytes`.
std::vector<std::string> cut(const std::string& text, std::size_t bytes) {
  std::vector<std::string> frames;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = std::min(text.size(), at + bytes);
    while (end < text.size() && text[end - 1] != ' ' && text[end - 1] != '\n') ++end;
    frames.push_back(text.substr(at, end - at));
    at = end;
  }
  return frames;
}

}  // namespace

TEST_CASE("word_count.counts_every_word_exactly_for_any_threads_and_cuts") {
  const std::string text = zipf_text();
  const std::string lines = reference_lines(text);
  const auto digest = crc32_z(0, reinterpret_cast<const Bytef*>(lines.data()), lines.size());
  std::uint64_t words = 0, distinct = 0;
  for (char c : lines) distinct += c == '\n';
  std::istringstream in(text);
  for (std::string w; in >> w;) ++words;
  for (const std::uint32_t threads : {1u, 7u, 32u, 256u}) {
    for (const std::size_t frame : {std::size_t{100}, std::size_t{4096}, text.size()}) {
      CAPTURE(threads);
      CAPTURE(frame);
      const counted r = count_words(cut(text, frame), threads, 3);
      REQUIRE(r.failure == 0);
      CHECK(r.counters.at("words") == words);
      CHECK(r.counters.at("distinct_words") == distinct);
      CHECK(r.counters.at("table_slots_used") == distinct);
      CHECK(r.counters.at("digest") == digest);
    }
  }
}

/// `frame` as an address stage of `lanes` lanes assembles it: lane l holds bytes [l·B, (l+1)·B) (B = ⌈n /
/// L⌉), byte k of lane l at k·L + l, `pad` where a lane is short; the frame ends after the last byte any lane
/// has.
std::string interleave(const std::string& frame, std::size_t lanes, char pad = ' ') {
  const std::size_t per_lane = (frame.size() + lanes - 1) / lanes;
  std::string out(per_lane * lanes, pad);
  std::size_t extent = 0;
  for (std::size_t q = 0; q < frame.size(); ++q) {
    const std::size_t at = q % per_lane * lanes + q / per_lane;
    out[at] = frame[q];
    extent = std::max(extent, at + 1);
  }
  out.resize(extent);
  return out;
}

TEST_CASE("word_count.reads_lane_frames_in_text_order") {
  const std::string text = zipf_text();
  const counted plain = count_words(cut(text, 4096), 32);
  REQUIRE(plain.failure == 0);
  for (const std::int64_t lanes : {2, 7, 64}) {
    for (const std::size_t frame : {std::size_t{100}, std::size_t{4096}}) {
      for (const std::uint32_t threads : {1u, 32u, 256u}) {
        CAPTURE(lanes);
        CAPTURE(frame);
        CAPTURE(threads);
        // Words cross lanes (a lane ends mid-word); frames do not (they are cut between words).
        std::vector<std::string> frames;
        for (const std::string& f : cut(text, frame))
          frames.push_back(interleave(f, static_cast<std::size_t>(lanes)));
        word_count_op::params p;
        p.lanes = lanes;
        const counted r = count_words(frames, threads, 2, p);
        REQUIRE(r.failure == 0);
        CHECK(r.counters == plain.counters);
      }
    }
  }
  // Padding with zeros instead of spaces is a bad byte, not silently a separator.
  word_count_op::params p;
  p.lanes = 4;
  CHECK(count_words({interleave("abc de fgh ijk", 4, '\0')}, 4, 1, p).failure == word_count_op::bad_byte);
}

TEST_CASE("word_count.writes_the_sorted_lines_to_its_result_file") {
  const std::string text = "the cat saw the dog\nand the dog saw a cat \n";
  const auto path =
      std::filesystem::temp_directory_path() / ("xeflow-word-count-" + std::to_string(::getpid()) + ".txt");
  word_count_op::params p;
  p.table_slots = 64;
  REQUIRE(std::string(parse_path_text(path.string(), p.result)).empty());
  const counted r = count_words({text}, 32, 1, p);
  REQUIRE(r.failure == 0);
  std::ifstream in(path);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(written == "a 1\nand 1\ncat 2\ndog 2\nsaw 2\nthe 3\n");
  CHECK(r.counters.at("words") == 11);
  CHECK(!std::filesystem::exists(path.string() + ".partial"));
  std::filesystem::remove(path);

  path_text too_long;
  CHECK(std::string(parse_path_text(std::string(600, 'x'), too_long)) == "a path of at most 511 bytes");
  REQUIRE(std::string(parse_path_text("/nonexistent/dir/counts.txt", p.result)).empty());
  CHECK_THROWS_WITH_AS(count_words({text}, 32, 1, p), doctest::Contains("/nonexistent/dir/counts.txt"),
                       std::runtime_error);
}

TEST_CASE("word_count.fails_frames_with_bad_bytes_long_words_or_a_full_table") {
  CHECK(count_words({"good words\nthen a Capital\n"}, 32).failure == word_count_op::bad_byte);
  CHECK(count_words({"tab\tseparated\n"}, 5).failure == word_count_op::bad_byte);
  CHECK(count_words({std::string(40, 'a') + " fits\n"}, 32).failure == 0);
  CHECK(count_words({"short " + std::string(41, 'a') + "\n"}, 32).failure == word_count_op::long_word);
  word_count_op::params small;
  small.table_slots = 16;  // room for 12 distinct words
  std::string twelve, thirteen;
  for (int w = 0; w < 13; ++w) (w < 12 ? twelve : thirteen) += std::string(1 + w, 'k') + " ";
  CHECK(count_words({twelve}, 4, 1, small).failure == 0);
  CHECK(count_words({twelve + thirteen}, 4, 1, small).failure == word_count_op::table_full);
}

TEST_CASE("word_count.registers_as_a_gpu_sink") {
  operator_registry registry;
  register_builtin_operators(registry);
  const operator_entry* entry = registry.find("word_count");
  REQUIRE(entry != nullptr);
  CHECK(entry->info.role == operator_role::sink);
  CHECK(entry->info.gpu);
  CHECK(entry->info.whole_frames);
  param_map values{{"table_slots", param_value{std::int64_t{1000}}}};
  CHECK(entry->info.check_values(values) == "table_slots must be a power of two");
  values["table_slots"] = param_value{std::int64_t{1024}};
  const auto kernel = entry->make_host_kernel(values, {});
  CHECK(kernel->accumulator().size() == 64 + 1024 * 64);
}
