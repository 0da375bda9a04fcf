// Tests of verify_sink against a replayed sequence stream: a clean run from many threads, and each kind of
// anomaly counted and reported with its offset.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>

#include "framework/errors.hpp"
#include "operators/sinks/verify_sink.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

/// A verify sink over a sequence stream of `frames` frames (the last one short), with the frames the
/// reference says each offset holds, ready to be fed.
struct verify_fixture {
  static constexpr std::uint64_t frame_bytes = page_bytes;
  explicit verify_fixture(std::uint64_t frames, std::uint32_t threads = 1)
      : total(frames * frame_bytes - frame_bytes / 2),
        reference(total, frame_bytes, element_type::u32, 9),
        sink(verify_sink::params{}) {
    operator_setup setup = sink_setup(frame_bytes, &reference, element_type::u32, threads);
    setup.interrupted = &interrupted;
    sink.on_start(setup);
  }
  std::vector<std::byte> frame(std::uint64_t offset) const {
    frame_buffer buffer(frame_bytes, element_type::u32);
    frame_out out = buffer.out();
    REQUIRE(reference.expected(offset, out));
    return {buffer.data(), buffer.data() + out.bytes};
  }
  void feed(std::uint64_t offset, const std::vector<std::byte>& bytes) {
    sink.on_frame(offset, frame_in{bytes.data(), bytes.size(), element_type::u32});
  }
  void feed(std::uint64_t offset) { feed(offset, frame(offset)); }
  /// on_stop's error message, or empty when it did not throw; `site_offset` gets the error's offset.
  std::string stop(std::optional<std::uint64_t>* site_offset = nullptr) {
    try {
      sink.on_stop();
    } catch (const run_error& e) {
      CHECK(e.site().operator_name == "sink");
      CHECK(e.site().topic == "in");
      if (site_offset) *site_offset = e.site().offset;
      return e.what();
    }
    return {};
  }

  std::uint64_t total;
  sequence_reference reference;
  verify_sink sink;
  std::atomic<bool> interrupted{false};  ///< the run's SIGINT flag, as the executor hands it over
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("operators.verify_sink_finds_the_reference_end") {
  for (std::uint64_t frames : {1, 2, 3, 17, 64, 65, 1000}) {
    CAPTURE(frames);
    verify_fixture f(frames);
    CHECK(f.sink.reference_end() == frames);
  }
  sequence_reference empty(0, page_bytes);
  verify_sink sink(verify_sink::params{});
  sink.on_start(sink_setup(page_bytes, &empty));
  CHECK(sink.reference_end() == 0);
  CHECK_NOTHROW(sink.on_stop());
}

TEST_CASE("operators.verify_sink_clean_stream_from_threads") {
  constexpr std::uint64_t frames = 200;
  constexpr unsigned threads = 4;
  verify_fixture f(frames, threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    // Each thread gets increasing offsets, as a subscriber group's workers do.
    pool.emplace_back([&, t] {
      for (std::uint64_t o = t; o < frames; o += threads) f.feed(o);
    });
  }
  for (auto& th : pool) th.join();
  CHECK(f.stop().empty());
  const operator_counters c = f.sink.counters();
  CHECK(c.at("frames") == frames);
  CHECK(c.at("bytes") == f.total);
  CHECK(c.at("lost") == 0);
  CHECK(c.at("duplicated") == 0);
  CHECK(c.at("reordered") == 0);
  CHECK(c.at("corrupt") == 0);
  CHECK(c.size() == 6);
}

TEST_CASE("operators.verify_sink_counts_a_corrupt_frame") {
  verify_fixture f(10);
  for (std::uint64_t o = 0; o < 10; ++o) {
    auto bytes = f.frame(o);
    if (o == 7) bytes[100] ^= std::byte{1};
    f.feed(o, bytes);
  }
  std::optional<std::uint64_t> at;
  const std::string what = f.stop(&at);
  CHECK(at == 7);
  CHECK(contains(what, "offset 7: crc 0x"));
  CHECK(contains(what, "expected 0x"));
  CHECK(contains(what, "first difference at byte 100"));
  CHECK(f.sink.counters().at("corrupt") == 1);
  CHECK(f.sink.counters().at("lost") == 0);
}

TEST_CASE("operators.verify_sink_counts_wrong_length_and_misplaced_content") {
  verify_fixture f(6);
  f.feed(0);
  f.feed(1, f.frame(2));  // another offset's content
  auto short_frame = f.frame(2);
  short_frame.resize(short_frame.size() - 4);
  f.feed(2, short_frame);
  f.feed(3);
  f.feed(4);
  f.feed(5);
  f.feed(6, f.frame(5));  // past the reference's end
  std::optional<std::uint64_t> at;
  const std::string what = f.stop(&at);
  CHECK(at == 1);
  CHECK(f.sink.counters().at("corrupt") == 3);
  CHECK(contains(what, "3 corrupt"));
  CHECK(contains(what, "stream ends at offset 6"));
}

TEST_CASE("operators.verify_sink_counts_a_duplicate") {
  verify_fixture f(8, 2);
  std::thread a([&] {
    for (std::uint64_t o : {0, 2, 4, 6}) f.feed(o);
  });
  std::thread b([&] {
    for (std::uint64_t o : {1, 3, 4, 5, 7}) f.feed(o);  // 4 again, on the other thread
  });
  a.join();
  b.join();
  std::optional<std::uint64_t> at;
  const std::string what = f.stop(&at);
  CHECK(at == 4);
  CHECK(contains(what, "offset 4 delivered again"));
  const auto c = f.sink.counters();
  CHECK(c.at("duplicated") == 1);
  CHECK(c.at("reordered") == 0);
  CHECK(c.at("corrupt") == 0);
  CHECK(c.at("frames") == 9);
}

TEST_CASE("operators.verify_sink_counts_a_skipped_offset") {
  verify_fixture f(10);
  for (std::uint64_t o = 0; o < 10; ++o) {
    if (o != 3) f.feed(o);
  }
  std::optional<std::uint64_t> at;
  const std::string what = f.stop(&at);
  CHECK(at == 3);
  CHECK(f.sink.counters().at("lost") == 1);
  CHECK(contains(what, "1 lost (first at offset 3)"));
}

TEST_CASE("operators.verify_sink_counts_out_of_order_on_one_thread") {
  verify_fixture f(6);
  for (std::uint64_t o : {0, 1, 3, 2, 4, 5}) f.feed(o);
  std::optional<std::uint64_t> at;
  const std::string what = f.stop(&at);
  CHECK(at == 2);
  CHECK(contains(what, "offset 2 after offset 3 on one thread"));
  const auto c = f.sink.counters();
  CHECK(c.at("reordered") == 1);
  CHECK(c.at("lost") == 0);
  CHECK(c.at("duplicated") == 0);
  CHECK(c.at("corrupt") == 0);
}

TEST_CASE("operators.verify_sink_reports_every_kind_with_the_first_offset") {
  verify_fixture f(20);
  f.interrupted = true;  // the run stopped after offset 8: 9…19 are not lost
  for (std::uint64_t o : {0, 1, 2, 4, 5, 5, 7, 6, 8}) {  // 3 lost, 5 duplicated (and reordered), 6 reordered
    auto bytes = f.frame(o);
    if (o == 8) bytes[0] ^= std::byte{0x80};
    f.feed(o, bytes);
  }
  std::optional<std::uint64_t> at;
  const std::string what = f.stop(&at);
  CHECK(at == 3);
  const auto c = f.sink.counters();
  CHECK(c.at("lost") == 1);  // below the highest delivered offset (8): 3 only; 9…19 were never reached
  CHECK(c.at("duplicated") == 1);
  CHECK(c.at("reordered") == 2);
  CHECK(c.at("corrupt") == 1);
  CHECK(contains(what, "1 lost (first at offset 3)"));
  CHECK(contains(what, "1 duplicated (first at offset 5)"));
  CHECK(contains(what, "2 reordered (first at offset 5)"));
  CHECK(contains(what, "1 corrupt (first at offset 8)"));
}

TEST_CASE("operators.verify_sink_interrupted_run_is_not_a_loss") {
  verify_fixture f(100);
  f.interrupted = true;
  for (std::uint64_t o = 0; o < 40; ++o) f.feed(o);  // a drained SIGINT: a prefix of the stream
  CHECK(f.stop().empty());
  CHECK(f.sink.counters().at("lost") == 0);
}

TEST_CASE("operators.verify_sink_counts_a_lost_tail_when_the_run_completed") {
  verify_fixture f(10);
  for (std::uint64_t o = 0; o < 7; ++o) f.feed(o);  // the stream "ended" early: 7, 8, 9 never came
  std::optional<std::uint64_t> at;
  const std::string what = f.stop(&at);
  CHECK(at == 7);
  CHECK(f.sink.counters().at("lost") == 3);
  CHECK(contains(what, "3 lost (first at offset 7)"));
}

TEST_CASE("operators.verify_sink_needs_a_reference") {
  verify_sink sink(verify_sink::params{});
  try {
    sink.on_start(sink_setup(page_bytes, nullptr));
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(e.site().operator_name == "sink");
    CHECK(contains(e.what(), "not replayable"));
  }
}
