// Tests of prefetch_varlen_source: records of different lengths found by scanning their length fields and
// through an index give the same frames, field by field; the counters; and every malformed file is named
// with the byte offset at fault.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "operators/sources/prefetch_varlen_source.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

std::filesystem::path temp_file(const std::string& name, const std::vector<std::byte>& bytes) {
  const auto path =
      std::filesystem::temp_directory_path() / ("xeflow-varlen-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

template <class T>
void put(std::vector<std::byte>& bytes, std::size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

/// Records of 16 + 4·(r % 5) bytes: [u32 length][u32 a = r·10][u64 b = r·1000 + 7][r % 5 u32 padding].
struct dataset {
  std::vector<std::byte> data;
  std::vector<std::byte> index;
  std::vector<std::uint64_t> starts;
};

dataset make_dataset(std::uint64_t records) {
  dataset d;
  for (std::uint64_t r = 0; r < records; ++r) {
    const std::size_t at = d.data.size(), length = 16 + 4 * (r % 5);
    d.starts.push_back(at);
    d.data.resize(at + length);
    put(d.data, at, static_cast<std::uint32_t>(length));
    put(d.data, at + 4, static_cast<std::uint32_t>(r * 10));
    put(d.data, at + 8, r * 1000 + 7);
    d.index.resize(d.index.size() + 8);
    put(d.index, d.index.size() - 8, static_cast<std::uint64_t>(at));
  }
  return d;
}

prefetch_varlen_source::params varlen_params(const std::string& path, const std::string& index = "") {
  prefetch_varlen_source::params p;
  p.path = path;
  p.index = index;
  p.min_record_bytes = 16;
  p.fields = "4:12";  // a, then b as two u32 items
  p.records_per_frame = 7;
  return p;
}

std::uint32_t u32_at(const std::vector<std::byte>& frame, std::uint64_t index) {
  std::uint32_t v = 0;
  std::memcpy(&v, frame.data() + index * 4, 4);
  return v;
}

}  // namespace

TEST_CASE("prefetch_varlen_source.scan_and_index_give_the_fields_field_by_field") {
  constexpr std::uint64_t records = 52;  // 7 frames of 7 and one of 3
  const dataset d = make_dataset(records);
  const auto data = temp_file("data", d.data);
  const auto index = temp_file("index", d.index);
  for (const bool indexed : {false, true}) {
    CAPTURE(indexed);
    prefetch_varlen_source source(varlen_params(data.string(), indexed ? index.string() : ""));
    source.on_start(source_setup(page_bytes, element_type::u32));
    REQUIRE(source.frame_count() == 8);
    for (std::uint64_t o = 0; o < 8; ++o) {
      const std::vector<std::byte> f = produce_frame(source, o, page_bytes, element_type::u32);
      const std::uint64_t n = o < 7 ? 7 : 3;
      REQUIRE(f.size() == n * 12);
      for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t r = o * 7 + k;
        CHECK(u32_at(f, k) == r * 10);
        CHECK((u32_at(f, n + k) | std::uint64_t{u32_at(f, 2 * n + k)} << 32) == r * 1000 + 7);
      }
    }
    CHECK(produce_frame(source, 8, page_bytes, element_type::u32).empty());
    const operator_counters c = source.counters();
    CHECK(c.at("records") == records);
    CHECK(c.at("bytes_gathered") == records * 12);
    CHECK(c.at("dataset_bytes") == d.data.size());
    CHECK(c.at("index_bytes") == (indexed ? d.index.size() : 0));
  }
  std::filesystem::remove(data);
  std::filesystem::remove(index);
}

TEST_CASE("prefetch_varlen_source.names_malformed_files_with_the_offset") {
  dataset d = make_dataset(10);
  // Record 3's length below the minimum.
  put(d.data, d.starts[3], std::uint32_t{8});
  const auto short_record = temp_file("short", d.data);
  prefetch_varlen_source scan(varlen_params(short_record.string()));
  const std::string why = start_error(scan, source_setup(page_bytes, element_type::u32));
  CHECK(why.find("byte offset " + std::to_string(d.starts[3])) != std::string::npos);
  CHECK(why.find("below min_record_bytes (16)") != std::string::npos);

  // The last record runs past the end.
  dataset e = make_dataset(10);
  e.data.resize(e.data.size() - 2);
  const auto truncated = temp_file("truncated", e.data);
  prefetch_varlen_source past(varlen_params(truncated.string()));
  CHECK(start_error(past, source_setup(page_bytes, element_type::u32))
            .find("byte offset " + std::to_string(e.starts[9])) != std::string::npos);

  // An index entry beyond the data, and a truncated index.
  dataset f = make_dataset(10);
  put(f.index, 5 * 8, static_cast<std::uint64_t>(f.data.size() - 4));
  const auto data = temp_file("data2", f.data);
  const auto bad_index = temp_file("bad-index", f.index);
  prefetch_varlen_source through(varlen_params(data.string(), bad_index.string()));
  const std::string why_index = start_error(through, source_setup(page_bytes, element_type::u32));
  CHECK(why_index.find(bad_index.string() + ": byte offset 40") != std::string::npos);
  f.index.resize(f.index.size() - 3);
  const auto short_index = temp_file("short-index", f.index);
  prefetch_varlen_source cut(varlen_params(data.string(), short_index.string()));
  CHECK(start_error(cut, source_setup(page_bytes, element_type::u32)).find("truncated entry") !=
        std::string::npos);

  // Fields beyond the minimum record, and a length field outside it.
  auto p = varlen_params(data.string());
  p.fields = "12:8";
  prefetch_varlen_source wide(p);
  CHECK(start_error(wide, source_setup(page_bytes, element_type::u32)).find("fields '12:8'") !=
        std::string::npos);
  p = varlen_params(data.string());
  p.length_offset = 14;
  prefetch_varlen_source length_outside(p);
  CHECK(start_error(length_outside, source_setup(page_bytes, element_type::u32)).find("length_offset 14") !=
        std::string::npos);
  for (const auto& path : {short_record, truncated, data, bad_index, short_index})
    std::filesystem::remove(path);
}
