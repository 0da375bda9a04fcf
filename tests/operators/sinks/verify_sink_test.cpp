// Tests of verify_sink against a replayed stream: a clean run from many threads, each kind of anomaly
// counted and reported with its offset, and checksum mode with and without a periodic reference.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "framework/core/errors.hpp"
#include "operators/frame_checksum.hpp"
#include "operators/sinks/verify_sink.hpp"
#include "operators/sources/dataset_source.hpp"
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

// ---- mode: checksum ----------------------------------------------------------------------------------

namespace {

/// Forwards to another reference, counting expected() calls; reports `period` instead of the inner one's
/// when given (a chain whose period() is wrong, as an offset-dependent map would make it). Hides the
/// inner frame_count() unless `forward_count` (so the sink searches for the end by replaying).
class counting_reference final : public frame_reference {
 public:
  explicit counting_reference(const frame_reference& inner,
                              std::optional<std::uint64_t> period = std::nullopt, bool forward_count = false)
      : inner_(inner), period_(period), forward_count_(forward_count) {}
  std::optional<std::uint64_t> frame_count() const override {
    return forward_count_ ? inner_.frame_count() : std::nullopt;
  }
  bool expected(std::uint64_t offset, frame_out& out) const override {
    calls.fetch_add(1, std::memory_order_relaxed);
    return inner_.expected(offset, out);
  }
  std::uint64_t period() const override { return period_ ? *period_ : inner_.period(); }

  mutable std::atomic<std::uint64_t> calls{0};

 private:
  const frame_reference& inner_;
  std::optional<std::uint64_t> period_;
  bool forward_count_;
};

/// A checksum-mode verify sink over a dataset stream of `frames` frames of P = `period` (the last one
/// half a frame), or over any reference given.
struct checksum_fixture {
  static constexpr std::uint64_t frame_bytes = page_bytes;
  static constexpr element_type element = element_type::u32;
  checksum_fixture(std::uint64_t frames, std::uint64_t period, std::uint32_t threads = 1)
      : total(frames * frame_bytes - frame_bytes / 2),
        dataset(dataset_stream_params{total, 3, static_cast<std::int64_t>(period)}),
        counting(dataset),
        sink(verify_sink::params{"checksum"}) {
    dataset.on_start(source_setup(frame_bytes, element));
    sink.on_start(sink_setup(frame_bytes, &counting, element, threads));
  }
  std::vector<std::byte> frame(std::uint64_t offset) const {
    frame_buffer buffer(frame_bytes, element);
    frame_out out = buffer.out();
    REQUIRE(dataset.expected(offset, out));
    return {buffer.data(), buffer.data() + out.bytes};
  }
  void feed(std::uint64_t offset, const std::vector<std::byte>& bytes) {
    sink.on_frame(offset, frame_in{bytes.data(), bytes.size(), element});
  }
  void feed(std::uint64_t offset) { feed(offset, frame(offset)); }
  std::string stop() {
    try {
      sink.on_stop();
    } catch (const run_error& e) {
      return e.what();
    }
    return {};
  }

  std::uint64_t total;
  dataset_source dataset;
  counting_reference counting;
  verify_sink sink;
};

}  // namespace

TEST_CASE("operators.verify_sink_mode_parameter") {
  CHECK(verify_sink(verify_sink::params{}).mode() == verify_sink::compare_mode::exact);
  CHECK(verify_sink(verify_sink::params{"checksum"}).mode() == verify_sink::compare_mode::checksum);
  CHECK_THROWS_AS(verify_sink(verify_sink::params{"fast"}), std::invalid_argument);
  // Exact mode never caches, even over a periodic reference.
  dataset_source dataset(dataset_stream_params{16 * page_bytes, 1, 4});
  dataset.on_start(source_setup(page_bytes));
  verify_sink exact(verify_sink::params{});
  exact.on_start(sink_setup(page_bytes, &dataset));
  CHECK(exact.cache_period() == 0);
}

TEST_CASE("operators.verify_sink_checksum_clean_periodic_stream") {
  constexpr std::uint64_t frames = 300;
  constexpr std::uint64_t period = 8;
  constexpr unsigned threads = 4;
  checksum_fixture f(frames, period, threads);
  CHECK(f.sink.cache_period() == period);
  f.counting.calls = 0;  // on_start's end search and period probe are done
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::uint64_t o = t; o < frames; o += threads) f.feed(o);
    });
  }
  for (auto& th : pool) th.join();
  CHECK(f.stop().empty());
  const operator_counters c = f.sink.counters();
  CHECK(c.at("frames") == frames);
  CHECK(c.at("bytes") == f.total);
  CHECK(c.at("corrupt") == 0);
  CHECK(c.at("lost") == 0);
  // on_start replayed the dataset frames into the cache, and the short last frame: nothing is replayed
  // while streaming.
  CHECK(f.counting.calls.load() == 0);
}

TEST_CASE("operators.verify_sink_checksum_replays_once_per_dataset_frame") {
  checksum_fixture f(50, 5);
  // on_start: the end search, the period probe, the 5 dataset frames and the last frame
  CHECK(f.counting.calls.load() >= 6);
  f.counting.calls = 0;
  for (std::uint64_t o = 0; o < 50; ++o) f.feed(o);
  CHECK(f.stop().empty());
  CHECK(f.counting.calls.load() == 0);  // all of it was replayed at start
}

TEST_CASE("operators.verify_sink_start_skips_the_end_search_when_the_reference_knows_its_length") {
  // 50 frames, the last one half a frame, P = 5.
  constexpr std::uint64_t frames = 50, period = 5, frame_bytes = page_bytes;
  dataset_source dataset(dataset_stream_params{frames * frame_bytes - frame_bytes / 2, 3, period});
  dataset.on_start(source_setup(frame_bytes, element_type::u32));
  CHECK(dataset.frame_count() == frames);
  counting_reference knows(dataset, std::nullopt, /*forward_count=*/true);
  verify_sink sink(verify_sink::params{"checksum"});
  sink.on_start(sink_setup(frame_bytes, &knows, element_type::u32, 2));
  // The period probe (offsets 0 and P), the P dataset frames and the short last frame: nothing else.
  CHECK(knows.calls.load() == 2 + period + 1);
  // The end is still exact: a missing last frame is lost, and one past the end is a stray.
  for (std::uint64_t o = 0; o + 1 < frames; ++o) {
    frame_buffer buffer(frame_bytes, element_type::u32);
    frame_out out = buffer.out();
    REQUIRE(dataset.expected(o, out));
    sink.on_frame(o, frame_in{buffer.data(), out.bytes, element_type::u32});
  }
  std::string what;
  try {
    sink.on_stop();
  } catch (const run_error& e) {
    what = e.what();
  }
  CHECK(sink.counters().at("lost") == 1);
  CHECK(contains(what, "offset 49"));
}

TEST_CASE("operators.verify_sink_checksum_counts_a_corrupt_frame") {
  checksum_fixture f(40, 4);
  std::uint64_t bad_checksum = 0;
  std::uint64_t good_checksum = 0;
  for (std::uint64_t o = 0; o < 40; ++o) {
    auto bytes = f.frame(o);
    // Offset 1 is the first of its dataset frame: the cache must keep the reference's checksum, not the
    // corrupt frame's, so offset 5 (same dataset frame, intact) passes. Offset 22 hits a cached entry.
    if (o == 1) bytes[7] ^= std::byte{0x10};
    if (o == 22) {
      good_checksum = frame_checksum(bytes.data(), bytes.size());
      bytes[2000] ^= std::byte{0x01};
      bad_checksum = frame_checksum(bytes.data(), bytes.size());
    }
    f.feed(o, bytes);
  }
  const std::string what = f.stop();
  CHECK(f.sink.counters().at("corrupt") == 2);
  CHECK(contains(what, "2 corrupt (first at offset 1)"));
  char expected[128];
  std::snprintf(expected, sizeof expected, "offset 22: checksum 0x%016llx expected 0x%016llx",
                static_cast<unsigned long long>(bad_checksum),
                static_cast<unsigned long long>(good_checksum));
  CHECK(contains(what, expected));
  CHECK(contains(what, "offset 1: checksum 0x"));
}

TEST_CASE("operators.verify_sink_checksum_checks_the_short_last_frame") {
  // The last frame is a prefix of its dataset frame: its own sum (replayed at start), never the cache's.
  checksum_fixture f(9, 4);  // offsets 0…8, 8 short (dataset frame 0)
  for (std::uint64_t o = 0; o < 8; ++o) f.feed(o);
  f.feed(8, f.frame(0));  // dataset frame 0 whole: right content, wrong length
  const std::string what = f.stop();
  CHECK(f.sink.counters().at("corrupt") == 1);
  CHECK(contains(what, "offset 8: checksum 0x"));
  CHECK(contains(what, "(4096 bytes, expected 2048)"));
}

TEST_CASE("operators.verify_sink_checksum_with_a_non_periodic_reference") {
  sequence_reference reference(20 * page_bytes, page_bytes, element_type::u8, 2);
  counting_reference counting(reference);
  verify_sink sink(verify_sink::params{"checksum"});
  sink.on_start(sink_setup(page_bytes, &counting));
  CHECK(sink.cache_period() == 0);
  counting.calls = 0;
  for (std::uint64_t o = 0; o < 20; ++o) {
    frame_buffer buffer(page_bytes);
    frame_out out = buffer.out();
    REQUIRE(reference.expected(o, out));
    if (o == 13) buffer.data()[0] ^= std::byte{1};
    sink.on_frame(o, frame_in{buffer.data(), out.bytes, element_type::u8});
  }
  CHECK(counting.calls.load() == 20);  // every frame replayed
  try {
    sink.on_stop();
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(e.site().offset == 13);
    CHECK(contains(e.what(), "offset 13: checksum 0x"));
  }
  CHECK(sink.counters().at("corrupt") == 1);
}

TEST_CASE("operators.verify_sink_checksum_distrusts_a_wrong_period") {
  // A chain claiming period 4 over a stream that does not repeat (an offset-dependent map would do
  // this): the probe at on_start sees frames 0 and 4 differ, so every frame is replayed and a clean
  // stream passes. (u32 elements: a u8 sequence repeats every 256 bytes, so its frames really are equal.)
  sequence_reference reference(30 * page_bytes, page_bytes, element_type::u32, 2);
  counting_reference lying(reference, 4);
  verify_sink sink(verify_sink::params{"checksum"});
  sink.on_start(sink_setup(page_bytes, &lying, element_type::u32));
  CHECK(sink.cache_period() == 0);
  for (std::uint64_t o = 0; o < 30; ++o) {
    frame_buffer buffer(page_bytes, element_type::u32);
    frame_out out = buffer.out();
    REQUIRE(reference.expected(o, out));
    sink.on_frame(o, frame_in{buffer.data(), out.bytes, element_type::u32});
  }
  CHECK_NOTHROW(sink.on_stop());
  CHECK(sink.counters().at("corrupt") == 0);
}
