// Transaction-affinity generator and CPU reference: the generated records and index, the scan and index
// paths agreeing with each other and with a naive count for 1, 2 and 7 threads, malformed data and index
// files named by offset, and the tools' exit codes.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "apps/affinity/affinity.hpp"
#include "apps/affinity/radix_sort.hpp"
#include "apps/dataset_support/dataset_file.hpp"
#include "apps/dataset_support/seeded_random.hpp"
#include "apps/dataset_support/tool_cli.hpp"
#include "tests/apps/dataset_fixture.hpp"

using namespace xf::apps;
using namespace xf::apps::affinity;
using xf::test::read_file;
using xf::test::scratch_dir;
using xf::test::write_file;

namespace {

std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

/// A record's fields, unpacked.
struct parsed_record {
  std::uint64_t offset = 0;
  std::uint32_t record_bytes = 0;
  std::uint64_t card = 0;
  std::uint32_t merchant = 0;
  std::uint16_t item_count = 0;
  std::uint16_t pad = 0;
};

/// Every record of a well-formed data file.
std::vector<parsed_record> parse_all(const std::string& data) {
  std::vector<parsed_record> out;
  for (std::uint64_t off = 0; off < data.size();) {
    REQUIRE(data.size() - off >= sizeof(record_header));
    record_header h;
    std::memcpy(&h, data.data() + off, sizeof h);
    const parsed_record r{off, h.record_bytes, h.card, h.merchant, h.item_count, h.pad};
    REQUIRE(r.record_bytes == record_header_bytes + item_bytes * r.item_count);
    REQUIRE(r.record_bytes <= data.size() - off);
    out.push_back(r);
    off += r.record_bytes;
  }
  return out;
}

/// The query written plainly: the set of cards at A, then a set of cards per other merchant.
std::vector<merchant_cards> naive_query(const std::vector<parsed_record>& records, std::uint32_t a,
                                        std::uint64_t* cards_at_a = nullptr) {
  std::set<std::uint64_t> at_a;
  for (const auto& r : records)
    if (r.merchant == a) at_a.insert(r.card);
  std::map<std::uint32_t, std::set<std::uint64_t>> shared;
  for (const auto& r : records)
    if (r.merchant != a && at_a.count(r.card) != 0) shared[r.merchant].insert(r.card);
  if (cards_at_a != nullptr) *cards_at_a = at_a.size();
  std::vector<merchant_cards> out;
  for (const auto& [m, cards] : shared) out.push_back({m, cards.size()});
  return out;
}

std::uint32_t naive_digest(const std::vector<merchant_cards>& list) {
  uLong crc = crc32(0, nullptr, 0);
  for (const auto& m : list) {
    crc = crc32(crc, reinterpret_cast<const Bytef*>(&m.merchant), 4);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(&m.cards), 8);
  }
  return static_cast<std::uint32_t>(crc);
}

generate_config small_config() {
  generate_config cfg;
  cfg.records = 150'000;  // three generator blocks, the last one short
  cfg.cards = 4000;
  cfg.merchants = 300;
  cfg.seed = 11;
  return cfg;
}

/// What a dataset_error from `f` says: its offset and message (or fails).
template <class F>
std::pair<std::uint64_t, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const dataset_error& e) {
    REQUIRE(e.offset().has_value());
    return {*e.offset(), e.what()};
  }
  FAIL("no dataset_error");
  return {};
}

}  // namespace

TEST_CASE("affinity.radix_sort_unique_matches_std_sort") {
  std::vector<std::uint64_t> scratch;
  std::uint64_t state = 99;
  for (const int bits : {1, 7, 8, 9, 20, 34, 63, 64}) {
    for (const std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{5000}}) {
      CAPTURE(bits);
      CAPTURE(n);
      std::vector<std::uint64_t> keys(n);
      for (auto& k : keys) {
        k = xf::apps::splitmix64(state);
        if (bits < 64) k &= (std::uint64_t{1} << bits) - 1;
      }
      if (n > 10) keys[3] = keys[7] = keys[n - 1];  // duplicates
      std::vector<std::uint64_t> expected = keys;
      std::sort(expected.begin(), expected.end());
      expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
      sort_unique(keys, scratch);
      REQUIRE(keys == expected);
    }
  }
}

TEST_CASE("affinity.card_numbers_are_distinct_16_digit_numbers") {
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 100'000; ++i) {
    const std::uint64_t c = card_number(i);
    REQUIRE(c >= 4'000'000'000'000'000ull);
    REQUIRE(c < 5'000'000'000'000'000ull);
    REQUIRE(seen.insert(c).second);
  }
}

TEST_CASE("affinity.generator_is_deterministic_with_a_consistent_index") {
  scratch_dir dir;
  generate_config cfg = small_config();
  cfg.threads = 1;
  const generated_files files = generate_files(dir.file("a"), dir.file("a.idx"), cfg);
  cfg.threads = 3;
  generate_files(dir.file("b"), dir.file("b.idx"), cfg);
  const std::string data = read_file(dir.file("a"));
  const std::string index = read_file(dir.file("a.idx"));
  CHECK(data == read_file(dir.file("b")));
  CHECK(index == read_file(dir.file("b.idx")));
  CHECK(files.data_bytes == data.size());
  CHECK(files.records == cfg.records);
  generate_files(dir.file("c"), "", cfg);  // no index asked for: the data file alone, the same
  CHECK(data == read_file(dir.file("c")));
  cfg.seed = 12;
  generate_files(dir.file("d"), "", cfg);
  CHECK(data != read_file(dir.file("d")));

  const std::vector<parsed_record> records = parse_all(data);
  REQUIRE(records.size() == cfg.records);
  REQUIRE(index.size() == records.size() * index_entry_bytes);
  std::set<std::uint64_t> cards;
  for (std::uint64_t i = 0; i < cfg.cards; ++i) cards.insert(card_number(i));
  std::vector<std::uint64_t> per_merchant(cfg.merchants);
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::uint64_t off;
    std::memcpy(&off, index.data() + i * 8, 8);
    REQUIRE(off == records[i].offset);
    REQUIRE(records[i].item_count <= max_items);
    REQUIRE(records[i].pad == 0);
    REQUIRE(records[i].merchant < cfg.merchants);
    REQUIRE(cards.count(records[i].card) == 1);
    ++per_merchant[records[i].merchant];
  }
  // Skewed popularity: merchant 0 is the busiest, well above the average.
  CHECK(*std::max_element(per_merchant.begin(), per_merchant.end()) == per_merchant[0]);
  CHECK(per_merchant[0] > 10 * cfg.records / cfg.merchants);
}

TEST_CASE("affinity.scan_and_index_agree_for_1_2_7_threads_and_with_a_naive_query") {
  scratch_dir dir;
  generate_files(dir.file("d"), dir.file("d.idx"), small_config());
  const std::string data = read_file(dir.file("d"));
  const std::string index = read_file(dir.file("d.idx"));
  const std::vector<parsed_record> records = parse_all(data);

  for (std::uint32_t merchant : {0u, 7u, 250u, 100000u /* no transactions */}) {
    CAPTURE(merchant);
    std::uint64_t cards_at_a = 0;
    const std::vector<merchant_cards> expected = naive_query(records, merchant, &cards_at_a);
    if (merchant < 300) CHECK(!expected.empty());
    std::vector<merchant_cards> expected_top = expected;
    std::stable_sort(expected_top.begin(), expected_top.end(),
                     [](const auto& a, const auto& b) { return a.cards > b.cards; });
    expected_top.resize(std::min<std::size_t>(10, expected_top.size()));

    for (unsigned threads : {1u, 2u, 7u}) {
      CAPTURE(threads);
      const query q{merchant, threads};
      query compacting = q;
      compacting.compaction_pairs = 3;  // duplicates dropped all along: the same counts
      for (const result& r : {run_scan(bytes_of(data), q), run_indexed(bytes_of(data), bytes_of(index), q),
                              run_scan(bytes_of(data), compacting)}) {
        CAPTURE(static_cast<int>(r.path));
        CHECK(r.records == records.size());
        CHECK(r.cards_at_merchant == cards_at_a);
        CHECK(r.shared == expected);
        CHECK(r.top == expected_top);
        CHECK(r.digest == naive_digest(expected));
      }
    }
  }
  const query q{3, 2};
  CHECK(run_scan_file(dir.file("d"), q).shared ==
        run_indexed_file(dir.file("d"), dir.file("d.idx"), q).shared);
}

TEST_CASE("affinity.hand_made_records") {
  // Cards 1, 2, 3 at merchant 5 (card 1 twice); merchant 6 sees cards 1, 1, 2; merchant 7 sees card 3 and
  // card 9 (not at 5); merchant 8 only card 9. Cards 0 and ~0 (the tables' sentinel) at 5 and 6 too.
  std::string data;
  std::vector<std::uint64_t> offsets;
  auto add = [&](std::uint64_t card, std::uint32_t merchant, std::uint16_t items) {
    offsets.push_back(data.size());
    record_header h{
        static_cast<std::uint32_t>(record_header_bytes + item_bytes * items), card, merchant, 100, items, 0};
    data.append(reinterpret_cast<const char*>(&h), sizeof h);
    data.append(item_bytes * items, '\x7f');
  };
  add(1, 5, 0), add(2, 5, 3), add(1, 6, 15), add(3, 5, 1), add(1, 5, 2), add(9, 7, 0), add(1, 6, 0);
  add(2, 6, 4), add(3, 7, 0), add(9, 8, 1), add(0, 5, 0), add(0, 6, 2), add(~0ull, 5, 0), add(~0ull, 6, 1);
  std::string index(offsets.size() * 8, '\0');
  std::memcpy(index.data(), offsets.data(), index.size());
  for (unsigned threads : {1u, 2u, 7u}) {
    for (const result& r : {run_scan(bytes_of(data), {5, threads}),
                            run_indexed(bytes_of(data), bytes_of(index), {5, threads})}) {
      CHECK(r.cards_at_merchant == 5);
      CHECK(r.shared == std::vector<merchant_cards>{{6, 4}, {7, 1}});
      CHECK(r.top == r.shared);
    }
  }
}

TEST_CASE("affinity.malformed_data_names_the_offset") {
  scratch_dir dir;
  generate_config cfg = small_config();
  cfg.records = 1000;
  generate_files(dir.file("d"), dir.file("d.idx"), cfg);
  const std::string data = read_file(dir.file("d"));
  const std::vector<parsed_record> records = parse_all(data);
  const std::uint64_t victim = records[600].offset;

  for (unsigned threads : {1u, 3u}) {
    CAPTURE(threads);
    SUBCASE("record_bytes smaller than the header") {
      std::string bad = data;
      const std::uint32_t small = 23;
      std::memcpy(bad.data() + victim, &small, 4);
      const auto [offset, what] = error_of([&] { run_scan(bytes_of(bad), {0, threads}, "tx.bin"); });
      CHECK(offset == victim);
      CHECK(what.find("tx.bin: byte offset " + std::to_string(victim) + ": record_bytes 23 is smaller") == 0);
    }
    SUBCASE("record running past the end") {
      std::string bad = data;
      const auto huge = static_cast<std::uint32_t>(data.size());
      std::memcpy(bad.data() + victim, &huge, 4);
      const auto [offset, what] = error_of([&] { run_scan(bytes_of(bad), {0, threads}, "tx.bin"); });
      CHECK(offset == victim);
      CHECK(what.find("runs past the end") != std::string::npos);
    }
    SUBCASE("truncated last record") {
      const std::string bad = data.substr(0, data.size() - 2);
      const auto [offset, what] = error_of([&] { run_scan(bytes_of(bad), {0, threads}); });
      CHECK(offset == records.back().offset);
      CHECK(what.find("runs past the end") != std::string::npos);
    }
    SUBCASE("truncated header") {
      const std::string bad = data + std::string(10, '\0');
      const auto [offset, what] = error_of([&] { run_scan(bytes_of(bad), {0, threads}); });
      CHECK(offset == data.size());
      CHECK(what.find("truncated record header: 10 of 24 bytes") != std::string::npos);
    }
  }
}

TEST_CASE("affinity.malformed_index_names_the_offset") {
  scratch_dir dir;
  generate_config cfg = small_config();
  cfg.records = 1000;
  generate_files(dir.file("d"), dir.file("d.idx"), cfg);
  const std::string data = read_file(dir.file("d"));
  const std::string index = read_file(dir.file("d.idx"));

  for (unsigned threads : {1u, 2u, 7u}) {
    CAPTURE(threads);
    for (const std::uint64_t bad_offset :
         {std::uint64_t{data.size()}, std::uint64_t{data.size() - 23}, ~std::uint64_t{0}}) {
      CAPTURE(bad_offset);
      std::string bad = index;
      std::memcpy(bad.data() + 8 * 700, &bad_offset, 8);
      std::memcpy(bad.data() + 8 * 900, &bad_offset, 8);  // a later one too: the first is reported
      const auto [offset, what] = error_of([&] {
        run_indexed(bytes_of(data), bytes_of(bad), {0, threads}, "tx.bin", "tx.idx");
      });
      CHECK(offset == 8 * 700);
      CHECK(what.find("tx.idx: byte offset 5600: record offset " + std::to_string(bad_offset) +
                      " is out of range: tx.bin has") == 0);
    }
    const std::string truncated = index.substr(0, index.size() - 3);
    const auto [offset, what] = error_of([&] {
      run_indexed(bytes_of(data), bytes_of(truncated), {0, threads});
    });
    CHECK(offset == index.size() - 8);
    CHECK(what.find("truncated index entry: 5 of 8 bytes") != std::string::npos);
  }
  // The last possible header offset is in range.
  std::string edge = index;
  const std::uint64_t last = data.size() - record_header_bytes;
  std::memcpy(edge.data(), &last, 8);
  CHECK_NOTHROW(run_indexed(bytes_of(data), bytes_of(edge), {0, 2}));
}

TEST_CASE("affinity.command_line_exit_codes") {
  scratch_dir dir;
  const std::string data = dir.file("tx"), index = dir.file("tx.idx");
  auto gen = xf::test::run_tool(
      "XF_GEN_AFFINITY", {data, "--index", index, "--records", "20k", "--cards", "2k", "--merchants", "100"});
  REQUIRE_MESSAGE(gen.exit_code == 0, gen.err);
  const auto scan =
      xf::test::run_tool("XF_AFFINITY_CPU", {data, "--merchant", "1", "--json", "--threads", "3"});
  const auto indexed =
      xf::test::run_tool("XF_AFFINITY_CPU", {data, "--index", index, "--merchant", "1", "--json"});
  REQUIRE_MESSAGE(scan.exit_code == 0, scan.err);
  REQUIRE_MESSAGE(indexed.exit_code == 0, indexed.err);
  const auto js = nlohmann::json::parse(scan.out), ji = nlohmann::json::parse(indexed.out);
  CHECK(js["path"] == "scan");
  CHECK(ji["path"] == "index");
  CHECK(js["records"] == 20000);
  CHECK(js["digest"] == ji["digest"]);
  CHECK(js["top"] == ji["top"]);
  const std::vector<merchant_cards> expected = naive_query(parse_all(read_file(data)), 1);
  CHECK(js["digest"] == hex32(naive_digest(expected)));

  const auto repeated =
      xf::test::run_tool("XF_AFFINITY_CPU", {data, "--merchant", "1", "--json", "--repeat", "3"});
  REQUIRE_MESSAGE(repeated.exit_code == 0, repeated.err);
  const auto jr = nlohmann::json::parse(repeated.out);
  CHECK(jr["warm_seconds"].size() == 2);
  CHECK(jr["digest"] == js["digest"]);
  CHECK(xf::test::run_tool("XF_AFFINITY_CPU", {data, "--repeat", "0"}).exit_code == 2);

  CHECK(xf::test::run_tool("XF_AFFINITY_CPU", {"--help"}).exit_code == 0);
  CHECK(xf::test::run_tool("XF_GEN_AFFINITY", {"--help"}).exit_code == 0);
  CHECK(xf::test::run_tool("XF_AFFINITY_CPU", {data, "--merchant", "-1"}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_GEN_AFFINITY", {dir.file("x"), "--records", "lots"}).exit_code == 2);
  CHECK(xf::test::run_tool("XF_GEN_AFFINITY", {dir.file("x"), "--merchants", "0"}).exit_code == 2);
  const auto missing_index = xf::test::run_tool("XF_AFFINITY_CPU", {data, "--index", dir.file("none")});
  CHECK(missing_index.exit_code == 1);
  CHECK(missing_index.err.find(dir.file("none")) != std::string::npos);
  write_file(dir.file("bad.idx"), std::string(7, '\0'));
  const auto bad_index = xf::test::run_tool("XF_AFFINITY_CPU", {data, "--index", dir.file("bad.idx")});
  CHECK(bad_index.exit_code == 1);
  CHECK(bad_index.err.find("byte offset 0") != std::string::npos);
}
