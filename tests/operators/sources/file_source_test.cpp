// Tests of file_source: byte-exact frames for edge-case file sizes, concurrent reads, and the errors of a
// missing or truncated file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "framework/core/errors.hpp"
#include "operators/sources/file_source.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

/// Reads every frame of `path` through a file_source from `threads` threads and concatenates them.
std::vector<std::byte> stream_file(const std::string& path, std::uint64_t frame_bytes, unsigned threads,
                                   std::uint64_t* frame_count = nullptr) {
  file_source source(file_source::params{path});
  source.on_start(source_setup(frame_bytes));
  const std::uint64_t frames = source.geometry().frame_count();
  std::vector<std::vector<std::byte>> parts(frames);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::uint64_t o = t; o < frames; o += threads) parts[o] = produce_frame(source, o, frame_bytes);
    });
  }
  for (auto& th : pool) th.join();
  CHECK(produce_frame(source, frames, frame_bytes).empty());
  source.on_stop();
  std::vector<std::byte> all;
  for (std::uint64_t o = 0; o < frames; ++o) {
    if (o + 1 < frames) CHECK(parts[o].size() == frame_bytes);  // only the last frame may be short
    all.insert(all.end(), parts[o].begin(), parts[o].end());
  }
  if (frame_count) *frame_count = frames;
  return all;
}

}  // namespace

TEST_CASE("operators.file_source_byte_exact") {
  const std::uint64_t frame_bytes = page_bytes;
  struct file_case {
    std::uint64_t bytes;
    std::uint64_t frames;
  };
  for (file_case c : {file_case{0, 0}, file_case{1, 1}, file_case{4095, 1}, file_case{4096, 1},
                      file_case{frame_bytes + 1, 2}, file_case{13 * frame_bytes + 777, 14}}) {
    CAPTURE(c.bytes);
    temp_path path;
    const auto bytes = pattern_bytes(c.bytes, static_cast<std::uint32_t>(c.bytes));
    write_file(path.str(), bytes);
    std::uint64_t frames = 0;
    CHECK(stream_file(path.str(), frame_bytes, 1, &frames) == bytes);
    CHECK(frames == c.frames);
    CHECK(stream_file(path.str(), frame_bytes, 4) == bytes);
  }
}

TEST_CASE("operators.file_source_missing_file_names_the_path") {
  temp_path path;  // never created
  file_source source(file_source::params{path.str()});
  try {
    source.on_start(source_setup(page_bytes));
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(e.site().operator_name == "src");
    CHECK(std::string(e.what()).find(path.str()) != std::string::npos);
    CHECK(std::string(e.what()).find("No such file") != std::string::npos);
  }
}

TEST_CASE("operators.file_source_rejects_a_directory") {
  file_source source(file_source::params{std::filesystem::temp_directory_path().string()});
  CHECK_THROWS_AS(source.on_start(source_setup(page_bytes)), run_error);
}

TEST_CASE("operators.file_source_truncated_while_read") {
  temp_path path;
  write_file(path.str(), pattern_bytes(3 * page_bytes));
  file_source source(file_source::params{path.str()});
  source.on_start(source_setup(page_bytes));
  CHECK(produce_frame(source, 0, page_bytes).size() == page_bytes);
  REQUIRE(::truncate(path.str().c_str(), static_cast<off_t>(page_bytes + page_bytes / 2)) == 0);

  // Frame 1 now ends half way: the error names the path and the byte where the file ended.
  try {
    produce_frame(source, 1, page_bytes);
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    const std::string what = e.what();
    CHECK(e.site().operator_name == "src");
    CHECK(e.site().offset == 1);
    CHECK(what.find(path.str()) != std::string::npos);
    CHECK(what.find("byte offset " + std::to_string(page_bytes + page_bytes / 2)) != std::string::npos);
  }
  // Frame 2 is gone entirely: still an error, never an empty or short frame.
  try {
    produce_frame(source, 2, page_bytes);
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(e.site().offset == 2);
    CHECK(std::string(e.what()).find("byte offset " + std::to_string(2 * page_bytes)) != std::string::npos);
  }
  source.on_stop();
}
