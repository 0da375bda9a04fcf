// The prefetch source's record layouts: addresses of the fields read, their compression, and bad layouts.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "operators/sources/prefetch/record_layout.hpp"
#include "tests/operators/sources/address_stream_checks.hpp"

using namespace xf::prefetch;
using xf::prefetch::test::decoded;
using xf::prefetch::test::encode_in_buffers;

namespace {
/// The address stream of records [first, end), in buffers of `capacity` words.
std::vector<std::uint64_t> record_words(const record_layout& l, std::uint64_t base, std::uint64_t first,
                                        std::uint64_t end, std::uint32_t capacity) {
  std::uint64_t next = 0;
  return encode_in_buffers(capacity, [&](address_encoder& enc, address_words& out) {
    return generate_record_addresses(l, base, first, end, &next, enc, out);
  });
}
}  // namespace

TEST_CASE("prefetch.kmeans_fields_make_one_pattern") {
  // 64-byte particles, x y z at 0 4 8: three 4-byte items per record, 12 of 64 bytes read.
  record_layout l{64, 4, 1, {{0, 12}}};
  CHECK(std::string(layout_problem(l)).empty());
  CHECK(l.items_per_record() == 3);
  CHECK(l.bytes_read_per_record() == 12);
  const auto words = record_words(l, 4096, 100, 1100, 1024);
  CHECK(words.size() == 3 + 3);  // one pattern of period 3: strides 4, 4, 56
  const auto a = decoded(words);
  REQUIRE(a.size() == 3000);
  CHECK(a[0] == 4096 + 100 * 64);
  CHECK(a[4] == 4096 + 101 * 64 + 4);
}

TEST_CASE("prefetch.fields_of_several_items_and_gaps") {
  // An affinity-like fixed record: an 8-byte card at 8 (two items) and a 4-byte merchant at 16.
  record_layout l{32, 4, 2, {{8, 8}, {16, 4}}};
  CHECK(std::string(layout_problem(l)).empty());
  CHECK(l.items_per_record() == 3);
  const auto words = record_words(l, 0, 0, 50, 1000);
  std::vector<std::uint64_t> expected;
  for (std::uint64_t r = 0; r < 50; ++r)
    for (std::uint64_t off : {8, 12, 16}) expected.push_back(r * 32 + off);
  CHECK(decoded(words) == expected);
}

TEST_CASE("prefetch.record_addresses_resume_after_a_full_buffer") {
  record_layout l{48, 4, 3, {{0, 4}, {12, 8}, {40, 8}}};  // 5 items per record: no pattern (period 5)
  const auto a = decoded(record_words(l, 0, 7, 37, 16));
  REQUIRE(a.size() == 30 * 5);
  CHECK(a[0] == 7 * 48);
  CHECK(a[5 * 29 + 4] == 36 * 48 + 44);
}

TEST_CASE("prefetch.bad_layouts_are_named") {
  CHECK(std::string(layout_problem({64, 3, 1, {{0, 12}}})).find("item size") != std::string::npos);
  CHECK(std::string(layout_problem({64, 4, 1, {{0, 10}}})).find("whole items") != std::string::npos);
  CHECK(std::string(layout_problem({64, 4, 1, {{2, 4}}})).find("multiple of the item size") !=
        std::string::npos);
  CHECK(std::string(layout_problem({64, 4, 2, {{8, 8}, {12, 4}}})).find("overlap") != std::string::npos);
  CHECK(std::string(layout_problem({16, 4, 1, {{12, 8}}})).find("past the record") != std::string::npos);
  CHECK(std::string(layout_problem({16, 4, 0, {}})).find("1 to 8") != std::string::npos);
}
