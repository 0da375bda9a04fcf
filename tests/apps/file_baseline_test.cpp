// The file benchmarks' programs (apps/file_baseline): xeflow-file-baseline and xeflow-file-read — their
// command lines' and runs' errors without a GPU; with one (skipped visibly without), files of odd sizes
// read into device memory (the baseline by 1 and 4 threads, buffered and O_DIRECT; the microbenchmark by
// blocks reading their strides through the file cache, with and without readahead, 4 KiB and 64 KiB
// pages, LRA and global; or by blocks following data-dependent chains of random reads), and the device's
// checksum equal to the file's. The random pattern's chain (read_chain.hpp) is checked on the host too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "apps/file_baseline/read_chain.hpp"
#include "framework/plan/device_probe.hpp"
#include "tests/framework/files/pattern_file.hpp"
#include "tests/support/subprocess.hpp"

namespace {

std::string binary() {
  const char* path = std::getenv("XF_FILE_BASELINE");
  REQUIRE_MESSAGE(path != nullptr,
                  "XF_FILE_BASELINE (the xeflow-file-baseline binary) is not set; run through meson test");
  return path;
}

std::string read_binary() {
  const char* path = std::getenv("XF_FILE_READ");
  REQUIRE_MESSAGE(path != nullptr,
                  "XF_FILE_READ (the xeflow-file-read binary) is not set; run through meson test");
  return path;
}

bool no_gpu() {
  static const bool none = !xf::probe_device().usable;
  return none;
}

/// What xeflow-file-read --pattern random must report for `data`: the test's own walk of every block's
/// chain over the bytes in memory (each read's words summed, a short read zero-padded), and the bytes read.
struct chain_expectation {
  std::uint64_t sum = 0;
  std::uint64_t bytes = 0;
};

chain_expectation walk_chains(const std::vector<std::byte>& data, std::uint32_t blocks, std::uint32_t reads,
                              std::uint64_t request, std::uint64_t page) {
  using namespace xf::file_baseline;
  chain_expectation e;
  const std::uint64_t size = data.size();
  for (std::uint32_t block = 0; block < blocks; ++block) {
    std::uint64_t at = chain_first_offset(block, size, page);
    for (std::uint32_t step = 0; step < reads; ++step) {
      const std::uint64_t n = chain_read_bytes(at, size, request);
      std::uint64_t first = 0;
      for (std::uint64_t w = 0; w < (n + 7) / 8; ++w) {
        std::uint64_t word = 0;
        std::memcpy(&word, data.data() + at + 8 * w, std::min<std::uint64_t>(8, n - 8 * w));
        if (w == 0) first = word;
        e.sum += word;
      }
      e.bytes += n;
      at = chain_next_offset(first, block, step, size, request);
    }
  }
  return e;
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
        const auto r = xf::test::run_process(
            {binary(), file, "--threads", threads, "--request", "256KiB", "--direct", direct, "--json"});
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
  CHECK_MESSAGE(bad_request.err.find("a request of a multiple of 8 bytes") != std::string::npos,
                bad_request.err);
  const auto bad_page = xf::test::run_process({read_binary(), file, "--page", "4k"});
  CHECK(bad_page.exit_code == 2);
  CHECK_MESSAGE(bad_page.err.find("--page: a size with units") != std::string::npos, bad_page.err);
  const auto reads_of_stride = xf::test::run_process({read_binary(), file, "--reads", "5"});
  CHECK(reads_of_stride.exit_code == 2);
  CHECK_MESSAGE(reads_of_stride.err.find("--reads: only with --pattern random") != std::string::npos,
                reads_of_stride.err);
  const auto bad_pattern = xf::test::run_process({read_binary(), file, "--pattern", "zigzag"});
  CHECK(bad_pattern.exit_code != 0);
  CHECK_MESSAGE(bad_pattern.err.find("--pattern") != std::string::npos, bad_pattern.err);
  const auto missing = xf::test::run_process({read_binary(), dir.file("missing")});
  CHECK(missing.exit_code == 1);
  CHECK_MESSAGE(missing.err.find(dir.file("missing") + "': cannot open") != std::string::npos, missing.err);
}

TEST_CASE("file_read: a random chain starts on a page and stays on whole requests inside the file") {
  using namespace xf::file_baseline;
  constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
  for (const std::uint64_t size :
       {std::uint64_t{1}, 4 * KiB - 1, 4 * KiB, 4 * KiB + 1, 64 * MiB + 123, 10 * GiB}) {
    for (const std::uint64_t request : {std::uint64_t{8}, 4 * KiB, 64 * KiB, MiB}) {
      for (const std::uint64_t page : {4 * KiB, 64 * KiB}) {
        CAPTURE(size);
        CAPTURE(request);
        CAPTURE(page);
        for (std::uint32_t block = 0; block < 130; ++block) {
          const std::uint64_t first = chain_first_offset(block, size, page);
          CHECK(first % page == 0);
          CHECK((first == 0 || first + page <= size));
          CHECK(chain_read_bytes(first, size, request) == std::min(request, size - first));
          std::uint64_t word = 0x0123456789abcdefull * (block + 1);
          for (std::uint32_t step = 0; step < 50; ++step) {
            const std::uint64_t next = chain_next_offset(word, block, step, size, request);
            REQUIRE(next % request == 0);
            if (size >= request) {
              REQUIRE(next + request <= size);
              REQUIRE(chain_read_bytes(next, size, request) == request);
            } else {
              REQUIRE(next == 0);
              REQUIRE(chain_read_bytes(next, size, request) == size);
            }
            word = chain_mix(word + step);
          }
        }
      }
    }
  }
}

TEST_CASE("file_read: a random chain's next offset depends on the word read, the block and the step") {
  using namespace xf::file_baseline;
  constexpr std::uint64_t size = std::uint64_t{10} << 30, request = 4096;
  // The word: flipping any one of its bits moves the next read (a prefetcher cannot know it without the
  // data, and a wrong byte on the device sends its chain elsewhere).
  int same = 0;
  for (std::uint64_t word = 1; word < 200; ++word) {
    const std::uint64_t next = chain_next_offset(word * 0x9e3779b97f4a7c15ull, 7, 3, size, request);
    for (int bit = 0; bit < 64; ++bit)
      same += chain_next_offset((word * 0x9e3779b97f4a7c15ull) ^ (1ull << bit), 7, 3, size, request) == next;
  }
  CHECK(same <= 2);  // 12 736 pairs over 2.6 M requests: a collision or two at most, by chance
  // The block and the step: blocks reading a file of one repeated word still spread over it and never
  // cycle.
  std::set<std::uint64_t> seen;
  for (std::uint32_t block = 0; block < 120; ++block) {
    std::uint64_t at = chain_first_offset(block, size, 4096);
    for (std::uint32_t step = 0; step < 100; ++step) {
      seen.insert(at / request);
      at = chain_next_offset(0, block, step, size, request);
    }
  }
  CHECK(seen.size() >= 11900);  // of 12 000 reads over 2.6 M requests, birthday repeats only
  std::set<std::uint64_t> firsts;
  for (std::uint32_t block = 0; block < 120; ++block) firsts.insert(chain_first_offset(block, size, 4096));
  CHECK(firsts.size() == 120);
}

TEST_CASE("file_read: the walk of the chains over a file's bytes sees a change on its path") {
  // The check the GPU case makes: the host walks the chains over the file itself; a byte changed in a word
  // a chain reads first changes the sum (and, through the next offset, the rest of the chain).
  const std::vector<std::byte> data = xf::test::pattern(3, (4 << 20) + 123);
  const chain_expectation e = walk_chains(data, 40, 64, 4096, 4096);
  CHECK(e.bytes == 40ull * 64 * 4096);
  const std::uint64_t first = xf::file_baseline::chain_first_offset(5, data.size(), 4096);
  std::vector<std::byte> changed = data;
  changed[first + 2] ^= std::byte{0x10};
  const chain_expectation c = walk_chains(changed, 40, 64, 4096, 4096);
  CHECK(c.sum != e.sum);
  CHECK(c.bytes == e.bytes);
  // A file shorter than a request: every read is the whole file.
  const std::vector<std::byte> tiny = xf::test::pattern(3, 4097);
  CHECK(walk_chains(tiny, 3, 5, 8192, 4096).bytes == 3ull * 5 * 4097);
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
  for (const std::uint64_t size :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4097}, std::uint64_t{(16 << 20) + 123}}) {
    const std::string file = xf::test::write_pattern_file(dir, "data" + std::to_string(size), 3, size);
    for (const setting& s : settings) {
      CAPTURE(size);
      CAPTURE(s.request);
      CAPTURE(s.page);
      CAPTURE(s.readahead_mode);
      CAPTURE(s.replacement);
      const auto r =
          xf::test::run_process({read_binary(), file, "--blocks", "40", "--threads", "256", "--request",
                                 s.request, "--page", s.page, "--readahead-mode", s.readahead_mode,
                                 "--replacement", s.replacement, "--cache-size", "64MiB", "--json"});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto doc = nlohmann::json::parse(r.out);
      CHECK(doc["verified"] == true);
      CHECK(doc["bytes"] == size);
      if (size > (1 << 20) && std::string(s.readahead_mode) == "on" && std::string(s.request) == "4KiB")
        CHECK(doc["ahead_hits"].get<std::uint64_t>() > 0);  // each block's stride is read sequentially
      if (std::string(s.readahead_mode) == "on" && std::string(s.request) == "4KiB")
        // A block reads ahead no further than its stride's end: every page it fetched ahead is one it reads.
        CHECK(doc["ahead_hits"] == doc["ahead_pages"]);
      if (std::string(s.readahead_mode) == "off") CHECK(doc["ahead_pages"] == 0);
    }
  }
}

TEST_CASE("file_read: blocks following data-dependent chains of random reads verify against the host's walk" *
          doctest::skip(no_gpu())) {
  xf::test::scratch_dir dir;
  struct setting {
    const char* request;
    std::uint64_t request_bytes;
    const char* page;
    std::uint64_t page_bytes;
    const char* readahead_mode;
  };
  const setting settings[] = {{"4KiB", 4096, "4KiB", 4096, "off"},
                              {"4KiB", 4096, "4KiB", 4096, "on"},
                              {"4KiB", 4096, "4KiB", 4096, "adaptive"},
                              {"4KiB", 4096, "64KiB", 65536, "off"},
                              {"64KiB", 65536, "4KiB", 4096, "adaptive"}};
  constexpr std::uint32_t blocks = 40, reads = 200;
  for (const std::uint64_t size : {std::uint64_t{1}, std::uint64_t{4097}, std::uint64_t{(16 << 20) + 123}}) {
    const std::string file = xf::test::write_pattern_file(dir, "data" + std::to_string(size), 3, size);
    const std::vector<std::byte> data = xf::test::pattern(3, size);
    std::uint64_t ahead_on = 0, ahead_adaptive = 0;
    for (const setting& s : settings) {
      CAPTURE(size);
      CAPTURE(s.request);
      CAPTURE(s.page);
      CAPTURE(s.readahead_mode);
      const auto r = xf::test::run_process(
          {read_binary(), file, "--pattern", "random", "--reads", std::to_string(reads), "--blocks",
           std::to_string(blocks), "--threads", "256", "--request", s.request, "--page", s.page,
           "--readahead-mode", s.readahead_mode, "--cache-size", "64MiB", "--json"});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto doc = nlohmann::json::parse(r.out);
      const chain_expectation e = walk_chains(data, blocks, reads, s.request_bytes, s.page_bytes);
      CHECK(doc["pattern"] == "random");
      CHECK(doc["verified"] == true);
      CHECK(doc["bytes"] == e.bytes);
      CHECK(doc["device_checksum"] == e.sum);  // the test's own walk, not only the tool's
      if (std::string(s.readahead_mode) == "off") CHECK(doc["ahead_pages"] == 0);
      if (s.request_bytes == 4096 && s.page_bytes == 4096) {
        if (std::string(s.readahead_mode) == "on") ahead_on = doc["ahead_pages"].get<std::uint64_t>();
        if (std::string(s.readahead_mode) == "adaptive")
          ahead_adaptive = doc["ahead_pages"].get<std::uint64_t>();
      }
    }
    // Adaptive readahead sees the jumps and stays off where `on` fetches ahead on every miss.
    if (size > (1 << 20)) {
      CHECK(ahead_on > 0);
      CHECK(ahead_adaptive < ahead_on);
    }
  }
}
