// Result files: written a buffer at a time, renamed over the path when whole, and left partial (named in
// the error) when a write fails.
#include "operators/sinks/result_file.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "framework/core/fault_injection.hpp"

namespace xf {
namespace {

std::string read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Writes `lines` numbered lines through a writer, flushing as formatting would.
void write_lines(result_file_writer& out, int lines, std::string& expected) {
  for (int i = 0; i < lines; ++i) {
    const std::string line = std::to_string(i) + ",some text of the row\n";
    out.buffer() += line;
    expected += line;
    out.flush_if_full();
  }
}

}  // namespace

TEST_CASE("result_file.a_result_larger_than_its_buffer_is_written_whole_and_renamed") {
  const auto path =
      std::filesystem::temp_directory_path() / ("xeflow-result-" + std::to_string(::getpid()) + ".csv");
  path_text p;
  REQUIRE(std::string(parse_path_text(path.string(), p)).empty());
  std::string expected;
  {
    result_file_writer out(p);
    write_lines(out, 200000, expected);  // about 5 MiB: several buffers
    REQUIRE(expected.size() > 4 * result_file_writer::buffer_bytes);
    CHECK(!std::filesystem::exists(path));  // nothing under the name before commit
    out.commit();
  }
  CHECK(read_whole(path) == expected);
  CHECK(!std::filesystem::exists(path.string() + ".partial"));
  std::filesystem::remove(path);
}

TEST_CASE("result_file.a_failed_write_past_the_first_buffer_leaves_the_bytes_before_it") {
  const auto path =
      std::filesystem::temp_directory_path() / ("xeflow-result-fail-" + std::to_string(::getpid()) + ".csv");
  path_text p;
  REQUIRE(std::string(parse_path_text(path.string(), p)).empty());
  const std::uint64_t at = result_file_writer::buffer_bytes * 3 / 2;  // inside the second buffer written
  inject::arm("sink_write:enospc@" + std::to_string(at));
  std::string expected;
  std::string message;
  try {
    result_file_writer out(p);
    write_lines(out, 200000, expected);
    out.commit();
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  inject::arm("");
  CHECK(message.find("write failed at byte offset " + std::to_string(at)) != std::string::npos);
  CHECK(message.find("No space left on device") != std::string::npos);
  CHECK(message.find(path.string() + ".partial") != std::string::npos);
  CHECK(!std::filesystem::exists(path));
  CHECK(read_whole(path.string() + ".partial") == expected.substr(0, at));
  std::filesystem::remove(path.string() + ".partial");
}

}  // namespace xf
