// Tests of file_sink: frames written out of order from several threads give the exact file; a short frame
// that is not the last is rejected.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "framework/core/errors.hpp"
#include "operators/sinks/file_sink.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

void write_frame(file_sink& sink, const std::vector<std::byte>& stream, std::uint64_t frame_bytes,
                 std::uint64_t offset) {
  const std::uint64_t first = offset * frame_bytes;
  const std::uint64_t bytes = std::min(frame_bytes, stream.size() - first);
  sink.on_frame(offset, frame_in{stream.data() + first, bytes, element_type::u8});
}

}  // namespace

TEST_CASE("operators.file_sink_out_of_order_threads_exact_file") {
  const std::uint64_t frame_bytes = 2 * page_bytes;
  for (std::uint64_t total : {std::uint64_t{0}, 3 * frame_bytes, 29 * frame_bytes + 5}) {
    CAPTURE(total);
    temp_path path;
    write_file(path.str(), pattern_bytes(100 * frame_bytes, 1));  // older, longer content must vanish
    const auto stream = pattern_bytes(total, 7);
    const std::uint64_t frames = (total + frame_bytes - 1) / frame_bytes;
    std::vector<std::uint64_t> order(frames);
    for (std::uint64_t o = 0; o < frames; ++o) order[o] = o;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(total));

    file_sink sink(file_sink::params{path.str()});
    sink.on_start(sink_setup(frame_bytes));
    constexpr unsigned threads = 4;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (std::uint64_t i = t; i < frames; i += threads) write_frame(sink, stream, frame_bytes, order[i]);
      });
    }
    for (auto& th : pool) th.join();
    sink.on_stop();
    const bool visible = std::filesystem::exists(path.str()) && read_file(path.str()) == stream;
    CHECK_FALSE(visible);  // not before on_commit
    sink.on_commit();
    CHECK(read_file(path.str()) == stream);
    CHECK_FALSE(std::filesystem::exists(path.str() + ".partial"));
    CHECK(sink.counters().at("frames") == frames);
    CHECK(sink.counters().at("bytes") == total);
  }
}

TEST_CASE("operators.file_sink_short_frame_not_last_rejected") {
  const std::uint64_t frame_bytes = page_bytes;
  const auto full = pattern_bytes(frame_bytes);
  const std::vector<std::byte> part(full.begin(), full.begin() + 100);

  SUBCASE("short frame arrives first") {
    temp_path path;
    file_sink sink(file_sink::params{path.str()});
    sink.on_start(sink_setup(frame_bytes));
    sink.on_frame(1, frame_in{part.data(), part.size(), element_type::u8});
    try {
      sink.on_frame(2, frame_in{full.data(), full.size(), element_type::u8});
      FAIL("expected a run_error");
    } catch (const run_error& e) {
      CHECK(e.site().offset == 1);
      CHECK(std::string(e.what()).find(path.str()) != std::string::npos);
    }
    CHECK_THROWS_AS(sink.on_stop(), run_error);
  }
  SUBCASE("short frame arrives after a later offset") {
    temp_path path;
    file_sink sink(file_sink::params{path.str()});
    sink.on_start(sink_setup(frame_bytes));
    sink.on_frame(3, frame_in{full.data(), full.size(), element_type::u8});
    try {
      sink.on_frame(1, frame_in{part.data(), part.size(), element_type::u8});
      FAIL("expected a run_error");
    } catch (const run_error& e) {
      CHECK(e.site().offset == 1);
    }
  }
  SUBCASE("a short last frame is fine") {
    temp_path path;
    file_sink sink(file_sink::params{path.str()});
    sink.on_start(sink_setup(frame_bytes));
    sink.on_frame(1, frame_in{part.data(), part.size(), element_type::u8});
    sink.on_frame(0, frame_in{full.data(), full.size(), element_type::u8});
    sink.on_stop();
    sink.on_commit();
    auto want = full;
    want.insert(want.end(), part.begin(), part.end());
    CHECK(read_file(path.str()) == want);
  }
}

TEST_CASE("operators.file_sink_unwritable_path_names_it") {
  file_sink sink(file_sink::params{"/nonexistent-dir-xeflow/out.bin"});
  try {
    sink.on_start(sink_setup(page_bytes));
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(std::string(e.what()).find("/nonexistent-dir-xeflow/out.bin") != std::string::npos);
  }
}

TEST_CASE("operators.file_sink_names_the_first_missing_offset") {
  // Offsets 0, 1 and 3 of a stream whose end is 4: offset 2 was never written (two sources of different
  // lengths on one topic leave such holes). The file stays partial.
  const std::uint64_t frame_bytes = page_bytes;
  const auto full = pattern_bytes(frame_bytes);
  temp_path path;
  file_sink sink(file_sink::params{path.str()});
  sink.on_start(sink_setup(frame_bytes));
  for (std::uint64_t o : {0, 1, 3}) sink.on_frame(o, frame_in{full.data(), full.size(), element_type::u8});
  try {
    sink.on_stop();
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(e.site().offset == 2);
    CHECK(std::string(e.what()).find("offset 2 (bytes " + std::to_string(2 * frame_bytes) + " to " +
                                     std::to_string(3 * frame_bytes) + ") was never written: 1 of the 4") !=
          std::string::npos);
    CHECK(std::string(e.what()).find(path.str() + ".partial") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(path.str()));
  CHECK(std::filesystem::exists(path.str() + ".partial"));
  std::filesystem::remove(path.str() + ".partial");
}

TEST_CASE("operators.file_sink_cut_short_keeps_the_partial_file") {
  // An interrupted run calls on_stop but never on_commit: the output stays under .partial, holes allowed.
  const std::uint64_t frame_bytes = page_bytes;
  const auto full = pattern_bytes(frame_bytes);
  temp_path path;
  std::atomic<bool> interrupted{true};
  operator_setup setup = sink_setup(frame_bytes);
  setup.interrupted = &interrupted;
  {
    file_sink sink(file_sink::params{path.str()});
    sink.on_start(setup);
    sink.on_frame(1, frame_in{full.data(), full.size(), element_type::u8});
    sink.on_stop();
  }
  CHECK_FALSE(std::filesystem::exists(path.str()));
  CHECK(std::filesystem::file_size(path.str() + ".partial") == 2 * frame_bytes);
  std::filesystem::remove(path.str() + ".partial");
}

TEST_CASE("operators.file_sink_writes_a_device_in_place") {
  // /dev/null cannot be truncated or renamed over: written in place, no .partial beside it.
  const auto full = pattern_bytes(page_bytes);
  file_sink ok(file_sink::params{"/dev/null"});
  ok.on_start(sink_setup(page_bytes));
  ok.on_frame(0, frame_in{full.data(), full.size(), element_type::u8});
  ok.on_stop();
  ok.on_commit();
  CHECK_FALSE(std::filesystem::exists("/dev/null.partial"));
}

TEST_CASE("operators.file_sink_writes_a_fifo_in_order_from_one_thread") {
  const std::filesystem::path fifo =
      std::filesystem::temp_directory_path() / ("xeflow-sink-fifo-" + std::to_string(::getpid()));
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto full = pattern_bytes(page_bytes, 3);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    got.assign(std::istreambuf_iterator<char>(in), {});
  });
  {
    file_sink sink(file_sink::params{fifo.string()});
    sink.on_start(sink_setup(page_bytes));
    sink.on_frame(0, frame_in{full.data(), full.size(), element_type::u8});
    sink.on_frame(1, frame_in{full.data(), 100, element_type::u8});
    sink.on_stop();
    sink.on_commit();
  }
  reader.join();
  CHECK(got.size() == page_bytes + 100);
  CHECK(std::memcmp(got.data(), full.data(), page_bytes) == 0);

  // Several threads would deliver out of order: refused at start.
  operator_setup two = sink_setup(page_bytes);
  two.threads = 2;
  std::thread drain([&] { std::ifstream(fifo, std::ios::binary).get(); });
  {
    file_sink sink(file_sink::params{fifo.string()});
    CHECK_THROWS_WITH_AS(sink.on_start(two), doctest::Contains("give this file sink threads: 1, not 2"),
                         run_error);
  }
  drain.join();
  std::filesystem::remove(fifo);
}
