// Tests of dataset_source: its content is sequence_source's frame o % P, it writes a topic frame only when
// the frame does not already hold that content, and it replays itself.
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>

#include "framework/core/errors.hpp"
#include "operators/sources/dataset_source.hpp"
#include "operators/sources/sequence_source.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

constexpr std::uint32_t no_index = ~std::uint32_t{0};

/// A source setup whose output topic has `capacity` frames (the default P).
operator_setup dataset_setup(std::uint64_t frame_bytes, element_type element, std::uint32_t capacity) {
  operator_setup s = source_setup(frame_bytes, element);
  s.outputs.front().capacity = capacity;
  return s;
}

/// Publishes `offset` into `buffer` as heap frame `frame_index`; returns out.bytes (0 past the end).
std::uint64_t publish(dataset_source& source, frame_buffer& buffer, std::uint64_t offset,
                      std::uint32_t frame_index) {
  frame_out out = buffer.out();
  out.frame_index = frame_index;
  out.bytes = 0;
  return source.produce(offset, out) ? out.bytes : 0;
}

std::vector<std::byte> frame_copy(frame_buffer& buffer, std::uint64_t n) {
  return {buffer.data(), buffer.data() + n};
}

std::uint64_t counter(const cpu_operator& op, const char* name) {
  return op.counters().at(name);
}

/// Frame o of the dataset stream equals sequence_source's frame o % P (its prefix for a short last
/// frame), through produce with and without a frame index and through expected().
void check_content(element_type e, std::int64_t dataset_frames, std::uint32_t capacity) {
  CAPTURE(name_of(e));
  CAPTURE(dataset_frames);
  const std::uint64_t frame_bytes = 2 * page_bytes;
  const std::uint64_t total = 11 * frame_bytes + page_bytes + 8;  // 12 frames, the last one short
  const std::int64_t seed = -7;
  const std::uint64_t period = dataset_frames > 0 ? static_cast<std::uint64_t>(dataset_frames) : capacity;
  dataset_source source(dataset_stream_params{total, seed, dataset_frames});
  source.on_start(dataset_setup(frame_bytes, e, capacity));
  CHECK(source.period() == period);
  // Long enough to hold every dataset frame whole (P may exceed the stream).
  sequence_source sequence(generated_stream_params{std::max(total, period * frame_bytes), seed});
  sequence.on_start(source_setup(frame_bytes, e));

  std::vector<frame_buffer> heap;
  for (std::uint32_t i = 0; i < capacity; ++i) heap.emplace_back(frame_bytes, e);
  for (std::uint64_t o = 0; o < 12; ++o) {
    CAPTURE(o);
    const std::uint64_t bytes = o == 11 ? page_bytes + 8 : frame_bytes;
    std::vector<std::byte> want = produce_frame(sequence, o % period, frame_bytes, e);
    REQUIRE(want.size() == frame_bytes);
    want.resize(bytes);
    CHECK(produce_frame(source, o, frame_bytes, e) == want);  // no frame index: written
    frame_buffer replay(frame_bytes, e);
    frame_out out = replay.out();
    REQUIRE(source.expected(o, out));
    CHECK(frame_copy(replay, out.bytes) == want);
    // As the executor publishes: heap frame o % capacity, in place from the second round on when P fits.
    frame_buffer& frame = heap[o % capacity];
    REQUIRE(publish(source, frame, o, static_cast<std::uint32_t>(o % capacity)) == bytes);
    CHECK(frame_copy(frame, bytes) == want);
  }
  CHECK(produce_frame(source, 12, frame_bytes, e).empty());
  frame_buffer past(frame_bytes, e);
  frame_out out = past.out();
  CHECK_FALSE(source.expected(12, out));
  CHECK(out.bytes == 0);
}

}  // namespace

TEST_CASE("operators.dataset_source_frame_is_sequence_frame_modulo_period") {
  for (element_type e : {element_type::u8, element_type::i16, element_type::u32, element_type::i64,
                         element_type::f32, element_type::f64}) {
    check_content(e, 0, 4);   // P = the topic's capacity
    check_content(e, 3, 4);   // P below the capacity
    check_content(e, 5, 4);   // P above it: never in place in the steady state, still right
    check_content(e, 64, 4);  // P past the stream: the plain sequence
  }
}

TEST_CASE("operators.dataset_source_publishes_in_place") {
  constexpr std::uint32_t capacity = 4;
  dataset_source source(dataset_stream_params{100 * page_bytes, 1, 0});
  source.on_start(dataset_setup(page_bytes, element_type::u32, capacity));
  frame_buffer frame(page_bytes, element_type::u32);
  REQUIRE(publish(source, frame, 1, 1) == page_bytes);
  const std::vector<std::byte> dataset_frame_1 = frame_copy(frame, page_bytes);
  CHECK(counter(source, "frames_filled") == 1);
  CHECK(counter(source, "frames_in_place") == 0);

  // Offset 1 + P is dataset frame 1 again, into the same heap frame: nothing is written, so a byte
  // changed behind the source's back stays changed (a rewrite would restore it).
  frame.data()[100] ^= std::byte{0xff};
  REQUIRE(publish(source, frame, 1 + capacity, 1) == page_bytes);
  CHECK(frame.data()[100] == (dataset_frame_1[100] ^ std::byte{0xff}));
  CHECK(counter(source, "frames_filled") == 1);
  CHECK(counter(source, "frames_in_place") == 1);
  frame.data()[100] = dataset_frame_1[100];

  // Another dataset frame into that heap frame: written.
  REQUIRE(publish(source, frame, 2, 1) == page_bytes);
  CHECK(frame_copy(frame, page_bytes) == produce_frame(source, 2, page_bytes, element_type::u32));
  CHECK(counter(source, "frames_filled") == 3);  // the produce_frame just above filled one too

  // Dataset frame 1 into a heap frame that never held it, and with no frame index (a replay): written.
  frame_buffer other(page_bytes, element_type::u32);
  std::memset(other.data(), 0xab, page_bytes);
  REQUIRE(publish(source, other, 1, 3) == page_bytes);
  CHECK(frame_copy(other, page_bytes) == dataset_frame_1);
  std::memset(other.data(), 0xab, page_bytes);
  REQUIRE(publish(source, other, 1, no_index) == page_bytes);
  CHECK(frame_copy(other, page_bytes) == dataset_frame_1);
  // ... and a replay through expected() neither writes a heap frame's state nor counts.
  const operator_counters before = source.counters();
  std::memset(other.data(), 0xab, page_bytes);
  frame_out replay = other.out();
  REQUIRE(source.expected(1, replay));
  CHECK(frame_copy(other, page_bytes) == dataset_frame_1);
  CHECK(source.counters() == before);
  CHECK(before.at("frames_filled") == 5);
  CHECK(before.at("frames_in_place") == 1);
}

TEST_CASE("operators.dataset_source_short_last_frame_in_place") {
  // 10 full frames and a short 11th (offset 10 = dataset frame 2 with P = 4).
  constexpr std::uint32_t capacity = 4;
  const std::uint64_t last_bytes = page_bytes / 2;
  dataset_source source(dataset_stream_params{10 * page_bytes + last_bytes, 3, 0});
  source.on_start(dataset_setup(page_bytes, element_type::u16, capacity));
  frame_buffer frame(page_bytes, element_type::u16);

  // Heap frame 2 gets the short prefix first; a full frame of the same dataset frame must be written.
  REQUIRE(publish(source, frame, 10, 2) == last_bytes);
  frame.data()[last_bytes + 10] ^= std::byte{0x55};  // past the prefix: the full frame must fix it
  REQUIRE(publish(source, frame, 6, 2) == page_bytes);
  CHECK(frame_copy(frame, page_bytes) == produce_frame(source, 6, page_bytes, element_type::u16));
  CHECK(counter(source, "frames_filled") == 3);  // two publishes and produce_frame's fill
  // The full frame serves the short one in place.
  frame.data()[0] ^= std::byte{0x55};
  REQUIRE(publish(source, frame, 10, 2) == last_bytes);
  CHECK(counter(source, "frames_in_place") == 1);
  CHECK(frame.data()[0] != produce_frame(source, 10, page_bytes, element_type::u16)[0]);  // not rewritten
}

TEST_CASE("operators.dataset_source_publishes_from_threads") {
  // Threads publish as the executor does: offset o into heap frame o % capacity, each heap frame held by
  // one thread (here: frames are split among threads), every frame checked against the replay.
  constexpr std::uint32_t capacity = 8;
  constexpr unsigned threads = 4;
  constexpr std::uint64_t frames = 400;
  dataset_source source(dataset_stream_params{frames * page_bytes, 5, 0});
  source.on_start(dataset_setup(page_bytes, element_type::u64, capacity));
  std::atomic<std::uint64_t> mismatches{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<frame_buffer> heap;
      for (std::uint32_t i = 0; i < capacity; ++i) heap.emplace_back(page_bytes, element_type::u64);
      frame_buffer replay(page_bytes, element_type::u64);
      for (std::uint64_t o = 0; o < frames; ++o) {
        const auto index = static_cast<std::uint32_t>(o % capacity);
        if (index % threads != t) continue;
        if (publish(source, heap[index], o, index) != page_bytes) mismatches.fetch_add(1);
        frame_out want = replay.out();
        if (!source.expected(o, want) ||
            frame_copy(heap[index], page_bytes) != frame_copy(replay, page_bytes)) {
          mismatches.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(mismatches.load() == 0);
  CHECK(counter(source, "frames_filled") == capacity);
  CHECK(counter(source, "frames_in_place") == frames - capacity);
}

TEST_CASE("operators.dataset_source_needs_a_period") {
  dataset_source source(dataset_stream_params{page_bytes, 1, 0});
  try {
    source.on_start(dataset_setup(page_bytes, element_type::u8, 0));
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(e.site().operator_name == "src");
    CHECK(std::string(e.what()).find("capacity") != std::string::npos);
  }
  dataset_source negative(dataset_stream_params{page_bytes, 1, -1});
  CHECK_THROWS_AS(negative.on_start(dataset_setup(page_bytes, element_type::u8, 4)), run_error);
  // The generator's checks still apply.
  dataset_source partial(dataset_stream_params{page_bytes + 2, 1, 0});
  CHECK_THROWS_AS(partial.on_start(dataset_setup(page_bytes, element_type::u32, 4)), run_error);
}
