// Fuzz target: xeflow-table's CSV conversion. The input's first line is the schema ("NAME:TYPE,…"; a
// leading '+' says the CSV's first record is a header naming the columns), the rest is the CSV. A CSV that
// converts must survive the trip back: the table written as CSV (table_to_csv) converts to the same table
// file, byte for byte. Files live in a scratch folder made once (the converter writes PATH.partial and
// renames it).
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "framework/core/errors.hpp"
#include "operators/sources/columnar_table.hpp"
#include "operators/sources/table_csv.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace xf::fuzz {
namespace {

const std::filesystem::path& scratch() {
  static const std::filesystem::path folder = [] {
    char name[] = "/tmp/xeflow-fuzz-csv-XXXXXX";
    if (::mkdtemp(name) == nullptr) std::abort();
    return std::filesystem::path(name);
  }();
  return folder;
}

void write_text(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  fuzz_expect(static_cast<bool>(out), "writing " + path.string() + " failed");
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace
}  // namespace xf::fuzz

XF_FUZZ_TARGET(table_csv) {
  std::string_view text = as_text(data);
  const std::size_t end = text.find('\n');
  std::string_view schema_text = text.substr(0, end);
  const std::string_view csv = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  const bool header = schema_text.starts_with('+');
  if (header) schema_text.remove_prefix(1);
  const std::filesystem::path csv_path = scratch() / "in.csv", table_path = scratch() / "t.xft";
  const std::filesystem::path again_csv = scratch() / "again.csv", again_table = scratch() / "again.xft";
  xf::table_schema schema;
  try {
    schema = parse_table_schema(schema_text, 64);
    geometry_of(schema);
  } catch (const config_error&) {
    return 0;
  }
  write_text(csv_path, csv);
  std::uint64_t rows = 0;
  try {
    rows = csv_to_table(csv_path.string(), table_path.string(), schema, header);
  } catch (const config_error&) {
    return 0;
  }
  std::ostringstream printed;
  {
    const columnar_table_file table(table_path.string());
    fuzz_expect(table.rows() == rows, "the table holds other rows than the converter counted");
    table_to_csv(table, printed, header);
  }
  write_text(again_csv, printed.str());
  try {
    csv_to_table(again_csv.string(), again_table.string(), schema, header);
  } catch (const config_error& e) {
    fail_invariant("the CSV a table prints does not convert back: " + std::string(e.what()) + "\n" +
                   printed.str());
  }
  fuzz_expect(read_text(table_path) == read_text(again_table),
              "CSV -> table -> CSV -> table changed the table; printed:\n" + printed.str());
  return 0;
}
