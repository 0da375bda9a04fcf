// The file benchmarks' programs (apps/file_baseline): xeflow-file-baseline and xeflow-file-read — their
// command lines' and runs' errors without a GPU; with one (skipped visibly without), files of odd sizes
// read into device memory (the baseline by 1 and 4 threads, buffered and O_DIRECT; the microbenchmark by
// blocks reading their strides through the file cache, with and without readahead, 4 KiB and 64 KiB
// pages, LRA and global), and the device's checksum equal to the file's.
#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/device_probe.hpp"
#include "tests/framework/files/pattern_file.hpp"
#include "tests/support/subprocess.hpp"

namespace {

std::string binary() {
  const char* path = std::getenv("XF_FILE_BASELINE");
  REQUIRE_MESSAGE(path != nullptr, "XF_FILE_BASELINE (the xeflow-file-baseline binary) is not set; run through meson test");
  return path;
}

std::string read_binary() {
  const char* path = std::getenv("XF_FILE_READ");
  REQUIRE_MESSAGE(path != nullptr, "XF_FILE_READ (the xeflow-file-read binary) is not set; run through meson test");
  return path;
}

bool no_gpu() {
  static const bool none = !xf::probe_device().usable;
  return none;
}

}  // namespace

TEST_CASE("file_baseline: bad settings and a missing file are errors that say what") {
  xf::test::scratch_dir dir;
  const std::string file = xf::test::write_pattern_file(dir, "data", 1, 10000);
  const auto bad_request = xf::test::run_process({binary(), file, "--request", "1000"});
  CHECK(bad_request.exit_code == 2);
  CHECK(bad_request.err.find("--request: a multiple of 4KiB, not '1000'") != std::string::npos);
  const auto bad_threads = xf::test::run_process({binary(), file, "--threads", "0"});
  CHECK(bad_threads.exit_code != 0);
  const auto missing = xf::test::run_process({binary(), dir.file("missing")});
  CHECK(missing.exit_code == 1);
  CHECK_MESSAGE(missing.err.find(dir.file("missing") + "': cannot open") != std::string::npos, missing.err);
}

TEST_CASE("file_baseline: files read into GPU memory verify against the file" * doctest::skip(no_gpu())) {
  xf::test::scratch_dir dir;
  for (const std::uint64_t size : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{(64 << 20) + 123}}) {
    const std::string file = xf::test::write_pattern_file(dir, "data" + std::to_string(size), 2, size);
    for (const char* threads : {"1", "4"}) {
      for (const char* direct : {"off", "auto"}) {
        CAPTURE(size);
        CAPTURE(threads);
        CAPTURE(direct);
        const auto r = xf::test::run_process({binary(), file, "--threads", threads, "--request", "256KiB", "--direct",
                                              direct, "--json"});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto doc = nlohmann::json::parse(r.out);
        CHECK(doc["verified"] == true);
        CHECK(doc["bytes"] == size);
        CHECK(doc["device_checksum"] == doc["file_checksum"]);
      }
    }
  }
}

TEST_CASE("file_read: bad settings and a missing file are errors that say what") {
  xf::test::scratch_dir dir;
  const std::string file = xf::test::write_pattern_file(dir, "data", 1, 10000);
  const auto bad_request = xf::test::run_process({read_binary(), file, "--request", "12"});
  CHECK(bad_request.exit_code == 2);
  CHECK_MESSAGE(bad_request.err.find("a request of a multiple of 8 bytes") != std::string::npos, bad_request.err);
  const auto bad_page = xf::test::run_process({read_binary(), file, "--page", "4k"});
  CHECK(bad_page.exit_code == 2);
  CHECK_MESSAGE(bad_page.err.find("--page: a size with units") != std::string::npos, bad_page.err);
  const auto missing = xf::test::run_process({read_binary(), dir.file("missing")});
  CHECK(missing.exit_code == 1);
  CHECK_MESSAGE(missing.err.find(dir.file("missing") + "': cannot open") != std::string::npos, missing.err);
}

TEST_CASE("file_read: blocks reading their strides through the file cache verify against the file" *
          doctest::skip(no_gpu())) {
  xf::test::scratch_dir dir;
  struct setting {
    const char* request;
    const char* page;
    const char* readahead_mode;
    const char* replacement;
  };
  const setting settings[] = {{"4KiB", "4KiB", "off", "lra"},
                              {"4KiB", "4KiB", "on", "lra"},
                              {"64KiB", "64KiB", "off", "lra"},
                              {"1MiB", "4KiB", "on", "global"}};
  for (const std::uint64_t size : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4097}, std::uint64_t{(16 << 20) + 123}}) {
    const std::string file = xf::test::write_pattern_file(dir, "data" + std::to_string(size), 3, size);
    for (const setting& s : settings) {
      CAPTURE(size);
      CAPTURE(s.request);
      CAPTURE(s.page);
      CAPTURE(s.readahead_mode);
      CAPTURE(s.replacement);
      const auto r = xf::test::run_process({read_binary(), file, "--blocks", "40", "--threads", "256", "--request",
                                            s.request, "--page", s.page, "--readahead-mode", s.readahead_mode,
                                            "--replacement", s.replacement, "--cache-size", "64MiB", "--json"});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto doc = nlohmann::json::parse(r.out);
      CHECK(doc["verified"] == true);
      CHECK(doc["bytes"] == size);
      if (size > (1 << 20) && std::string(s.readahead_mode) == "on" && std::string(s.request) == "4KiB")
        CHECK(doc["ahead_hits"].get<std::uint64_t>() > 0);  // each block's stride is read sequentially
      if (std::string(s.readahead_mode) == "off") CHECK(doc["ahead_pages"] == 0);
    }
  }
}
