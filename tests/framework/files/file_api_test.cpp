// The reader's view (framework/files/file_api.hpp): read_list's capacity, and file_pages over the cache's
// pages and over flat buffers answering alike — single bytes, runs to a page's or range's end, values
// straddling pages, cooperative copies, and reads outside the declared ranges.
#include "framework/files/file_api.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "framework/files/direct_reads.hpp"
#include "framework/files/file_cache.hpp"
#include "tests/framework/files/pattern_file.hpp"

namespace xf {
namespace {

using test::pattern;
using test::pattern_byte;

fault_site api_site_of(std::uint32_t, std::uint64_t offset) {
  return {"reader", "out", offset};
}

/// The checks both shapes must pass: ranges {file 0: [5000, 15000)} and {file 1: [100, 300)}.
void check_view(const file_pages& pages, const std::vector<std::uint64_t>& sizes, bool paged) {
  CHECK(pages.size(file_id{0}) == sizes[0]);
  CHECK(pages.size(file_id{1}) == sizes[1]);
  const std::byte* b = pages.at(file_id{0}, 5000);
  REQUIRE(b != nullptr);
  CHECK(*b == pattern_byte(0, 5000));
  CHECK(*pages.at(file_id{1}, 299) == pattern_byte(1, 299));
  CHECK(pages.at(file_id{0}, 4999) == nullptr);  // before the range
  CHECK(pages.at(file_id{1}, 300) == nullptr);   // past it
  CHECK(pages.at(file_id{0}, 100) == nullptr);   // another file's range
  // Paged: runs end at the page (8192); flat: at the range's end.
  CHECK(pages.contiguous(file_id{0}, 5000) == (paged ? 8192 - 5000 : 10000));
  CHECK(pages.contiguous(file_id{0}, 14000) == 1000);
  CHECK(pages.contiguous(file_id{0}, 20000) == 0);
  // A value across the page boundary at 8192.
  std::uint64_t expected = 0;
  for (int i = 0; i < 8; ++i) expected |= static_cast<std::uint64_t>(pattern_byte(0, 8188 + i)) << (8 * i);
  CHECK(pages.load<std::uint64_t>(file_id{0}, 8188) == expected);
  // Four cooperating threads copy the whole range; every byte lands once.
  std::vector<std::byte> dst(10000, std::byte{0xEE});
  for (std::uint32_t t = 0; t < 4; ++t) CHECK(pages.copy(dst.data(), file_id{0}, 5000, 10000, t, 4) == 10000);
  const std::vector<std::byte> whole = pattern(0, 15000);
  CHECK(dst == std::vector<std::byte>(whole.begin() + 5000, whole.end()));
  // Past the declared bytes the copy stops and says how far it got.
  std::vector<std::byte> over(400);
  CHECK(pages.copy(over.data(), file_id{1}, 200, 400, 0, 1) == 100);
}

}  // namespace

TEST_CASE("read_list: ranges in order up to its capacity; empty ranges add nothing") {
  read_list list;
  CHECK(list.read(file_id{1}, 10, 0));
  CHECK(list.size() == 0);
  for (std::uint32_t i = 0; i < read_list::capacity; ++i) CHECK(list.read(file_id{i}, 4096 * i, 100));
  CHECK_FALSE(list.read(file_id{9}, 0, 1));
  REQUIRE(list.size() == read_list::capacity);
  CHECK(list[2].file == 2);
  CHECK(list[2].offset == 8192);
  CHECK(list[2].bytes == 100);
  list.clear();
  CHECK(list.size() == 0);
}

TEST_CASE("file_pages: the cache's pages and flat buffers read alike") {
  test::scratch_dir dir;
  const std::vector<std::uint64_t> sizes{40000, 1000};
  std::vector<cache_file> files;
  for (std::uint32_t f = 0; f < sizes.size(); ++f) {
    files.push_back({test::write_pattern_file(dir, "f" + std::to_string(f), f, sizes[f]), api_site_of(0, 0)});
  }
  read_list list;
  REQUIRE(list.read(file_id{0}, 5000, 10000));
  REQUIRE(list.read(file_id{1}, 100, 200));

  SUBCASE("paged") {
    file_cache_spec spec;
    spec.size = 16 * 4096;
    file_cache cache(spec, 1, files, api_site_of, std::chrono::milliseconds(0));
    cache.start();
    std::vector<std::uint32_t> entries(8);
    fetch_item item;
    item.begin(list.data(), list.size(), entries.data(), cache.view().page_shift);
    fetch_counters counters;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    fetch_status status = fetch_status::waiting;
    inline_moves moves;
    while ((status = fetch_step(cache.view(), cache.block(0), item, 0, 0, counters, moves)) ==
           fetch_status::waiting) {
      REQUIRE(std::chrono::steady_clock::now() < give_up);
      std::this_thread::yield();
    }
    REQUIRE(status == fetch_status::resolved);
    check_view(file_pages::paged(&cache.view(), &item), sizes, true);
    fetch_release(cache.view(), item);
  }
  SUBCASE("flat") {
    const std::vector<std::byte> a = pattern(0, 15000), b = pattern(1, 300);
    const file_span spans[] = {{0, 5000, 10000, a.data() + 5000}, {1, 100, 200, b.data() + 100}};
    check_view(file_pages::flat(spans, 2, sizes.data()), sizes, false);
  }
}

}  // namespace xf

namespace xf {

TEST_CASE("direct_reads: unaligned ranges read whole, reused buffers, and a range past the end is an error") {
  test::scratch_dir dir;
  const std::string path = test::write_pattern_file(dir, "f0", 0, 50000);
  const std::vector<std::byte> data = pattern(0, 50000);
  file_table files;  // O_DIRECT where the filesystem takes it: ranges are widened to its alignment
  files.open(path, api_site_of(0, 0));
  direct_reads reads(files);
  const fault_site site{"reader", "out", 12};
  for (const auto& range :
       {std::pair<std::uint64_t, std::uint64_t>{5000, 10000}, {49999, 1}, {0, 50000}, {123, 7}}) {
    const std::uint64_t offset = range.first, bytes = range.second;  // not a structured binding: CAPTURE
    CAPTURE(offset);
    read_list list;
    REQUIRE(list.read(file_id{0}, offset, bytes));
    const file_pages pages = reads.read(list, site);
    std::vector<std::byte> got(bytes);
    CHECK(pages.copy(got.data(), file_id{0}, offset, bytes, 0, 1) == bytes);
    CHECK(std::equal(got.begin(), got.end(), data.begin() + static_cast<std::ptrdiff_t>(offset)));
    CHECK(pages.size(file_id{0}) == 50000);
  }
  read_list past;
  REQUIRE(past.read(file_id{0}, 49000, 2000));
  CHECK_THROWS_WITH_AS(reads.read(past, site), doctest::Contains("operator 'reader', topic 'out', offset 12"),
                       run_error);
  CHECK_THROWS_WITH_AS(
      reads.read(past, site),
      doctest::Contains("f0': the operator reads bytes [49000, 51000), past its size (50000 bytes)"),
      run_error);
}

}  // namespace xf
