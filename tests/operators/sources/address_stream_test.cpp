// The prefetch source's address stream: patterns found and followed, broken and found again, 1-byte
// fields, records' interleaved fields, random addresses written out as they are, full buffers.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "operators/sources/prefetch/address_stream.hpp"
#include "tests/operators/sources/address_stream_checks.hpp"

using namespace xf::prefetch;
using xf::prefetch::test::decoded;
using xf::prefetch::test::encode_in_buffers;

namespace {

struct encoded {
  std::vector<std::uint64_t> words;
  std::uint32_t patterns = 0, explicit_runs = 0;
};

/// Encodes `addresses` into one buffer of `capacity` words (large enough unless a test says otherwise).
encoded encode(const std::vector<std::uint64_t>& addresses, std::uint32_t capacity = 1 << 20) {
  std::vector<std::uint64_t> words(capacity);
  address_words out{words.data(), capacity, 0};
  address_encoder enc;
  for (std::uint64_t a : addresses) REQUIRE(enc.push(a, out));
  REQUIRE(enc.finish(out));
  words.resize(out.used);
  encoded e{words};
  for (std::uint32_t i = 0; i < out.used;) {  // count the records
    const std::uint64_t header = words[i];
    const std::uint64_t n = header & count_mask;
    if ((header & tag_mask) == tag_pattern) {
      ++e.patterns;
      i += 3 + static_cast<std::uint32_t>(words[i + 2]);
    } else {
      ++e.explicit_runs;
      i += 1 + static_cast<std::uint32_t>(n);
    }
  }
  return e;
}

}  // namespace

TEST_CASE("prefetch.a_strided_stream_becomes_one_pattern") {
  // The paper's example (0x100, 0x105, 0x110 … in its hex-looking decimal): base and one stride.
  std::vector<std::uint64_t> a;
  for (std::uint64_t k = 0; k < 100000; ++k) a.push_back(0x100 + 5 * k);
  const encoded e = encode(a);
  CHECK(e.patterns == 1);
  CHECK(e.explicit_runs == 0);
  CHECK(e.words.size() == 4);  // header, base, period, stride
  CHECK(decoded(e.words) == a);
}

TEST_CASE("prefetch.one_byte_fields_compress_to_a_pattern") {
  // Word count reads every character: one address per byte, stride 1.
  std::vector<std::uint64_t> a;
  for (std::uint64_t k = 0; k < 4096; ++k) a.push_back(1'000'000 + k);
  const encoded e = encode(a);
  CHECK(e.words.size() == 4);
  CHECK(decoded(e.words) == a);
}

TEST_CASE("prefetch.interleaved_record_fields_have_a_period") {
  // K-means: each 64-byte record contributes two floats at offsets 4 and 12, then the next record.
  for (std::uint32_t fields : {2u, 3u, 4u}) {
    CAPTURE(fields);
    std::vector<std::uint64_t> a;
    for (std::uint64_t r = 0; r < 1000; ++r)
      for (std::uint32_t f = 0; f < fields; ++f) a.push_back(4096 + r * 64 + 4 + 8 * f);
    const encoded e = encode(a);
    CHECK(e.patterns == 1);
    CHECK(e.words.size() == 3 + fields);
    CHECK(decoded(e.words) == a);
  }
}

TEST_CASE("prefetch.a_broken_pattern_is_found_again") {
  // Two strided runs with a jump between them (the next chunk of a file): two patterns; a single
  // stray address between them goes out on its own.
  std::vector<std::uint64_t> a;
  for (std::uint64_t k = 0; k < 500; ++k) a.push_back(8 * k);
  a.push_back(999'999);
  for (std::uint64_t k = 0; k < 500; ++k) a.push_back(1'000'000 + 4 * k);
  const encoded e = encode(a);
  CHECK(e.patterns == 2);
  CHECK(e.explicit_runs == 1);
  CHECK(e.words.size() < 20);
  CHECK(decoded(e.words) == a);
}

TEST_CASE("prefetch.random_addresses_are_written_as_they_are") {
  std::mt19937_64 rng(5);
  std::vector<std::uint64_t> a;
  for (int k = 0; k < 1000; ++k) a.push_back(rng() >> 4);
  const encoded e = encode(a);
  CHECK(e.patterns == 0);
  CHECK(e.explicit_runs == 1);
  CHECK(e.words.size() == a.size() + 1);  // the worst case, one header
  CHECK(e.words.size() <= address_encoder::worst_case_words(a.size()));
  CHECK(decoded(e.words) == a);
}

TEST_CASE("prefetch.short_streams_and_periods_longer_than_the_window_allows") {
  CHECK(decoded(encode({}).words).empty());
  const std::vector<std::uint64_t> few{7, 9, 11};
  CHECK(decoded(encode(few).words) == few);
  // Period 5 (> max_pattern_period): no pattern, every address explicit, still exact.
  std::vector<std::uint64_t> a;
  for (std::uint64_t r = 0; r < 50; ++r)
    for (std::uint64_t f : {0, 3, 4, 9, 20}) a.push_back(r * 100 + f);
  const encoded e = encode(a);
  CHECK(e.patterns == 0);
  CHECK(decoded(e.words) == a);
}

TEST_CASE("prefetch.full_buffers_lose_nothing") {
  // Tiny buffers: push/finish refuse when a record does not fit; the caller starts the next buffer and
  // pushes the same address again. The concatenated buffers decode to the input.
  std::mt19937_64 rng(9);
  std::vector<std::uint64_t> a;
  for (std::uint64_t k = 0; k < 300; ++k) a.push_back(16 * k);
  for (int k = 0; k < 40; ++k) a.push_back(rng() >> 8);
  for (std::uint64_t k = 0; k < 300; ++k) a.push_back(1 << 20 | k);
  std::size_t next = 0;
  const auto all = encode_in_buffers(8, [&](address_encoder& enc, address_words& out) {
    for (; next < a.size(); ++next)
      if (!enc.push(a[next], out)) return false;
    return true;
  });
  CHECK(decoded(all) == a);
}

TEST_CASE("prefetch.patterns_off_writes_every_address") {
  // The paper's Table II baseline: the same strided stream, no recognition — one explicit run of every
  // address, and in small buffers still exact (the run goes on in the next buffer under a new header).
  std::vector<std::uint64_t> a;
  for (std::uint64_t k = 0; k < 1000; ++k) a.push_back(4096 + 12 * k);
  std::vector<std::uint64_t> words(2000);
  address_words out{words.data(), 2000, 0};
  address_encoder enc(false);
  for (std::uint64_t x : a) REQUIRE(enc.push(x, out));
  REQUIRE(enc.finish(out));
  CHECK(out.used == a.size() + 1);
  CHECK(words[0] == (tag_explicit | a.size()));
  words.resize(out.used);
  CHECK(decoded(words) == a);
  std::size_t next = 0;
  std::vector<std::uint64_t> all;
  {
    std::vector<std::uint64_t> buffer(7);
    address_words small{buffer.data(), 7, 0};
    address_encoder off(false);
    while (next < a.size()) {
      if (off.push(a[next], small)) {
        ++next;
        continue;
      }
      all.insert(all.end(), buffer.begin(), buffer.begin() + small.used);
      small.used = 0;
    }
    REQUIRE(off.finish(small));
    all.insert(all.end(), buffer.begin(), buffer.begin() + small.used);
  }
  CHECK(decoded(all) == a);
  CHECK(all.size() == a.size() + (a.size() + 5) / 6);  // 6 addresses and a header per buffer of 7
}

TEST_CASE("prefetch.malformed_words_are_refused") {
  std::vector<std::uint64_t> seen;
  auto visit = [&](std::uint64_t x) { seen.push_back(x); };
  const std::uint64_t truncated_run[] = {tag_explicit | 3, 1, 2};
  CHECK_FALSE(decode_addresses(truncated_run, 3, visit));
  const std::uint64_t bad_period[] = {tag_pattern | 4, 100, 9, 1};
  CHECK_FALSE(decode_addresses(bad_period, 4, visit));
  const std::uint64_t bad_tag[] = {std::uint64_t{3} << 62};
  CHECK_FALSE(decode_addresses(bad_tag, 1, visit));
}

TEST_CASE("prefetch.a_visitor_stops_a_pattern_of_2e62_addresses") {
  // Four words can count 2^62 − 1 addresses: a reader that takes only so many items stops the walk there
  // (walking the rest would take years; found by fuzzing the assembler).
  const std::uint64_t endless[] = {tag_pattern | count_mask, 0, 1, 8};
  std::uint64_t visits = 0;
  CHECK(decode_addresses(endless, 4, [&](std::uint64_t address) {
    CHECK(address == visits * 8);
    return ++visits < 1000;
  }));
  CHECK(visits == 1000);
  const std::uint64_t run[] = {tag_explicit | 3, 10, 20, 30};
  visits = 0;
  CHECK(decode_addresses(run, 4, [&](std::uint64_t) { return ++visits < 2; }));
  CHECK(visits == 2);
}
