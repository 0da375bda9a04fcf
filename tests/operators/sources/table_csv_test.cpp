// Tests of the CSV side of table files: schema and bloom options, CSV → table → CSV round trips with
// quoting and every type, the errors at file:line:column, and the topic's YAML.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/core/errors.hpp"
#include "framework/model/registry.hpp"
#include "framework/model/yaml_loader.hpp"
#include "operators/builtin.hpp"
#include "operators/sources/table_csv.hpp"
#include "tests/operators/operator_fixtures.hpp"
#include "tests/operators/sources/table_fixtures.hpp"

using namespace xf;
using namespace xf::testing;

namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  REQUIRE(f.good());
}

std::string csv_of(const std::string& table_path, bool header = false) {
  const columnar_table_file table(table_path);
  std::ostringstream out;
  table_to_csv(table, out, header);
  return out.str();
}

/// "file:line:column: error: message" of the config_error converting `csv` throws ("" when none).
std::string conversion_error(const std::string& csv, const table_schema& schema, bool header = false) {
  temp_path in, out;
  write_text(in.str(), csv);
  try {
    csv_to_table(in.str(), out.str(), schema, header);
  } catch (const config_error& e) {
    CHECK_FALSE(std::filesystem::exists(out.str()));  // a bad file writes nothing
    std::string what = e.what();
    const std::string prefix = in.str();
    REQUIRE(what.rfind(prefix, 0) == 0);
    return "CSV" + what.substr(prefix.size());
  }
  return "";
}

}  // namespace

TEST_CASE("table_csv.schema_and_bloom_options") {
  table_schema s = parse_table_schema("KSEQ:u32, K2:i8,S1:char(8),F:f64", 100);
  CHECK(s.rows_per_frame == 100);
  REQUIRE(s.columns.size() == 4);
  CHECK(s.columns[0] == table_column{"KSEQ", {element_type::u32, 0, 0, 0}});
  CHECK(s.columns[1] == table_column{"K2", {element_type::i8, 0, 0, 0}});
  CHECK(s.columns[2] == table_column{"S1", {element_type::u8, 8, 0, 0}});
  CHECK(s.columns[3] == table_column{"F", {element_type::f64, 0, 0, 0}});
  apply_bloom_option(s, "K2:1024:3");
  CHECK(s.columns[1].layout.bloom_bits == 1024);
  CHECK(s.columns[1].layout.bloom_hashes == 3);

  auto schema_error = [](auto fn) {
    try {
      fn();
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(has(schema_error([] { parse_table_schema("A:u32,B", 10); }),
            "--schema: error: column 1 'B': write NAME:TYPE"));
  CHECK(has(schema_error([] { parse_table_schema("A:u33", 10); }), "not 'u33'"));
  CHECK(has(schema_error([] { parse_table_schema("A:char(0)", 10); }), "char(N) takes N from 1 to 256"));
  CHECK(has(schema_error([] { parse_table_schema("A:char(257)", 10); }), "char(N) takes N from 1 to 256"));
  CHECK(has(schema_error([] { parse_table_schema(" ", 10); }), "the schema is empty"));
  CHECK(has(schema_error([&] { apply_bloom_option(s, "K3:1024:3"); }),
            "--bloom: error: 'K3:1024:3': no column 'K3'"));
  CHECK(has(schema_error([&] { apply_bloom_option(s, "K2:1024"); }), "write COLUMN:BITS:HASHES"));
  apply_bloom_option(s, "K2:1000:3");  // the limits are geometry_of's
  CHECK(has(schema_error([&] { geometry_of(s); }), "bloom_bits 1000 is not a power of two"));
}

TEST_CASE("table_csv.round_trip_with_quotes_and_every_type") {
  const table_schema schema = parse_table_schema(
      "U8:u8,I8:i8,U16:u16,I16:i16,U32:u32,I32:i32,U64:u64,I64:i64,F32:f32,F64:f64,S:char(6)", 3);
  const std::string csv =
      "U8,I8,U16,I16,U32,I32,U64,I64,F32,F64,S\n"
      "0,-128,0,-32768,0,-2147483648,0,-9223372036854775808,-1.5,0.1,abc\n"
      "255,127,65535,32767,4294967295,2147483647,18446744073709551615,9223372036854775807,3.4028235e+38,"
      "1e-300,\"a,b\"\r\n"
      " 7 ,+5,\t9,-1,\"42\",0,1,2,inf,-inf,\"q\"\"x\"\n"
      "1,2,3,4,5,6,7,8,1e-45,nan,\"ab\n"
      "cd\"\n"
      "1,2,3,4,5,6,7,8,0,-0,\n";
  temp_path in, table, out_csv, again;
  write_text(in.str(), csv);
  CHECK(csv_to_table(in.str(), table.str(), schema, true) == 5);
  const columnar_table_file t(table.str());
  CHECK(t.rows() == 5);
  CHECK(t.frames() == 2);
  CHECK(t.schema() == schema);

  const std::string expected =
      "U8,I8,U16,I16,U32,I32,U64,I64,F32,F64,S\n"
      "0,-128,0,-32768,0,-2147483648,0,-9223372036854775808,-1.5,0.1,abc\n"
      "255,127,65535,32767,4294967295,2147483647,18446744073709551615,9223372036854775807,3.4028235e+38,"
      "1e-300,\"a,b\"\n"
      "7,5,9,-1,42,0,1,2,inf,-inf,\"q\"\"x\"\n"
      "1,2,3,4,5,6,7,8,1e-45,nan,\"ab\n"
      "cd\"\n"
      "1,2,3,4,5,6,7,8,0,-0,\n";
  const std::string text = csv_of(table.str(), true);
  CHECK(text == expected);
  // The canonical CSV converts to the same table, byte for byte.
  write_text(out_csv.str(), text);
  csv_to_table(out_csv.str(), again.str(), schema, true);
  CHECK(read_file(again.str()) == read_file(table.str()));
}

TEST_CASE("table_csv.random_tables_round_trip") {
  // Every type with random bits (NaNs included) and characters that need quotes: table → CSV → table gives
  // the same file. char values here never end in a zero, which CSV cannot carry (trimmed).
  const table_schema schema = every_type_schema(77);
  temp_path table, csv, again;
  write_sample_table(table.str(), schema, 77 * 3 + 5, 1, 99);
  {
    const columnar_table_file t(table.str());
    std::ofstream out(csv.str(), std::ios::binary);
    table_to_csv(t, out);
  }
  csv_to_table(csv.str(), again.str(), schema);
  const std::vector<std::byte> a = read_file(table.str()), b = read_file(again.str());
  REQUIRE(a.size() == b.size());
  // NaNs print as "nan" (their payload is not text): compare the frames value by value where they differ.
  if (a != b) {
    const columnar_table_file ta(table.str()), tb(again.str());
    page_frame fa(ta.frame_bytes()), fb(tb.frame_bytes());
    for (std::uint64_t k = 0; k < ta.frames(); ++k) {
      ta.read_frame(k, fa.data());
      tb.read_frame(k, fb.data());
      const columnar_view va(ta.geometry(), fa.data()), vb(tb.geometry(), fb.data());
      for (std::uint32_t c = 0; c < ta.geometry().column_count; ++c)
        for (std::uint32_t r = 0; r < va.rows(); ++r) {
          const column_layout& l = ta.geometry().columns[c].layout;
          if (l.element == element_type::f32 && l.chars == 0) {
            const float x = va.value<float>(c, r), y = vb.value<float>(c, r);
            CHECK(((x != x && y != y) || std::memcmp(&x, &y, 4) == 0));
          } else if (l.element == element_type::f64 && l.chars == 0) {
            const double x = va.value<double>(c, r), y = vb.value<double>(c, r);
            CHECK(((x != x && y != y) || std::memcmp(&x, &y, 8) == 0));
          } else {
            CHECK(std::memcmp(va.data() + ta.geometry().value_offset(c, r),
                              vb.data() + tb.geometry().value_offset(c, r), l.value_bytes()) == 0);
          }
        }
    }
  }
}

TEST_CASE("table_csv.errors_name_file_line_and_column") {
  const table_schema schema = parse_table_schema("A:u8,B:i32,S:char(3),F:f32", 4);
  CHECK(conversion_error("1,2,abc,1.5\n", schema) == "");
  CHECK(conversion_error("1,2,abc,1.5\n300,2,x,0\n", schema) ==
        "CSV:2:1: error: column 'A' (u8): '300' is out of 0 to 255");
  CHECK(conversion_error("1,2,abc,1.5\n1,12x,x,0\n", schema) ==
        "CSV:2:3: error: column 'B' (i32): '12x' is not an integer");
  CHECK(conversion_error("1,-1,abcd,0\n", schema) ==
        "CSV:1:6: error: column 'S' (char(3)): a value of 4 bytes; char(3) holds at most 3");
  CHECK(conversion_error("1,-1,\"a\"\"cd\",0\n", schema) ==
        "CSV:1:6: error: column 'S' (char(3)): a value of 4 bytes; char(3) holds at most 3");
  CHECK(conversion_error("1,2,x,0\n1,2,x\n", schema) ==
        "CSV:2:6: error: a record of 3 fields; the schema has 4 columns (A, B, S, F)");
  CHECK(conversion_error("1,2,x,0,9\n", schema) ==
        "CSV:1:9: error: a record of 5 fields; the schema has 4 columns (A, B, S, F)");
  CHECK(conversion_error("1,2,x,0\n\n", schema) ==
        "CSV:2:1: error: a record of 1 field; the schema has 4 columns (A, B, S, F)");
  CHECK(conversion_error("1,2,x,\n", schema) ==
        "CSV:1:7: error: column 'F' (f32): an empty value; a number column needs a number");
  CHECK(conversion_error("1,2,x,1e99\n", schema) ==
        "CSV:1:7: error: column 'F' (f32): '1e99' is out of its range");
  CHECK(conversion_error("1,2,\"x,0\n1,2,x,0\n", schema) ==
        "CSV:1:5: error: a quote opened here is never closed");
  CHECK(conversion_error("1,2,\"x\"y,0\n", schema) ==
        "CSV:1:8: error: after a closing quote comes a comma or the line's end, not 'y'");
  CHECK(conversion_error("1,2,x\"y,0\n", schema) ==
        "CSV:1:6: error: a quote inside a field that does not start with one (quote the whole field and "
        "double the "
        "quote: \"a\"\"b\")");
  CHECK(conversion_error("A,B,T,F\n1,2,x,0\n", schema, true) ==
        "CSV:1:5: error: the header names column 2 'T', the schema 'S'");
  CHECK(conversion_error("", schema, true) ==
        "CSV:1:1: error: the file is empty; --header expects a line of column names");
  // A line number counts physical lines: after a quoted line break, the next record is on line 3.
  CHECK(conversion_error("1,2,\"a\nb\",0\n1,-,x,0\n", schema) ==
        "CSV:3:3: error: column 'B' (i32): '-' is not an integer");
}

TEST_CASE("table_csv.missing_csv_names_the_path") {
  temp_path never, out;
  try {
    csv_to_table(never.str(), out.str(), parse_table_schema("A:u8", 4));
    FAIL("expected a run_error");
  } catch (const run_error& e) {
    CHECK(has(e.what(), "CSV file '" + never.str() + "': cannot open it"));
  }
}

TEST_CASE("table_csv.empty_csv_makes_an_empty_table") {
  temp_path in, out;
  write_text(in.str(), "");
  CHECK(csv_to_table(in.str(), out.str(), parse_table_schema("A:u8", 4)) == 0);
  CHECK(columnar_table_file(out.str()).frames() == 0);
  CHECK(csv_of(out.str()) == "");
}

TEST_CASE("table_csv.topic_yaml") {
  table_schema s = parse_table_schema("KSEQ:u32,S1:char(8)", 8192);
  apply_bloom_option(s, "KSEQ:8192:6");
  CHECK(table_topic_yaml(s, "table", 13) ==
        "topics:\n"
        "  table:\n"
        "    layout: columnar\n"
        "    rows_per_frame: 8192\n"
        "    # capacity: 13  # the whole table resident: table_source reads the file once, however many "
        "passes\n"
        "    columns:\n"
        "      - {name: KSEQ, type: u32, bloom_bits: 8192, bloom_hashes: 6}\n"
        "      - {name: S1, type: char(8)}\n");
}

TEST_CASE("table_csv.topic_yaml_loads_as_the_tables_topic") {
  table_schema s = parse_table_schema("KSEQ:u32,K2:i16,S1:char(8)", 1000);
  apply_bloom_option(s, "K2:512:2");
  temp_path path;
  write_sample_table(path.str(), s, 10);
  const std::string yaml = table_topic_yaml(s, "t", 1) +
                           "operators:\n"
                           "  scan: {class: table_source, on: cpu, outputs: [t], params: {path: " +
                           path.str() +
                           "}}\n"
                           "  sink: {class: null_sink, on: cpu, inputs: [t]}\n";
  operator_registry registry;
  register_builtin_operators(registry);
  const topology_spec spec = load_topology_text(yaml, "<table topic>", registry);
  REQUIRE(spec.topics.size() == 1);
  const topic_spec& t = spec.topics.front();
  CHECK(t.layout == frame_layout::columnar);
  CHECK(t.rows_per_frame == 1000);
  REQUIRE(t.columns.size() == 3);
  for (std::size_t c = 0; c < 3; ++c) {
    CHECK(t.columns[c].name == s.columns[c].name);
    CHECK(t.columns[c].layout == s.columns[c].layout);
  }
  CHECK(t.frame_bytes == geometry_of(s).frame_bytes());
}
