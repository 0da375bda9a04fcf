// Tests of table files: a round trip of every column type with a short last frame, the index pages equal
// to a recomputation, the same file from one writer thread or several, and the errors of bad schemas and
// of corrupt, short or shrinking files.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "framework/core/errors.hpp"
#include "operators/sources/columnar_table.hpp"
#include "tests/operators/operator_fixtures.hpp"
#include "tests/operators/sources/table_fixtures.hpp"
#include "topics/columnar_index.hpp"
#include "topics/columnar_view.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

/// The what() of the run_error that `fn` throws ("" when it throws none).
template <class Fn>
std::string run_error_text(Fn&& fn) {
  try {
    fn();
  } catch (const run_error& e) {
    return e.what();
  }
  return "";
}

template <class Fn>
std::string config_error_text(Fn&& fn) {
  try {
    fn();
  } catch (const config_error& e) {
    return e.first().message;
  }
  return "";
}

/// Overwrites `bytes` at byte `at` of the file.
void patch_file(const std::string& path, std::uint64_t at, const std::vector<std::byte>& bytes) {
  std::vector<std::byte> all = read_file(path);
  REQUIRE(at + bytes.size() <= all.size());
  std::copy(bytes.begin(), bytes.end(), all.begin() + static_cast<std::ptrdiff_t>(at));
  write_file(path, all);
}

std::vector<std::byte> le32(std::uint32_t v) {
  return {std::byte(v & 0xff), std::byte((v >> 8) & 0xff), std::byte((v >> 16) & 0xff), std::byte(v >> 24)};
}

}  // namespace

TEST_CASE("columnar_table.round_trip_of_every_type_with_a_short_last_frame") {
  const table_schema schema = every_type_schema(1000);
  const std::uint64_t rows = 3 * 1000 + 123;
  temp_path path;
  write_sample_table(path.str(), schema, rows);
  CHECK_FALSE(std::filesystem::exists(path.str() + ".partial"));

  const columnar_table_file table(path.str());
  CHECK(table.path() == path.str());
  CHECK(table.schema() == schema);
  CHECK(table.rows() == rows);
  CHECK(table.frames() == 4);
  const columnar_geometry g = geometry_of(schema);
  CHECK(table.frame_bytes() == g.frame_bytes());
  CHECK(table.geometry().total_pages == g.total_pages);
  CHECK(std::filesystem::file_size(path.str()) == table_header_bytes + 4 * g.frame_bytes());
  CHECK(table.rows_in_frame(3) == 123);

  // The header's first bytes, as docs/table-format.md lays them out.
  const std::vector<std::byte> bytes = read_file(path.str());
  CHECK(std::memcmp(bytes.data(), "XFTABLE1", 8) == 0);
  CHECK(std::vector<std::byte>(bytes.begin() + 8, bytes.begin() + 12) == le32(1));
  CHECK(std::vector<std::byte>(bytes.begin() + 12, bytes.begin() + 16) == le32(1000));
  CHECK(std::memcmp(bytes.data() + table_descriptors_at + table_descriptor_bytes, "c_i8", 5) == 0);

  page_frame frame(table.frame_bytes()), again(table.frame_bytes());
  std::vector<std::byte> expected(columnar_max_chars);
  for (std::uint64_t k = 0; k < table.frames(); ++k) {
    CAPTURE(k);
    table.read_frame(k, frame.data());
    // The frame is byte for byte the file's.
    CHECK(std::memcmp(frame.data(), bytes.data() + table_header_bytes + k * table.frame_bytes(),
                      table.frame_bytes()) == 0);
    const columnar_view view(table.geometry(), frame.data());
    REQUIRE(view.indexed());
    REQUIRE(view.rows() == (k < 3 ? 1000u : 123u));
    for (std::uint32_t c = 0; c < schema.columns.size(); ++c) {
      const column_layout& l = schema.columns[c].layout;
      for (std::uint32_t r = 0; r < view.rows(); ++r) {
        sample_value(k * 1000 + r, c, l, expected.data());
        if (std::memcmp(view.data() + table.geometry().value_offset(c, r), expected.data(),
                        l.value_bytes()) != 0) {
          FAIL_CHECK("column " << c << " row " << r << " differs");
          break;
        }
      }
    }
    // The index pages are what build_columnar_index makes of the data pages.
    std::memcpy(again.data(), frame.data(), table.frame_bytes());
    std::memset(again.data(), 0xab, std::uint64_t{g.index_pages} * columnar_page_bytes);
    std::memset(again.data(), 0, std::uint64_t{g.index_pages} * columnar_page_bytes);
    build_columnar_index(g, again.data(), view.rows());
    CHECK(std::memcmp(again.data(), frame.data(), std::uint64_t{g.index_pages} * columnar_page_bytes) == 0);
    // And a zone by hand: column c_u32 (4), page 0.
    const std::uint32_t n = view.rows_in_page(4, 0);
    std::uint32_t lo = ~0u, hi = 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      lo = std::min(lo, view.value<std::uint32_t>(4, r));
      hi = std::max(hi, view.value<std::uint32_t>(4, r));
    }
    CHECK(view.zone(4, 0).rows == n);
    CHECK(view.zone(4, 0).min_bits == lo);
    CHECK(view.zone(4, 0).max_bits == hi);
    CHECK(page_may_hold(g, frame.data(), 4, 0, view.value<std::uint32_t>(4, n - 1)));
  }
  // The pages past the short frame's rows are described as empty.
  table.read_frame(3, frame.data());
  const columnar_view last(table.geometry(), frame.data());
  for (std::uint32_t c = 0; c < g.column_count; ++c)
    for (std::uint32_t p = last.pages(c); p < g.columns[c].pages; ++p) CHECK(last.zone(c, p).rows == 0);
}

TEST_CASE("columnar_table.writer_threads_make_the_same_file") {
  const table_schema schema = every_type_schema(300);
  temp_path one, many;
  write_sample_table(one.str(), schema, 10 * 300 + 7, 1);
  write_sample_table(many.str(), schema, 10 * 300 + 7, 4);
  CHECK(read_file(one.str()) == read_file(many.str()));
}

TEST_CASE("columnar_table.empty_and_exact_tables") {
  const table_schema schema = every_type_schema(64);
  temp_path empty, exact;
  write_sample_table(empty.str(), schema, 0);
  const columnar_table_file e(empty.str());
  CHECK(e.rows() == 0);
  CHECK(e.frames() == 0);
  CHECK(std::filesystem::file_size(empty.str()) == table_header_bytes);
  page_frame frame(e.frame_bytes());
  CHECK(has(run_error_text([&] { e.read_frame(0, frame.data()); }), "frame 0 of a table of 0 frames"));

  write_sample_table(exact.str(), schema, 2 * 64);
  const columnar_table_file x(exact.str());
  CHECK(x.frames() == 2);
  CHECK(x.rows_in_frame(1) == 64);
}

TEST_CASE("columnar_table.schemas_that_make_no_table") {
  table_schema s;
  s.rows_per_frame = 16;
  CHECK(has(config_error_text([&] { geometry_of(s); }), "at least one column"));
  s.columns = {{"a", {element_type::u32, 0, 0, 0}}, {"a", {element_type::u8, 0, 0, 0}}};
  CHECK(has(config_error_text([&] { geometry_of(s); }), "column 1 'a': a duplicate column name"));
  s.columns = {{"a.b", {element_type::u32, 0, 0, 0}}};
  CHECK(has(config_error_text([&] { geometry_of(s); }), "not a valid column name"));
  s.columns = {{std::string(48, 'x'), {element_type::u32, 0, 0, 0}}};
  CHECK(has(config_error_text([&] { geometry_of(s); }), "at most 47"));
  s.columns = {{std::string(47, 'x'), {element_type::u32, 0, 100, 2}}};
  CHECK(has(config_error_text([&] { geometry_of(s); }), "bloom_bits 100 is not a power of two"));
  s.columns = {{"a", {element_type::u32, 0, 0, 0}}};
  s.rows_per_frame = 0;
  CHECK(has(config_error_text([&] { geometry_of(s); }), "rows_per_frame"));

  // write_columnar_table refuses it before creating anything.
  temp_path path;
  CHECK_THROWS_AS(write_columnar_table(path.str(), s, 1, [](auto, auto, const auto&) {}), config_error);
  CHECK_FALSE(std::filesystem::exists(path.str()));
}

TEST_CASE("columnar_table.a_failing_fill_leaves_no_file") {
  const table_schema schema = every_type_schema(100);
  for (unsigned threads : {1u, 3u}) {
    CAPTURE(threads);
    temp_path path;
    CHECK_THROWS_WITH_AS(write_columnar_table(
                             path.str(), schema, 1000,
                             [](std::uint64_t first, std::uint32_t, const columnar_writer&) {
                               if (first == 500) throw std::runtime_error("fill failed at 500");
                             },
                             threads),
                         "fill failed at 500", std::runtime_error);
    CHECK_FALSE(std::filesystem::exists(path.str()));
    CHECK_FALSE(std::filesystem::exists(path.str() + ".partial"));
  }
}

TEST_CASE("columnar_table.write_errors_name_the_path") {
  const std::string path = "/nonexistent-xeflow-dir/t.xft";
  const std::string what = run_error_text([&] { write_sample_table(path, every_type_schema(10), 5); });
  CHECK(has(what, path + ".partial"));
  CHECK(has(what, "No such file"));
}

TEST_CASE("columnar_table.corrupt_and_short_files") {
  const table_schema schema = every_type_schema(200);
  temp_path good;
  write_sample_table(good.str(), schema, 450);
  const std::vector<std::byte> original = read_file(good.str());
  const std::uint64_t frame_bytes = geometry_of(schema).frame_bytes();
  temp_path bad;
  auto open_error = [&](const std::vector<std::byte>& bytes) {
    write_file(bad.str(), bytes);
    return run_error_text([&] { columnar_table_file f(bad.str()); });
  };
  auto patched = [&](std::uint64_t at, const std::vector<std::byte>& bytes) {
    std::vector<std::byte> b = original;
    std::copy(bytes.begin(), bytes.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
    return b;
  };

  SUBCASE("missing") {
    temp_path never;
    const std::string what = run_error_text([&] { columnar_table_file f(never.str()); });
    CHECK(has(what, "table file '" + never.str() + "'"));
    CHECK(has(what, "No such file"));
  }
  SUBCASE("shorter than a header") {
    const std::string what = open_error(std::vector<std::byte>(original.begin(), original.begin() + 100));
    CHECK(has(what, bad.str()));
    CHECK(has(what, "it has 100 bytes, fewer than the 4096 of a table header"));
  }
  SUBCASE("not a table") {
    CHECK(has(open_error(patched(0, {std::byte{'Y'}})), "not a table file"));
  }
  SUBCASE("another version") {
    CHECK(has(open_error(patched(8, le32(2))), "table format version 2; this build reads version 1"));
  }
  SUBCASE("no columns") {
    CHECK(has(open_error(patched(16, le32(0))), "0 columns"));
  }
  SUBCASE("a bad element") {
    CHECK(has(open_error(patched(table_descriptors_at + 48, {std::byte{77}})),
              "column 0's descriptor: element 77 is no element type"));
  }
  SUBCASE("a name without its zero") {
    CHECK(has(open_error(patched(table_descriptors_at, std::vector<std::byte>(48, std::byte{'x'}))),
              "not zero-terminated"));
  }
  SUBCASE("a schema that makes no frame") {
    CHECK(
        has(open_error(patched(table_descriptors_at + 56, le32(100))), "its schema makes no columnar frame"));
  }
  SUBCASE("frame size disagrees") {
    CHECK(has(open_error(patched(40, le32(4096))), "frames of 4096 bytes; its columns make frames of"));
  }
  SUBCASE("frame count disagrees") {
    CHECK(has(open_error(patched(32, le32(2))), "the header says 2 frames; 450 rows of 200 a frame make 3"));
  }
  SUBCASE("truncated") {
    const std::string what = open_error(std::vector<std::byte>(original.begin(), original.end() - 10));
    CHECK(has(what, bad.str()));
    CHECK(has(what, "(truncated?)"));
  }
  SUBCASE("a frame whose index is not built") {
    write_file(bad.str(), original);
    patch_file(bad.str(), table_header_bytes + frame_bytes + 12, le32(0));  // frame 1's flags
    const columnar_table_file f(bad.str());
    page_frame frame(f.frame_bytes());
    f.read_frame(0, frame.data());
    const std::string what = run_error_text([&] { f.read_frame(1, frame.data()); });
    CHECK(has(what, bad.str()));
    CHECK(has(what, "frame 1's index pages are not built"));
  }
  SUBCASE("a frame with the wrong rows") {
    write_file(bad.str(), original);
    patch_file(bad.str(), table_header_bytes + 2 * frame_bytes + 8, le32(200));  // frame 2 holds 50
    const columnar_table_file f(bad.str());
    page_frame frame(f.frame_bytes());
    CHECK(has(run_error_text([&] { f.read_frame(2, frame.data()); }),
              "frame 2 holds 200 rows; the table's frame 2 holds 50"));
  }
  SUBCASE("a file that shrinks after it was opened") {
    write_file(bad.str(), original);
    const columnar_table_file f(bad.str());
    REQUIRE(::truncate(bad.str().c_str(), static_cast<off_t>(table_header_bytes + frame_bytes + 100)) == 0);
    page_frame frame(f.frame_bytes());
    f.read_frame(0, frame.data());
    const std::string what = run_error_text([&] { f.read_frame(1, frame.data()); });
    CHECK(has(what, bad.str()));
    CHECK(has(what, "frame 1 ends at byte " + std::to_string(table_header_bytes + frame_bytes + 100)));
  }
}
