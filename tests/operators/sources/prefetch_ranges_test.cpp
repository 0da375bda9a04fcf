// Tests of prefetch_ranges, the address stage's pace: one frame per frame of the dataset, each naming its
// records in the range frame format, the last one short, and every bad configuration named.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "operators/sources/prefetch/range_frame.hpp"
#include "operators/sources/prefetch_ranges.hpp"
#include "operators/sources/text_source.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

prefetch_ranges::params ranges_params(const std::string& path, std::uint64_t record_bytes,
                                      std::int64_t per_frame, std::int64_t records = 0) {
  prefetch_ranges::params p;
  p.path = path;
  p.record_bytes = record_bytes;
  p.records = records;
  p.records_per_frame = per_frame;
  return p;
}

/// The range frame `offset` holds, checking the format (magic, zeros after, the whole frame published).
prefetch::record_range range_at(prefetch_ranges& source, std::uint64_t offset) {
  frame_buffer buffer(page_bytes, element_type::u64);
  frame_out out = buffer.out();
  REQUIRE(source.produce(offset, out));
  CHECK(out.bytes == page_bytes);
  const auto* words = reinterpret_cast<const std::uint64_t*>(buffer.data());
  for (std::uint64_t i = prefetch::range_frame_words; i < page_bytes / 8; ++i) REQUIRE(words[i] == 0);
  prefetch::record_range range;
  REQUIRE(prefetch::read_range(words, page_bytes / 8, range));
  frame_buffer replay(page_bytes, element_type::u64);
  frame_out replayed = replay.out();
  REQUIRE(source.expected(offset, replayed));
  CHECK(std::memcmp(replay.data(), buffer.data(), page_bytes) == 0);
  return range;
}

std::string ranges_start_error(prefetch_ranges& source, element_type element = element_type::u64) {
  return start_error(source, source_setup(page_bytes, element));
}

}  // namespace

TEST_CASE("prefetch.ranges_name_each_frames_records") {
  temp_path file;
  write_file(file.str(), pattern_bytes(1000 * 64));
  prefetch_ranges source(ranges_params(file.str(), 64, 300));
  REQUIRE(ranges_start_error(source).empty());
  CHECK(source.frame_count() == 4);
  for (std::uint64_t o = 0; o < 4; ++o) {
    const prefetch::record_range r = range_at(source, o);
    CHECK(r.first == o * 300);
    CHECK(r.count == (o < 3 ? 300 : 100));
  }
  frame_buffer buffer(page_bytes, element_type::u64);
  frame_out out = buffer.out();
  CHECK_FALSE(source.produce(4, out));

  prefetch_ranges fewer(ranges_params(file.str(), 64, 300, 550));
  REQUIRE(ranges_start_error(fewer).empty());
  CHECK(fewer.frame_count() == 2);
  CHECK(range_at(fewer, 1).count == 250);

  // A text is records of one byte.
  prefetch_ranges text(ranges_params(file.str(), 1, 1200));
  REQUIRE(ranges_start_error(text).empty());
  CHECK(text.frame_count() == (64000 + 1199) / 1200);
  CHECK(range_at(text, 53).first == 53 * 1200);
  CHECK(range_at(text, 53).count == 64000 - 53 * 1200);
}

TEST_CASE("prefetch.ranges_name_what_is_wrong") {
  temp_path file;
  write_file(file.str(), pattern_bytes(1000 * 64 + 5));
  prefetch_ranges unset(ranges_params(file.str(), 64, 0, 10));
  CHECK(ranges_start_error(unset).find("records_per_frame must be set") != std::string::npos);
  prefetch_ranges partial(ranges_params(file.str(), 64, 100));
  CHECK(ranges_start_error(partial).find("partial record") != std::string::npos);
  prefetch_ranges too_many(ranges_params(file.str(), 64, 100, 1001));
  CHECK(ranges_start_error(too_many).find("holds 1000 whole records") != std::string::npos);
  prefetch_ranges wrong_topic(ranges_params(file.str(), 64, 100, 10));
  CHECK(ranges_start_error(wrong_topic, element_type::u32).find("u64, not u32") != std::string::npos);
  prefetch_ranges missing(ranges_params(file.str() + ".missing", 64, 100));
  const std::string e = ranges_start_error(missing);
  CHECK(e.find("operator 'src', topic 'out'") != std::string::npos);
  CHECK(e.find(".missing") != std::string::npos);
}

TEST_CASE("prefetch.ranges_in_words_mode_are_text_sources_frames") {
  std::string text;
  for (std::size_t w = 0; text.size() < 20'000; ++w) {
    text.append(1 + w % 9, static_cast<char>('a' + w % 26));
    text.push_back(w % 7 == 6 ? '\n' : ' ');
  }
  temp_path file;
  const auto bytes_of = [](const std::string& s) {
    const auto* b = reinterpret_cast<const std::byte*>(s.data());
    return std::vector<std::byte>(b, b + s.size());
  };
  write_file(file.str(), bytes_of(text));
  auto p = ranges_params(file.str(), 1, 1000);
  p.words = true;
  p.max_word_bytes = 16;
  prefetch_ranges source(p);
  REQUIRE(ranges_start_error(source).empty());
  text_source::params tp;
  tp.path = file.str();
  tp.max_word_bytes = 16;
  text_source copies(tp);
  copies.on_start(source_setup(1000));  // the same stride: 1000 - 16
  REQUIRE(source.frame_count() == copies.frame_count());
  std::uint64_t next = 0;
  for (std::uint64_t o = 0; o < *source.frame_count(); ++o) {
    const prefetch::record_range r = range_at(source, o);
    CHECK(r.first == next);  // the ranges tile the text
    CHECK(r.count <= 1000);
    const std::vector<std::byte> f = produce_frame(copies, o, 1000);
    CHECK(std::string(reinterpret_cast<const char*>(f.data()), f.size()) == text.substr(r.first, r.count));
    next = r.first + r.count;
  }
  CHECK(next == text.size());

  // A word longer than max_word_bytes across a cut (frame 1's nominal end, 2 · 984) fails that frame, with
  // its file offset; words mode needs a text (record_bytes 1) and a frame above max_word_bytes.
  std::string long_word = text.substr(0, 1949) + " " + std::string(40, 'x') + " tail";
  write_file(file.str(), bytes_of(long_word));
  prefetch_ranges broken(p);
  REQUIRE(ranges_start_error(broken).empty());
  frame_buffer buffer(page_bytes, element_type::u64);
  frame_out out = buffer.out();
  CHECK_THROWS_WITH_AS(broken.produce(1, out), doctest::Contains("byte offset 1950: a word of 40 bytes"),
                       run_error);
  auto records = p;
  records.record_bytes = 4;
  prefetch_ranges not_text(records);
  CHECK(ranges_start_error(not_text).find("record_bytes must be 1") != std::string::npos);
  auto small = p;
  small.records_per_frame = 16;
  prefetch_ranges tiny(small);
  CHECK(ranges_start_error(tiny).find("not above max_word_bytes (16)") != std::string::npos);
}
