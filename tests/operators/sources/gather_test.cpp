// The prefetch source's CPU data assembly: the consumer's coalesced layout, ragged threads, thread
// ranges, and faults that name the thread and item.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "operators/sources/prefetch/gather.hpp"

using namespace xf::prefetch;

namespace {

/// A dataset of 4-byte words whose value is their index.
std::vector<std::byte> words_dataset(std::uint32_t count) {
  std::vector<std::byte> d(count * 4);
  for (std::uint32_t i = 0; i < count; ++i) std::memcpy(d.data() + 4 * i, &i, 4);
  return d;
}

struct streams {
  std::vector<std::vector<std::uint64_t>> storage;
  std::vector<address_words> words;
  explicit streams(const std::vector<std::vector<std::uint64_t>>& addresses) {
    for (const auto& a : addresses) {
      storage.emplace_back(address_encoder::worst_case_words(a.size()) + 8);
      address_words out{storage.back().data(), static_cast<std::uint32_t>(storage.back().size()), 0};
      address_encoder enc;
      for (std::uint64_t x : a) REQUIRE(enc.push(x, out));
      REQUIRE(enc.finish(out));
      words.push_back(out);
    }
  }
};

std::uint32_t item_at(const std::vector<std::byte>& prefetch, std::uint64_t k, std::uint32_t t,
                      std::uint32_t threads) {
  std::uint32_t v = 0;
  std::memcpy(&v, prefetch.data() + (k * threads + t) * 4, 4);
  return v;
}

}  // namespace

TEST_CASE("prefetch.gather_lays_items_out_for_coalesced_reads") {
  // Thread t reads every 3rd word from t·1000 (a pattern), thread 2 also a scattered list;
  // thread 3 reads fewer items (ragged).
  const auto dataset = words_dataset(10000);
  std::vector<std::vector<std::uint64_t>> addresses(4);
  for (std::uint32_t t = 0; t < 4; ++t)
    for (std::uint32_t k = 0; k < (t == 3 ? 5u : 40u); ++k)
      addresses[t].push_back(t == 2 ? 4 * ((k * 7919) % 9000) : 4 * (t * 1000 + 3 * k));
  const streams s(addresses);
  std::vector<std::byte> prefetch(40 * 4 * 4);
  std::vector<std::uint32_t> items(4);
  const gather_chunk chunk{s.words, 4, 40, prefetch, items};
  CHECK(gather(dataset, chunk, 0, 4) == (40 * 3 + 5) * 4);
  CHECK(items == std::vector<std::uint32_t>{40, 40, 40, 5});
  for (std::uint32_t t = 0; t < 4; ++t)
    for (std::uint32_t k = 0; k < items[t]; ++k) {
      CAPTURE(t);
      CAPTURE(k);
      CHECK(item_at(prefetch, k, t, 4) == addresses[t][k] / 4);
    }
}

TEST_CASE("prefetch.gather_by_thread_ranges_equals_one_pass") {
  const auto dataset = words_dataset(4096);
  std::vector<std::vector<std::uint64_t>> addresses(8);
  for (std::uint32_t t = 0; t < 8; ++t)
    for (std::uint32_t k = 0; k < 16; ++k) addresses[t].push_back(4 * (t + 8 * k));
  const streams s(addresses);
  std::vector<std::byte> one(16 * 8 * 4), split(16 * 8 * 4);
  std::vector<std::uint32_t> items_one(8), items_split(8);
  gather(dataset, {s.words, 4, 16, one, items_one}, 0, 8);
  const gather_chunk chunk{s.words, 4, 16, split, items_split};
  gather(dataset, chunk, 0, 3);
  gather(dataset, chunk, 3, 8);
  CHECK(one == split);
  CHECK(items_one == items_split);
  // Thread t's k-th item is word t + 8k: the buffer holds the words in order.
  for (std::uint32_t w = 0; w < 128; ++w) CHECK(item_at(one, w / 8, w % 8, 8) == w);
}

TEST_CASE("prefetch.gather_one_byte_items") {
  std::vector<std::byte> text(256);
  for (int i = 0; i < 256; ++i) text[i] = static_cast<std::byte>(i);
  std::vector<std::vector<std::uint64_t>> addresses{{10, 11, 12, 13}, {200, 201, 202, 203}};
  const streams s(addresses);
  std::vector<std::byte> prefetch(8);
  std::vector<std::uint32_t> items(2);
  gather(text, {s.words, 1, 4, prefetch, items}, 0, 2);
  const std::vector<int> expected{10, 200, 11, 201, 12, 202, 13, 203};
  for (int i = 0; i < 8; ++i) CHECK(static_cast<int>(prefetch[i]) == expected[i]);
}

TEST_CASE("prefetch.gather_every_item_size") {
  // 3 threads, patterns with a repeating stride (period 3) and a ragged thread, for each item size the
  // gather copies with a fixed-size load and store; an item size it does not know is a fault.
  std::vector<std::byte> data(4096);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 31 + 7);
  for (const std::uint32_t item : {1u, 2u, 4u, 8u, 16u}) {
    CAPTURE(item);
    std::vector<std::vector<std::uint64_t>> addresses(3);
    for (std::uint32_t t = 0; t < 3; ++t) {
      std::uint64_t a = t * 1024;
      for (std::uint32_t k = 0; k < (t == 1 ? 7u : 20u); ++k) {
        addresses[t].push_back(a);
        a += item * (k % 3 == 2 ? 5 : 1);
      }
    }
    const streams s(addresses);
    std::vector<std::byte> prefetch(20 * 3 * item);
    std::vector<std::uint32_t> items(3);
    CHECK(gather(data, {s.words, item, 20, prefetch, items}, 0, 3) == (20 + 7 + 20) * item);
    CHECK(items == std::vector<std::uint32_t>{20, 7, 20});
    for (std::uint32_t t = 0; t < 3; ++t)
      for (std::uint32_t k = 0; k < items[t]; ++k)
        CHECK(std::memcmp(prefetch.data() + (k * 3 + t) * item, data.data() + addresses[t][k], item) == 0);
  }
  const streams s({{0, 3, 6}});
  std::vector<std::byte> prefetch(9);
  std::vector<std::uint32_t> items(1);
  CHECK_THROWS_AS(gather(data, {s.words, 3, 3, prefetch, items}, 0, 1), gather_fault);
}

TEST_CASE("prefetch.gather_faults_name_the_thread_and_item") {
  const auto dataset = words_dataset(100);
  std::vector<std::byte> prefetch(2 * 4 * 4);
  std::vector<std::uint32_t> items(2);
  SUBCASE("past the end") {
    const streams s({{0, 4, 8}, {0, 4, 400, 8}});  // thread 1, item 2: word 100 of 100
    try {
      gather(dataset, {s.words, 4, 4, prefetch, items}, 0, 2);
      FAIL("no fault");
    } catch (const gather_fault& f) {
      CHECK(f.thread == 1);
      CHECK(f.item == 2);
      CHECK(f.reason.find("past the dataset's end (address 400, dataset 400 bytes)") != std::string::npos);
    }
  }
  SUBCASE("more items than the buffer holds") {
    const streams s({{0, 4, 8, 12, 16}, {}});
    CHECK_THROWS_AS(gather(dataset, {s.words, 4, 4, prefetch, items}, 0, 2), gather_fault);
  }
  SUBCASE("malformed words") {
    std::uint64_t bad[] = {tag_explicit | 5, 0};
    std::vector<address_words> w{{bad, 2, 2}, {bad, 0, 0}};
    CHECK_THROWS_AS(gather(dataset, {w, 4, 4, prefetch, items}, 0, 2), gather_fault);
  }
}
