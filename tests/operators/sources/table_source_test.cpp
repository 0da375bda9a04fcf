// Tests of table_source: frames byte for byte the file's over several passes and threads, the topic's
// schema checked against the file's, in-place publishing that skips reads, and its registration.
#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/model/registry.hpp"
#include "operators/builtin.hpp"
#include "operators/sources/table_source.hpp"
#include "tests/operators/operator_fixtures.hpp"
#include "tests/operators/sources/table_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

/// The setup of a source writing the columnar topic "table" of `schema`, `capacity` heap frames.
operator_setup table_setup(const table_schema& schema, std::uint32_t capacity = 4) {
  topic_info t;
  t.name = "table";
  t.columnar = geometry_of(schema);
  t.frame_bytes = t.columnar->frame_bytes();
  t.capacity = capacity;
  for (const table_column& c : schema.columns) t.column_names.push_back(c.name);
  operator_setup s;
  s.name = "src";
  s.outputs.push_back(t);
  return s;
}

table_schema small_schema() {
  table_schema s;
  s.rows_per_frame = 700;
  s.columns = {{"KSEQ", {element_type::u32, 0, 1024, 3}},
               {"K2", {element_type::u16, 0, 0, 0}},
               {"S1", {element_type::u8, 8, 0, 0}}};
  return s;
}

/// The run_error on_start throws for `setup` ("" when none).
std::string table_start_error(table_source& source, const operator_setup& setup) {
  try {
    source.on_start(setup);
  } catch (const run_error& e) {
    CHECK(e.site().operator_name == "src");
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("table_source.streams_the_files_frames_for_every_pass") {
  const table_schema schema = small_schema();
  temp_path path;
  write_sample_table(path.str(), schema, 3 * 700 + 11);  // 4 frames, the last short
  const std::vector<std::byte> file = read_file(path.str());
  const columnar_table_file table(path.str());
  const std::uint64_t frame_bytes = table.frame_bytes();

  table_source source(table_source::params{path.str(), 3});
  source.on_start(table_setup(schema));
  CHECK(source.frame_count() == 12);
  CHECK(source.period() == 4);
  // Four threads produce every offset of three passes; each is the file's frame offset % 4.
  std::vector<std::vector<std::byte>> frames(12);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      page_frame buffer(frame_bytes);
      for (std::uint64_t o = t; o < 12; o += 4) {
        frame_out out = buffer.out();
        REQUIRE(source.produce(o, out));
        frames[o].assign(buffer.data(), buffer.data() + out.bytes);
      }
    });
  for (std::thread& t : pool) t.join();
  for (std::uint64_t o = 0; o < 12; ++o) {
    CAPTURE(o);
    REQUIRE(frames[o].size() == frame_bytes);
    const std::uint64_t k = o % 4;
    CHECK(std::memcmp(frames[o].data(), file.data() + table_header_bytes + k * frame_bytes, frame_bytes) ==
          0);
  }
  page_frame buffer(frame_bytes);
  frame_out past = buffer.out();
  CHECK_FALSE(source.produce(12, past));
  CHECK_FALSE(source.produce(1000, past));
  CHECK(source.counters() == operator_counters{{"frames_read", 12},
                                               {"frames_in_place", 0},
                                               {"bytes_read", 12 * frame_bytes},
                                               {"bytes_left", 0}});

  // The replay reads the same frames and counts nothing.
  frame_out replay = buffer.out();
  REQUIRE(source.expected(5, replay));
  CHECK(replay.bytes == frame_bytes);
  CHECK(std::memcmp(buffer.data(), file.data() + table_header_bytes + frame_bytes, frame_bytes) == 0);
  CHECK_FALSE(source.expected(12, replay));
  CHECK(source.counters().at("frames_read") == 12);
  source.on_stop();
}

TEST_CASE("table_source.skips_reads_of_a_resident_table") {
  const table_schema schema = small_schema();
  temp_path path;
  write_sample_table(path.str(), schema, 2 * 700 + 1);  // 3 frames
  const std::vector<std::byte> file = read_file(path.str());
  const std::uint64_t frame_bytes = geometry_of(schema).frame_bytes();

  SUBCASE("capacity holds the table") {
    table_source source(table_source::params{path.str(), 4});
    source.on_start(table_setup(schema, 3));
    std::vector<page_frame> heap;
    for (int i = 0; i < 3; ++i) heap.emplace_back(frame_bytes);
    for (std::uint64_t o = 0; o < 3; ++o) {
      frame_out out = heap[o].out(static_cast<std::uint32_t>(o));
      REQUIRE(source.produce(o, out));
    }
    // Mark every heap frame, header included: a publish in place must not touch it.
    for (const page_frame& f : heap) {
      f.data()[0] = std::byte{0x5a};
      f.data()[frame_bytes - 1] = std::byte{0xa5};
    }
    for (std::uint64_t o = 3; o < 12; ++o) {
      frame_out out = heap[o % 3].out(static_cast<std::uint32_t>(o % 3));
      REQUIRE(source.produce(o, out));
      CHECK(out.bytes == frame_bytes);
    }
    for (const page_frame& f : heap) {
      CHECK(f.data()[0] == std::byte{0x5a});
      CHECK(f.data()[frame_bytes - 1] == std::byte{0xa5});
    }
    CHECK(source.counters() == operator_counters{{"frames_read", 3},
                                                 {"frames_in_place", 9},
                                                 {"bytes_read", 3 * frame_bytes},
                                                 {"bytes_left", 0}});
    frame_out end = heap[0].out(0);
    CHECK_FALSE(source.produce(12, end));
  }
  SUBCASE("capacity smaller than the table") {
    // Heap frame o % 2 gets file frame o % 3: it never holds what the next offset needs, so every one reads.
    table_source source(table_source::params{path.str(), 2});
    source.on_start(table_setup(schema, 2));
    std::vector<page_frame> heap;
    for (int i = 0; i < 2; ++i) heap.emplace_back(frame_bytes);
    for (std::uint64_t o = 0; o < 6; ++o) {
      frame_out out = heap[o % 2].out(static_cast<std::uint32_t>(o % 2));
      REQUIRE(source.produce(o, out));
      CHECK(std::memcmp(heap[o % 2].data(), file.data() + table_header_bytes + (o % 3) * frame_bytes,
                        frame_bytes) == 0);
    }
    CHECK(source.counters() == operator_counters{{"frames_read", 6},
                                                 {"frames_in_place", 0},
                                                 {"bytes_read", 6 * frame_bytes},
                                                 {"bytes_left", 0}});
  }
  SUBCASE("frames outside the heap are always read") {
    table_source source(table_source::params{path.str(), 2});
    source.on_start(table_setup(schema, 3));
    page_frame buffer(frame_bytes);
    for (std::uint64_t o = 0; o < 6; ++o) {
      frame_out out = buffer.out(7);  // an index past the heap's frames
      REQUIRE(source.produce(o, out));
    }
    CHECK(source.counters().at("frames_read") == 6);
  }
}

TEST_CASE("table_source.reads_only_the_parts_its_readers_name") {
  // Frames of 40 000 rows: each column's pages are wider than the gap reads join across.
  table_schema schema = small_schema();
  schema.rows_per_frame = 40000;
  temp_path path;
  write_sample_table(path.str(), schema, 2 * 40000 + 1);  // 3 frames, the last of one row
  const std::vector<std::byte> file = read_file(path.str());
  const columnar_geometry g = geometry_of(schema);
  const std::uint64_t frame_bytes = g.frame_bytes(), index_bytes = std::uint64_t{g.index_pages} * 4096;
  // Readers that name the index pages, K2's first page, and S1's pages on frames whose K2 page is in place
  // (the selector sees the index and, for what it named before, nothing else: it reads only the index).
  std::uint64_t calls = 0;
  const frame_selector select = [&](const std::byte* frame, std::vector<frame_range>& out) {
    ++calls;
    CHECK(columnar_header(frame).magic == columnar_magic);
    out.push_back({0, index_bytes});
    out.push_back({g.page_offset(1, 0), 4096});
    if (columnar_header(frame).rows > 1)
      for (std::uint32_t p = 0; p < g.columns[2].pages; ++p) out.push_back({g.page_offset(2, p), 4096});
  };
  table_source source(table_source::params{path.str(), 2});
  source.on_start(table_setup(schema, 3));
  std::vector<page_frame> heap;
  for (int i = 0; i < 3; ++i) heap.emplace_back(frame_bytes);
  std::uint64_t expected_bytes = 0;
  for (std::uint64_t o = 0; o < 6; ++o) {
    page_frame& f = heap[o % 3];
    if (o < 3) std::memset(f.data(), 0x77, frame_bytes);
    frame_out out = f.out(static_cast<std::uint32_t>(o % 3));
    out.parts = &select;
    REQUIRE(source.produce(o, out));
    CHECK(out.bytes == frame_bytes);
    if (o >= 3) continue;  // the table is resident: the second pass reads nothing
    const std::byte* in_file = file.data() + table_header_bytes + o * frame_bytes;
    std::vector<frame_range> parts;
    select(in_file, parts);
    calls -= 1;
    join_ranges(parts, 0, columnar_table_file::part_read_gap_bytes);
    std::vector<bool> read(frame_bytes / 4096, false);
    for (const frame_range& r : parts)
      for (std::uint64_t p = r.offset / 4096; p < (r.offset + r.bytes) / 4096 && p < read.size(); ++p)
        read[p] = true;
    std::uint64_t pages = 0;
    for (std::uint64_t p = 0; p < read.size(); ++p) {
      CAPTURE(o);
      CAPTURE(p);
      if (read[p]) {
        ++pages;
        CHECK(std::memcmp(f.data() + p * 4096, in_file + p * 4096, 4096) == 0);
      } else {
        CHECK(f.data()[p * 4096] == std::byte{0x77});  // left as it was
      }
    }
    expected_bytes += pages * 4096;
    CHECK(pages < frame_bytes / 4096);
  }
  CHECK(calls == 3);
  CHECK(source.counters() == operator_counters{{"frames_read", 3},
                                               {"frames_in_place", 3},
                                               {"bytes_read", expected_bytes},
                                               {"bytes_left", 3 * frame_bytes - expected_bytes}});
  // The replay still reads whole frames.
  page_frame whole(frame_bytes);
  frame_out replay = whole.out();
  REQUIRE(source.expected(1, replay));
  CHECK(std::memcmp(whole.data(), file.data() + table_header_bytes + frame_bytes, frame_bytes) == 0);
}

TEST_CASE("table_source.refuses_a_topic_unlike_the_file") {
  const table_schema schema = small_schema();
  temp_path path;
  write_sample_table(path.str(), schema, 10);
  table_source source(table_source::params{path.str(), 1});

  table_schema other = schema;
  other.columns[2].layout.chars = 9;
  std::string what = table_start_error(source, table_setup(other));
  CHECK(has(what, "topic 'table'"));
  CHECK(has(what,
            "column 2: the topic has 'S1' char(9), the table file '" + path.str() + "' has 'S1' char(8)"));

  other = schema;
  other.columns[1].name = "K3";
  CHECK(
      has(table_start_error(source, table_setup(other)), "column 1: the topic has 'K3' u16, the table file"));

  other = schema;
  other.columns[0].layout.bloom_bits = 2048;
  CHECK(has(table_start_error(source, table_setup(other)),
            "column 0: the topic has 'KSEQ' u32, bloom 2048 bits 3 hashes, the table file '" + path.str() +
                "' has 'KSEQ' u32, bloom 1024 bits 3 hashes"));

  other = schema;
  other.columns.pop_back();
  CHECK(has(table_start_error(source, table_setup(other)),
            "column 2: the topic has 2 columns, the table file"));

  other = schema;
  other.columns.push_back({"X", {element_type::f32, 0, 0, 0}});
  CHECK(
      has(table_start_error(source, table_setup(other)), "column 3: the topic has 'X' f32, the table file"));

  other = schema;
  other.rows_per_frame = 800;
  CHECK(has(table_start_error(source, table_setup(other)),
            "rows_per_frame: the topic has 800, the table file"));

  operator_setup rows = source_setup(page_bytes);
  CHECK(has(table_start_error(source, rows), "topic 'out': the output topic is not columnar"));

  temp_path never;
  table_source missing(table_source::params{never.str(), 1});
  const std::string absent = table_start_error(missing, table_setup(schema));
  CHECK(has(absent, "topic 'table'"));
  CHECK(has(absent, never.str()));
}

TEST_CASE("table_source.registered_with_its_parameters") {
  operator_registry registry;
  register_builtin_cpu_operators(registry);
  const operator_entry* entry = registry.find("table_source");
  REQUIRE(entry);
  CHECK(entry->info.role == operator_role::source);
  REQUIRE(entry->info.find_param("path"));
  CHECK(entry->info.find_param("path")->default_value == std::nullopt);
  REQUIRE(entry->info.find_param("passes"));
  CHECK(entry->info.find_param("passes")->min == 1);

  const table_schema schema = small_schema();
  temp_path path;
  write_sample_table(path.str(), schema, 701);
  std::unique_ptr<cpu_operator> op = entry->make_cpu({{"path", path.str()}, {"passes", std::int64_t{2}}}, {});
  auto* source = dynamic_cast<table_source*>(op.get());
  REQUIRE(source);
  source->on_start(table_setup(schema));
  CHECK(source->frame_count() == 4);
  page_frame buffer(source->file().frame_bytes());
  frame_out out = buffer.out();
  CHECK(source->produce(3, out));
  CHECK(columnar_view(source->file().geometry(), buffer.data()).rows() == 1);
}
