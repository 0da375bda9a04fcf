// Tests of the generator sources: content by global index, framing, thread-independence, validation.
#include <doctest/doctest.h>

#include <thread>

#include "framework/core/errors.hpp"
#include "operators/sources/random_source.hpp"
#include "operators/sources/sequence_source.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

/// The whole stream produced by one thread, frame after frame, until produce returns false.
std::vector<std::vector<std::byte>> serial_stream(cpu_source& source, std::uint64_t frame_bytes,
                                                  element_type e) {
  std::vector<std::vector<std::byte>> frames;
  for (std::uint64_t o = 0;; ++o) {
    frame_buffer buffer(frame_bytes, e);
    frame_out out = buffer.out();
    if (!source.produce(o, out)) break;
    frames.emplace_back(buffer.data(), buffer.data() + out.bytes);
  }
  return frames;
}

/// The same frames produced by `threads` threads, each taking offsets t, t+threads, … in reverse order.
std::vector<std::vector<std::byte>> parallel_stream(cpu_source& source, std::uint64_t frame_bytes,
                                                    element_type e, std::uint64_t frame_count,
                                                    unsigned threads) {
  std::vector<std::vector<std::byte>> frames(frame_count);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::uint64_t o = frame_count; o-- > 0;) {
        if (o % threads == t) frames[o] = produce_frame(source, o, frame_bytes, e);
      }
    });
  }
  for (auto& th : pool) th.join();
  return frames;
}

template <class T>
void check_sequence_values(std::int64_t seed) {
  const element_type e = element_of<T>::value;
  const std::uint64_t total = 5 * page_bytes + 3 * sizeof(T) * 8;  // 5 frames and a short sixth
  sequence_source source(generated_stream_params{total, seed});
  source.on_start(source_setup(page_bytes, e));
  auto frames = serial_stream(source, page_bytes, e);
  REQUIRE(frames.size() == 6);
  std::uint64_t global = 0;
  for (const auto& f : frames) {
    const T* v = reinterpret_cast<const T*>(f.data());
    for (std::uint64_t k = 0; k < f.size() / sizeof(T); ++k, ++global) {
      REQUIRE(v[k] == content::sequence_value<T>(seed, global));
    }
  }
  CHECK(global * sizeof(T) == total);
}

}  // namespace

TEST_CASE("operators.sequence_source_values_are_seed_plus_global_index") {
  check_sequence_values<std::uint8_t>(0);
  check_sequence_values<std::int8_t>(-3);
  check_sequence_values<std::uint16_t>(7);
  check_sequence_values<std::int32_t>(-100);
  check_sequence_values<std::uint64_t>(1);
  check_sequence_values<float>(-5);
  check_sequence_values<double>(1000);
  CHECK(content::sequence_value<std::uint8_t>(250, 10) == 4);  // wraps around
  CHECK(content::sequence_value<std::int8_t>(127, 1) == -128);
  CHECK(content::sequence_value<float>(-5, 2) == -3.0f);
  CHECK(content::sequence_value<double>(0, 1ULL << 40) == 1099511627776.0);
}

TEST_CASE("operators.sequence_source_frames_by_offset") {
  for (element_type e : {element_type::u8, element_type::u32, element_type::i64, element_type::f32}) {
    CAPTURE(name_of(e));
    const std::uint64_t frame_bytes = 2 * page_bytes;
    const std::uint64_t total = 37 * frame_bytes + 3 * page_bytes / 2;  // 38 frames, the last one short
    sequence_source source(generated_stream_params{total, 11});
    source.on_start(source_setup(frame_bytes, e));
    const auto serial = serial_stream(source, frame_bytes, e);
    REQUIRE(serial.size() == 38);
    const auto parallel = parallel_stream(source, frame_bytes, e, serial.size(), 8);
    for (std::uint64_t o = 0; o < serial.size(); ++o) {
      CAPTURE(o);
      CHECK(parallel[o] == serial[o]);
    }
    CHECK(serial.back().size() == 3 * page_bytes / 2);
    CHECK(produce_frame(source, serial.size(), frame_bytes, e).empty());
    CHECK(produce_frame(source, ~std::uint64_t{0}, frame_bytes, e).empty());  // no overflow far past the end
  }
}

TEST_CASE("operators.random_source_frames_by_offset") {
  for (element_type e : {element_type::u8, element_type::i64, element_type::f32, element_type::f64}) {
    CAPTURE(name_of(e));
    const std::uint64_t total = 9 * page_bytes + 8;
    random_source source(generated_stream_params{total, 42});
    source.on_start(source_setup(page_bytes, e));
    const auto serial = serial_stream(source, page_bytes, e);
    REQUIRE(serial.size() == 10);
    CHECK(serial.back().size() == 8);
    const auto parallel = parallel_stream(source, page_bytes, e, serial.size(), 5);
    for (std::uint64_t o = 0; o < serial.size(); ++o) CHECK(parallel[o] == serial[o]);
    CHECK(serial[0] != serial[1]);
  }
}

TEST_CASE("operators.random_source_values") {
  CHECK(content::splitmix64_at(0, 0) == 0xe220a8397b1dcdafULL);  // splitmix64's first output for seed 0
  CHECK(content::random_value<std::uint64_t>(7, 3) == content::splitmix64_at(7, 3));
  CHECK(content::random_value<std::uint8_t>(7, 3) == static_cast<std::uint8_t>(content::splitmix64_at(7, 3)));
  double sum = 0;
  constexpr int draws = 100000;
  for (int i = 0; i < draws; ++i) {
    const float f = content::random_value<float>(1, i);
    const double d = content::random_value<double>(1, i);
    REQUIRE(f >= 0.0f);
    REQUIRE(f < 1.0f);
    REQUIRE(d >= 0.0);
    REQUIRE(d < 1.0);
    sum += d;
  }
  CHECK(sum / draws == doctest::Approx(0.5).epsilon(0.01));
  CHECK(content::random_value<double>(1, 0) != content::random_value<double>(2, 0));  // the seed matters
}

TEST_CASE("operators.sequence_source_last_partial_frame") {
  sequence_source source(generated_stream_params{page_bytes + 4, 0});
  source.on_start(source_setup(page_bytes, element_type::u32));
  const auto last = produce_frame(source, 1, page_bytes, element_type::u32);
  REQUIRE(last.size() == 4);
  std::uint32_t v = 0;
  std::memcpy(&v, last.data(), sizeof v);
  CHECK(v == page_bytes / sizeof(std::uint32_t));  // the element after frame 0's last
  CHECK(produce_frame(source, 2, page_bytes, element_type::u32).empty());
}

TEST_CASE("operators.sequence_source_empty_and_exact_streams") {
  sequence_source empty(generated_stream_params{0, 0});
  empty.on_start(source_setup(page_bytes));
  CHECK(produce_frame(empty, 0, page_bytes).empty());

  sequence_source exact(generated_stream_params{3 * page_bytes, 0});
  exact.on_start(source_setup(page_bytes));
  CHECK(produce_frame(exact, 2, page_bytes).size() == page_bytes);
  CHECK(produce_frame(exact, 3, page_bytes).empty());
}

TEST_CASE("operators.sequence_source_rejects_partial_elements") {
  sequence_source source(generated_stream_params{page_bytes + 2, 0});
  try {
    source.on_start(source_setup(page_bytes, element_type::u32));
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(e.site().operator_name == "src");
    CHECK(std::string(e.what()).find("total_bytes 4098") != std::string::npos);
    CHECK(std::string(e.what()).find("u32") != std::string::npos);
  }
  random_source random(generated_stream_params{7, 0});
  CHECK_THROWS_AS(random.on_start(source_setup(page_bytes, element_type::f64)), run_error);
  // Whole u8 elements: any length is fine.
  sequence_source bytes(generated_stream_params{page_bytes + 2, 0});
  CHECK_NOTHROW(bytes.on_start(source_setup(page_bytes, element_type::u8)));
}

TEST_CASE("operators.sources_need_an_output_topic") {
  sequence_source source(generated_stream_params{page_bytes, 0});
  operator_setup setup;
  setup.name = "lonely";
  CHECK_THROWS_AS(source.on_start(setup), run_error);
}
