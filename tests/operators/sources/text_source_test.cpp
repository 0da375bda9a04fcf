// Tests of text_source: frames hold whole words only, concatenated they are the file, each is a function of
// its offset, and the bad configurations and over-long words are named.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "framework/core/errors.hpp"
#include "operators/sources/text_source.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

std::filesystem::path write_temp_text(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("xeflow-text-source-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// Words of 1..9 letters, single spaces, a newline every 7 words: `bytes` bytes or a little more.
std::string word_text(std::size_t bytes) {
  std::string text;
  for (std::size_t w = 0; text.size() < bytes; ++w) {
    text.append(1 + w % 9, static_cast<char>('a' + w % 26));
    text.push_back(w % 7 == 6 ? '\n' : ' ');
  }
  return text;
}

std::string frame_text(text_source& source, std::uint64_t offset, std::uint64_t frame_bytes) {
  const std::vector<std::byte> f = produce_frame(source, offset, frame_bytes);
  return {reinterpret_cast<const char*>(f.data()), f.size()};
}

}  // namespace

TEST_CASE("text_source.frames_are_whole_words_that_add_up_to_the_file") {
  const std::string text = word_text(50'000);
  const auto path = write_temp_text("whole", text);
  text_source::params p;
  p.path = path.string();
  p.max_word_bytes = 16;
  text_source source(p);
  source.on_start(source_setup(page_bytes));
  const std::uint64_t stride = page_bytes - 16;
  REQUIRE(source.frame_count() == (text.size() + stride - 1) / stride);
  std::string joined;
  for (std::uint64_t o = 0; o < *source.frame_count(); ++o) {
    CAPTURE(o);
    const std::string f = frame_text(source, o, page_bytes);
    REQUIRE(f.size() <= page_bytes);
    // A frame starts after a separator (or at the file's start) and ends before one (or at its end).
    const std::size_t at = joined.size();
    CHECK((at == 0 || text[at - 1] == ' ' || text[at - 1] == '\n'));
    const std::size_t end = at + f.size();
    CHECK((end == text.size() || text[end - 1] == ' ' || text[end - 1] == '\n' || text[end] == ' ' ||
           text[end] == '\n'));
    joined += f;
    // The same frame again, as a verify sink's replay gets it.
    frame_buffer again(page_bytes);
    frame_out out = again.out();
    REQUIRE(source.expected(o, out));
    CHECK(std::string(reinterpret_cast<const char*>(again.data()), out.bytes) == f);
  }
  CHECK(joined == text);
  CHECK(produce_frame(source, *source.frame_count(), page_bytes).empty());
  const operator_counters c = source.counters();
  CHECK(c.at("bytes") == text.size());
  CHECK(c.at("file_bytes") == text.size());
  CHECK(c.at("frames") == *source.frame_count());
  std::filesystem::remove(path);
}

TEST_CASE("text_source.custom_separators_and_an_empty_file") {
  const auto path = write_temp_text("commas", "alpha,beta,gamma");
  text_source::params p;
  p.path = path.string();
  p.separators = ",";
  p.max_word_bytes = 8;
  text_source source(p);
  source.on_start(source_setup(page_bytes));
  CHECK(frame_text(source, 0, page_bytes) == "alpha,beta,gamma");

  const auto empty = write_temp_text("empty", "");
  p.path = empty.string();
  text_source none(p);
  none.on_start(source_setup(page_bytes));
  CHECK(none.frame_count() == 0);
  CHECK(produce_frame(none, 0, page_bytes).empty());
  std::filesystem::remove(path);
  std::filesystem::remove(empty);
}

TEST_CASE("text_source.names_a_word_longer_than_max_word_bytes_and_bad_settings") {
  // A 100-letter word across the first stride's end.
  std::string text = word_text(page_bytes - 80);
  const std::size_t long_word_at = text.size();
  text += std::string(100, 'q') + " tail\n";
  const auto path = write_temp_text("long", text);
  text_source::params p;
  p.path = path.string();
  p.max_word_bytes = 64;
  text_source source(p);
  source.on_start(source_setup(page_bytes));
  std::string what;
  try {
    frame_text(source, 0, page_bytes);
  } catch (const run_error& e) {
    what = e.what();
  }
  CHECK(what.find("src") != std::string::npos);
  CHECK(what.find("byte offset " + std::to_string(long_word_at)) != std::string::npos);
  CHECK(what.find("longer than max_word_bytes (64)") != std::string::npos);

  p.max_word_bytes = page_bytes;
  text_source too_small(p);
  CHECK(start_error(too_small, source_setup(page_bytes)).find("not above max_word_bytes") !=
        std::string::npos);
  p.max_word_bytes = 64;
  p.separators = "";
  text_source no_separators(p);
  CHECK(start_error(no_separators, source_setup(page_bytes)).find("separators is empty") !=
        std::string::npos);
  p.separators = " ";
  p.path = "/nonexistent/xeflow-text";
  text_source missing(p);
  CHECK(start_error(missing, source_setup(page_bytes)).find("/nonexistent/xeflow-text") != std::string::npos);
  std::filesystem::remove(path);
}
