// Tests of the prefetch source for declared record layouts and of its write-back sink: the fields of each
// frame's records, field by field; the last frame short; the replay equal to the stream; the counters; the
// write-back storing into the right records; and every bad configuration named.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/pack.hpp"
#include "framework/model/registry.hpp"
#include "operators/sinks/prefetch_writeback.hpp"
#include "operators/sources/prefetch/record_frames.hpp"
#include "operators/sources/prefetch_source.hpp"
#include "tests/operators/operator_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

/// `records` records of `words` u32 words: word w of record r is r · 1000 + w.
std::vector<std::byte> record_dataset(std::uint64_t records, std::uint32_t words) {
  std::vector<std::byte> bytes(records * words * 4);
  for (std::uint64_t r = 0; r < records; ++r)
    for (std::uint32_t w = 0; w < words; ++w) {
      const auto v = static_cast<std::uint32_t>(r * 1000 + w);
      std::memcpy(bytes.data() + (r * words + w) * 4, &v, 4);
    }
  return bytes;
}

std::uint32_t word_at(const std::vector<std::byte>& bytes, std::uint64_t index) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + index * 4, 4);
  return v;
}

prefetch_source::params prefetch_params(const std::string& path) {
  prefetch_source::params p;
  p.path = path;
  p.record_bytes = 16;
  p.fields = "0:4, 8:8";  // words 0, 2 and 3 of each record
  p.records_per_frame = 4;
  return p;
}

/// The run_error message of starting `op` with `setup`, or "" when it starts.
template <class Op>
std::string start_error(Op& op, const operator_setup& setup) {
  try {
    op.on_start(setup);
  } catch (const run_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("prefetch.source_gathers_declared_fields_field_by_field") {
  temp_path file;
  write_file(file.str(), record_dataset(10, 4));
  prefetch_source source(prefetch_params(file.str()));
  source.on_start(source_setup(page_bytes, element_type::u32));
  REQUIRE(source.frame_count() == 3);  // 4 + 4 + 2 records

  for (std::uint64_t o = 0; o < 3; ++o) {
    CAPTURE(o);
    const auto frame = produce_frame(source, o, page_bytes, element_type::u32);
    const std::uint64_t n = o < 2 ? 4 : 2;
    REQUIRE(frame.size() == n * 12);
    const std::uint32_t words[] = {0, 2, 3};
    for (std::uint64_t i = 0; i < 3; ++i)
      for (std::uint64_t r = 0; r < n; ++r) CHECK(word_at(frame, i * n + r) == (o * 4 + r) * 1000 + words[i]);
    // The replay is the stream.
    frame_buffer replay(page_bytes, element_type::u32);
    frame_out out = replay.out();
    REQUIRE(source.expected(o, out));
    CHECK(std::memcmp(replay.data(), frame.data(), frame.size()) == 0);
  }
  CHECK(produce_frame(source, 3, page_bytes, element_type::u32).empty());
  const operator_counters c = source.counters();
  CHECK(c.at("records") == 10);
  CHECK(c.at("records_per_frame") == 4);
  CHECK(c.at("bytes_gathered") == 120);  // 12 of every 16 bytes crossed
  CHECK(c.at("dataset_bytes") == 160);
}

TEST_CASE("prefetch.source_whole_records_and_default_frames") {
  temp_path file;
  const auto data = record_dataset(3000, 2);
  write_file(file.str(), data);
  prefetch_source::params p;
  p.path = file.str();
  p.record_bytes = 8;  // fields empty: the whole record; records_per_frame 0: as many as fit
  prefetch_source source(p);
  source.on_start(source_setup(page_bytes, element_type::u32));
  CHECK(source.frames().records_per_frame == 512);
  REQUIRE(source.frame_count() == 6);  // 3000 = 5 · 512 + 440
  // Two items per record, field by field: word 0 of every record, then word 1.
  const auto last = produce_frame(source, 5, page_bytes, element_type::u32);
  REQUIRE(last.size() == 440 * 8);
  CHECK(word_at(last, 0) == 2560 * 1000);
  CHECK(word_at(last, 440) == 2560 * 1000 + 1);
  // One item of the whole record: the frame is the dataset's bytes as they are.
  p.item_bytes = 8;
  prefetch_source whole(p);
  whole.on_start(source_setup(page_bytes, element_type::u32));
  const auto frame = produce_frame(whole, 1, page_bytes, element_type::u32);
  REQUIRE(frame.size() == page_bytes);
  CHECK(std::memcmp(frame.data(), data.data() + page_bytes, page_bytes) == 0);
}

TEST_CASE("prefetch.source_names_what_is_wrong") {
  temp_path file;
  write_file(file.str(), record_dataset(10, 4));
  struct bad_case {
    const char* what;
    void (*change)(prefetch_source::params&);
    element_type element;
    const char* message;
  };
  const bad_case cases[] = {
      {"missing file", [](prefetch_source::params& p) { p.path += ".missing"; }, element_type::u32,
       "cannot open"},
      {"partial record", [](prefetch_source::params& p) { p.record_bytes = 48; }, element_type::u32,
       "partial record at byte offset 144"},
      {"more records than the file", [](prefetch_source::params& p) { p.records = 11; }, element_type::u32,
       "holds 10 whole records"},
      {"malformed fields", [](prefetch_source::params& p) { p.fields = "0:4;8:4"; }, element_type::u32,
       "expected ',' or the end at character 4"},
      {"field past the record", [](prefetch_source::params& p) { p.fields = "12:8"; }, element_type::u32,
       "a field ends past the record"},
      {"odd item size", [](prefetch_source::params& p) { p.item_bytes = 3; }, element_type::u32,
       "item size must be 1, 2, 4, 8 or 16"},
      {"items not whole elements", [](prefetch_source::params&) {}, element_type::f64, "not whole elements"},
      {"records per frame too many", [](prefetch_source::params& p) { p.records_per_frame = 400; },
       element_type::u32, "holds 341 records of 12 bytes, not records_per_frame 400"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.what);
    prefetch_source::params p = prefetch_params(file.str());
    c.change(p);
    prefetch_source source(p);
    const std::string message = start_error(source, source_setup(page_bytes, c.element));
    CHECK(message.find(c.message) != std::string::npos);
    CHECK(message.find("src") != std::string::npos);
    CHECK(message.find(file.str()) != std::string::npos);
  }
}

TEST_CASE("prefetch.source_takes_its_record_as_a_datatype") {
  temp_path file;
  write_file(file.str(), record_dataset(10, 4));
  // Words 0, 2 and 3 of 16-byte records, as a datatype: a struct of them resized to the record.
  prefetch_source::params typed = prefetch_params(file.str());
  typed.record_bytes = 0;
  typed.fields.clear();
  typed.record = dt::resized(
      dt::struct_type({1, 1, 1}, {0, 8, 12}, {dt::primitive::u32, dt::primitive::f32, dt::primitive::i32}), 0,
      16);
  prefetch_source by_fields(prefetch_params(file.str())), by_type(typed);
  by_fields.on_start(source_setup(page_bytes, element_type::u32));
  by_type.on_start(source_setup(page_bytes, element_type::u32));
  CHECK(by_type.frames().layout.field_count == 2);  // words 2 and 3 follow on: one field 8:8
  CHECK(by_type.frames().layout.fields[1].bytes == 8);
  REQUIRE(by_type.frame_count() == by_fields.frame_count());
  for (std::uint64_t o = 0; o < by_fields.frame_count(); ++o) {
    CAPTURE(o);
    const auto frame = produce_frame(by_type, o, page_bytes, element_type::u32);
    CHECK_FALSE(frame.empty());
    CHECK(frame == produce_frame(by_fields, o, page_bytes, element_type::u32));
  }
}

TEST_CASE("prefetch.frames_are_packs_of_the_frame_datatype") {
  // The field-by-field frame is MPI's pack of a datatype over the records: item i of record r is element r
  // of block i. Checked on both layouts of the tests above, and one of 2-byte items.
  temp_path file;
  const auto data = record_dataset(10, 4);
  write_file(file.str(), data);
  for (const std::int64_t item : {4, 2}) {
    CAPTURE(item);
    prefetch_source::params p = prefetch_params(file.str());
    p.item_bytes = item;
    prefetch_source source(p);
    source.on_start(source_setup(page_bytes, element_type::u16));
    const prefetch::record_frames& frames = source.frames();
    for (std::uint64_t o = 0; o < source.frame_count(); ++o) {
      CAPTURE(o);
      const std::uint64_t n = frames.records_in(o);
      const dt::committed_type type = dt::commit(prefetch::frame_datatype(frames.layout, n));
      std::vector<std::byte> packed(static_cast<std::size_t>(dt::packed_bytes(type, 1)));
      dt::pack(type, 1, data.data() + frames.first_record(o) * frames.layout.record_bytes, packed.data());
      CHECK(packed == produce_frame(source, o, page_bytes, element_type::u16));
    }
  }
}

TEST_CASE("prefetch.record_datatype_problems_are_named_at_load") {
  operator_registry registry;
  registry.add<prefetch_source>("prefetch_source");
  const operator_info& info = registry.find("prefetch_source")->info;
  const auto problems = [&](param_map values) {
    values["path"] = std::string("dataset.bin");
    std::string text;
    for (const param_problem& p : normalize_params(info, values)) text += p.key + ": " + p.message + "\n";
    return text;
  };
  const dt::datatype xyz = dt::resized(dt::contiguous(3, dt::primitive::f32), 0, 64);
  CHECK(problems({{"record", xyz}}).empty());
  CHECK(problems({{"record", xyz}, {"record_bytes", std::int64_t{64}}}) ==
        ": give record_bytes (with fields) or record, not both\n");
  CHECK(problems({{"record", xyz}, {"fields", std::string("0:12")}}) ==
        ": give fields (with record_bytes) or record, not both\n");
  CHECK(problems({}) == ": give record_bytes (with fields), or record (a datatype)\n");
  CHECK(problems({{"record", dt::resized(dt::contiguous(3, dt::primitive::f32), -4, 64)}}) ==
        "record: parameter 'record': a record datatype spans [0, record size), not [-4, 60) (resize it: "
        "resized "
        "with lb 0)\n");
  CHECK(problems({{"record", dt::resized(dt::contiguous(3, dt::primitive::f32), 0, 8)}}) ==
        "record: parameter 'record': the record datatype's data lies outside its extent [0, 8)\n");
  // Fields out of address order: the source gathers a record front to back.
  CHECK(problems({{"record",
                   dt::resized(dt::struct_type({1, 1}, {8, 0}, {dt::primitive::f32, dt::primitive::f32}), 0,
                               16)}}) == ": record: fields must be in offset order and must not overlap\n");
  CHECK(problems({{"record", xyz}, {"item_bytes", std::int64_t{8}}}) ==
        ": record: field sizes must be whole items\n");
}

TEST_CASE("prefetch.writeback_stores_fields_into_their_records") {
  temp_path file;
  const auto data = record_dataset(10, 4);
  write_file(file.str(), data);
  prefetch_writeback::params p;
  p.path = file.str();
  p.record_bytes = 16;
  p.fields = "4:4";  // word 1
  p.records_per_frame = 4;
  prefetch_writeback sink(p);
  sink.on_start(sink_setup(page_bytes, nullptr, element_type::u32, 2));
  // Frames as a GPU map leaves them: as long as the input (12 bytes per record), written field first.
  for (std::uint64_t o = 0; o < 3; ++o) {
    const std::uint64_t n = o < 2 ? 4 : 2;
    std::vector<std::byte> frame(n * 12);
    for (std::uint64_t r = 0; r < n; ++r) {
      const auto v = static_cast<std::uint32_t>(7'000'000 + o * 4 + r);
      std::memcpy(frame.data() + r * 4, &v, 4);
    }
    sink.on_frame(o, frame_in{frame.data(), frame.size(), element_type::u32});
  }
  sink.on_stop();
  CHECK(sink.counters().at("records_written") == 10);
  const auto after = read_file(file.str());
  REQUIRE(after.size() == data.size());
  for (std::uint64_t r = 0; r < 10; ++r) {
    CAPTURE(r);
    CHECK(word_at(after, r * 4 + 0) == r * 1000);
    CHECK(word_at(after, r * 4 + 1) == 7'000'000 + r);
    CHECK(word_at(after, r * 4 + 2) == r * 1000 + 2);
    CHECK(word_at(after, r * 4 + 3) == r * 1000 + 3);
  }
}

TEST_CASE("prefetch.writeback_names_bad_frames") {
  temp_path file;
  write_file(file.str(), record_dataset(10, 4));
  prefetch_writeback::params p;
  p.path = file.str();
  p.record_bytes = 16;
  p.fields = "4:4";
  {
    prefetch_writeback unset(p);  // records_per_frame not given
    CHECK(start_error(unset, sink_setup(page_bytes)).find("records_per_frame must be set") !=
          std::string::npos);
  }
  p.records_per_frame = 4;
  prefetch_writeback sink(p);
  sink.on_start(sink_setup(page_bytes));
  std::vector<std::byte> short_frame(15);  // 4 records need 16 bytes
  try {
    sink.on_frame(1, frame_in{short_frame.data(), short_frame.size(), element_type::u8});
    FAIL("a short frame was accepted");
  } catch (const run_error& e) {
    CHECK(std::string(e.what()).find("cannot hold the written fields of its 4 records") != std::string::npos);
    CHECK(e.site().offset == 1);
  }
  std::vector<std::byte> frame(16);
  CHECK_THROWS_WITH_AS(sink.on_frame(3, frame_in{frame.data(), frame.size(), element_type::u8}),
                       doctest::Contains("past the dataset's last record"), run_error);
}

TEST_CASE("prefetch.field_lists_parse_and_are_checked") {
  prefetch::record_layout l;
  l.record_bytes = 64;
  CHECK(prefetch::parse_fields("0:12,48:4", l).empty());
  CHECK(l.field_count == 2);
  CHECK(l.fields[1].offset == 48);
  CHECK(l.items_per_record() == 4);
  CHECK(prefetch::parse_fields(" ", l).empty());
  CHECK(l.field_count == 1);
  CHECK(l.fields[0].bytes == 64);
  CHECK(prefetch::parse_fields("0:4,", l).find("expected OFFSET:BYTES at character 5") != std::string::npos);
  CHECK(prefetch::parse_fields("x", l).find("character 1") != std::string::npos);
  CHECK(prefetch::parse_fields("8:4,0:4", l).find("offset order") != std::string::npos);
  CHECK(prefetch::parse_fields("0:4,4:4,8:4,12:4,16:4,20:4,24:4,28:4,32:4", l).find("more than 8") !=
        std::string::npos);
}
