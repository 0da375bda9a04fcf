// xeflow-file-kernels (apps/file_kernels): its command line's and input file's errors without a GPU (they
// are found before the GPU is touched); with one (skipped visibly without), every kernel on both inputs —
// the blocks reading through the file cache (several tiles a block, conv2d's window moved between them)
// and the pread threads slab by slab (slabs ending inside rows, GESUMMV's launch per matrix) — verified
// against the CPU reference, and a wrong output failing the check with the kernel and the index named.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/plan/device_probe.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/subprocess.hpp"

namespace {

std::string binary() {
  const char* path = std::getenv("XF_FILE_KERNELS");
  REQUIRE_MESSAGE(path != nullptr,
                  "XF_FILE_KERNELS (the xeflow-file-kernels binary) is not set; run through meson test");
  return path;
}

bool no_gpu() {
  static const bool none = !xf::probe_device().usable;
  return none;
}

const char* const kernels[] = {"conv2d", "gesummv", "mvt", "atax", "bicg"};

// Rows of 97 floats (388 bytes: reads straddle pages) and more rows than blocks.
const std::vector<std::string> shape = {"--rows", "301", "--cols", "97"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Writes `kernel`'s input file at the test shape; returns its path.
std::string generate(const xf::test::scratch_dir& dir, const std::string& kernel) {
  const std::string path = dir.file(kernel + ".f32");
  const auto r = xf::test::run_process(with({binary(), kernel, path, "--generate", "--seed", "7"}, shape));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return path;
}

}  // namespace

TEST_CASE("file_kernels.errors_before_the_gpu_say_what") {
  xf::test::scratch_dir dir;
  const auto missing = xf::test::run_process({binary(), "atax", dir.file("missing")});
  CHECK(missing.exit_code == 1);
  CHECK_MESSAGE(missing.err.find("'" + dir.file("missing") + "': cannot open") != std::string::npos,
                missing.err);

  const std::string path = generate(dir, "atax");
  CHECK(std::filesystem::file_size(path) == 301 * 97 * 4);
  const auto wrong_shape = xf::test::run_process({binary(), "atax", path, "--rows", "301", "--cols", "96"});
  CHECK(wrong_shape.exit_code == 1);
  CHECK_MESSAGE(wrong_shape.err.find("holds 116788 bytes") != std::string::npos, wrong_shape.err);
  const auto gesummv = xf::test::run_process(with({binary(), "gesummv", path}, shape));  // needs two matrices
  CHECK(gesummv.exit_code == 1);
  CHECK_MESSAGE(gesummv.err.find(path) != std::string::npos, gesummv.err);

  const auto bad_request =
      xf::test::run_process(with({binary(), "atax", path, "--input", "cpu-io", "--request", "1000"}, shape));
  CHECK(bad_request.exit_code == 2);
  CHECK_MESSAGE(bad_request.err.find("--request: a multiple of 4KiB") != std::string::npos, bad_request.err);
  const auto bad_chunk = xf::test::run_process(with({binary(), "atax", path, "--io-chunk", "6KiB"}, shape));
  CHECK(bad_chunk.exit_code == 2);
  CHECK_MESSAGE(bad_chunk.err.find("--io-chunk: a multiple of 4KiB, not '6KiB'") != std::string::npos,
                bad_chunk.err);
  const auto bad_size = xf::test::run_process(with({binary(), "atax", path, "--page", "4k"}, shape));
  CHECK(bad_size.exit_code == 2);
  CHECK_MESSAGE(bad_size.err.find("--page: a size with units") != std::string::npos, bad_size.err);
  const auto bad_kernel = xf::test::run_process({binary(), "lu", path});
  CHECK(bad_kernel.exit_code != 0);
  const auto bad_perturb =
      xf::test::run_process(with({binary(), "atax", path, "--perturb-output", "97"}, shape));
  CHECK(bad_perturb.exit_code == 2);
  CHECK_MESSAGE(bad_perturb.err.find("past the end of y") != std::string::npos, bad_perturb.err);
}

TEST_CASE("file_kernels.every_kernel_on_both_inputs_verifies_against_the_cpu_reference" *
          doctest::skip(no_gpu())) {
  xf::test::scratch_dir dir;
  const std::vector<std::string> gpu = {"--blocks", "40", "--threads", "256"};
  struct setting {
    const char* name;
    std::vector<std::string> args;
  };
  const setting settings[] = {
      // Two or three rows a block_read: several tiles a block.
      {"gpufs, small reads", {"--input", "gpufs", "--request", "1KiB", "--cache-size", "64MiB"}},
      // Tiles b, b + 40, …: the last block's tile is short, conv2d reads every tile's rows above and below.
      {"gpufs, interleaved tiles",
       {"--input", "gpufs", "--request", "1KiB", "--tile-order", "interleaved", "--cache-size", "64MiB"}},
      {"gpufs, 64KiB pages, readahead off, 64KiB preads",
       {"--input", "gpufs", "--request", "64KiB", "--page", "64KiB", "--max-request", "256KiB", "--io-chunk",
        "64KiB", "--readahead-mode", "off", "--cache-size", "256MiB", "--io-threads", "2"}},
      // Slabs of two requests: they end inside rows.
      {"cpu-io, 1 thread", {"--input", "cpu-io", "--io-threads", "1", "--request", "4KiB", "--slab", "8KiB"}},
      {"cpu-io, 4 threads",
       {"--input", "cpu-io", "--io-threads", "4", "--request", "4KiB", "--slab", "12KiB"}},
  };
  for (const char* kernel : kernels) {
    const std::string path = generate(dir, kernel);
    const std::uint64_t bytes = (std::string(kernel) == "gesummv" ? 2 : 1) * 301 * 97 * 4;
    for (const setting& s : settings) {
      CAPTURE(kernel);
      CAPTURE(s.name);
      const auto r = xf::test::run_process(
          with(with(with({binary(), kernel, path, "--seed", "7", "--json"}, shape), gpu), s.args));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto doc = nlohmann::json::parse(r.out);
      CHECK(doc["verified"] == true);
      CHECK(doc["kernel"] == kernel);
      CHECK(doc["bytes"] == bytes);
      CHECK(doc["seconds"].get<double>() > 0);
      CHECK(doc["elements_checked"].get<std::uint64_t>() > 0);
    }
  }
}

TEST_CASE("file_kernels.blocks_read_ahead_only_within_their_own_rows" * doctest::skip(no_gpu())) {
  // Readahead `on` fetches 16 pages after every miss. Each of the 40 blocks' bands of rows is a page or
  // two of the file, so a block that read ahead past its band's end would fetch the next blocks' pages
  // (about 450 pages in all). Stopped at the band's end, the pages a block reads ahead lie in its band
  // (and conv2d's row below it): at most the file's pages and a few per block.
  xf::test::scratch_dir dir;
  constexpr std::uint64_t blocks = 40;
  for (const char* kernel : kernels) {
    CAPTURE(kernel);
    const std::string path = generate(dir, kernel);
    const std::uint64_t bytes = (std::string(kernel) == "gesummv" ? 2 : 1) * 301 * 97 * 4;
    const std::uint64_t file_pages = (bytes + 4095) / 4096;
    for (const char* order : {"blocked", "interleaved"}) {
      CAPTURE(order);
      const auto r = xf::test::run_process(with({binary(),
                                                 kernel,
                                                 path,
                                                 "--seed",
                                                 "7",
                                                 "--json",
                                                 "--input",
                                                 "gpufs",
                                                 "--blocks",
                                                 std::to_string(blocks),
                                                 "--threads",
                                                 "256",
                                                 "--request",
                                                 "1KiB",
                                                 "--page",
                                                 "4KiB",
                                                 "--readahead",
                                                 "64KiB",
                                                 "--readahead-mode",
                                                 "on",
                                                 "--tile-order",
                                                 order,
                                                 "--cache-size",
                                                 "64MiB"},
                                                shape));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto doc = nlohmann::json::parse(r.out);
      CHECK(doc["verified"] == true);
      const auto ahead = doc["ahead_pages"].get<std::uint64_t>();
      CHECK(ahead > 0);
      CHECK(ahead <= file_pages + 3 * blocks);
    }
  }
}

TEST_CASE("file_kernels.a_wrong_output_fails_naming_the_kernel_and_the_index" * doctest::skip(no_gpu())) {
  xf::test::scratch_dir dir;
  struct wrong {
    const char* kernel;
    const char* index;
    const char* named;
  };
  const wrong cases[] = {{"atax", "5", "atax: y[5] is "},
                         {"conv2d", "200", "conv2d: B[2][6] is "},
                         {"gesummv", "300", "gesummv: y[300] is "}};
  for (const wrong& w : cases) {
    const std::string path = generate(dir, w.kernel);
    for (const char* input : {"gpufs", "cpu-io"}) {
      CAPTURE(w.kernel);
      CAPTURE(input);
      const auto r = xf::test::run_process(
          with({binary(), w.kernel, path, "--seed", "7", "--input", input, "--request", "4KiB",
                "--cache-size", "64MiB", "--blocks", "40", "--perturb-output", w.index},
               shape));
      CHECK(r.exit_code == 1);
      CHECK_MESSAGE(r.err.find(w.named) != std::string::npos, r.err);
    }
  }
}
