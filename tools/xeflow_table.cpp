// xeflow-table: converts CSV to table files (the frames a columnar topic holds, operators/sources/
// columnar_table.hpp) and back, and describes a table file with the topic that streams it.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/core/units.hpp"
#include "framework/launch/launcher.hpp"
#include "framework/model/spec_validation.hpp"
#include "operators/sources/columnar_table.hpp"
#include "operators/sources/table_csv.hpp"

namespace xf {
namespace {

void print_info(const columnar_table_file& table, const std::string& topic) {
  const columnar_geometry& g = table.geometry();
  std::cout << "table " << table.path() << "\n"
            << "  rows " << table.rows() << ", " << table.frames() << " frames of " << g.rows_per_frame
            << " rows (the last " << table.rows_in_frame(table.frames() == 0 ? 0 : table.frames() - 1)
            << ")\n"
            << "  frame " << format_bytes(table.frame_bytes()) << " (" << g.total_pages
            << " pages of 4 KiB: " << g.index_pages << " index, " << g.total_pages - g.index_pages
            << " data), file " << format_bytes(table_header_bytes + table.frames() * table.frame_bytes())
            << "\n"
            << "  columns:\n";
  for (std::uint32_t c = 0; c < g.column_count; ++c)
    std::cout << "    " << column_text(table.schema().columns[c]) << ": " << g.columns[c].pages
              << " data pages of " << g.columns[c].rows_per_page << " rows\n";
  std::cout << "\n# a columnar topic that streams it (table_source, path: " << table.path() << "):\n"
            << table_topic_yaml(table.schema(), topic, table.frames())
            << "# and its source, under operators:\n"
            << "#   scan: {class: table_source, on: cpu, outputs: [" << topic
            << "], params: {path: " << table.path() << ", passes: 1}}\n";
}

}  // namespace
}  // namespace xf

int main(int argc, char** argv) {
  using namespace xf;
  CLI::App app{"xeflow-table: table files (the frames of a columnar topic) from and to CSV"};
  app.require_subcommand(1);

  std::string csv_in, table_out, schema_text;
  std::uint32_t rows_per_frame = default_table_rows_per_frame;
  std::vector<std::string> blooms;
  bool csv_header = false;
  CLI::App* from_csv = app.add_subcommand("from-csv", "convert a CSV file into a table file");
  from_csv->add_option("csv", csv_in, "CSV file: comma separated, optional double quotes")->required();
  from_csv->add_option("table", table_out, "table file to write (replaced)")->required();
  from_csv
      ->add_option("--schema", schema_text, "the columns in order: NAME:TYPE,… (TYPE: u8 … f64 or char(N))")
      ->required();
  from_csv->add_option("--rows-per-frame", rows_per_frame, "rows a frame holds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  from_csv->add_option("--bloom", blooms, "a bloom filter on each data page of a column: COLUMN:BITS:HASHES")
      ->type_name("COL:BITS:HASHES");
  from_csv->add_flag("--header", csv_header,
                     "the CSV's first line names the columns (checked against --schema)");

  std::string table_in, csv_out;
  bool write_header = false;
  CLI::App* to_csv = app.add_subcommand("to-csv", "write a table file's rows as CSV");
  to_csv->add_option("table", table_in, "table file")->required();
  to_csv->add_option("csv", csv_out, "CSV file to write (default: standard output)");
  to_csv->add_flag("--header", write_header, "first write a line of the column names");

  std::string info_in, topic = "table";
  CLI::App* info =
      app.add_subcommand("info", "describe a table file and print the columnar topic that streams it");
  info->add_option("table", info_in, "table file")->required();
  info->add_option("--topic", topic, "the topic's name in the printed YAML")->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  try {
    if (*from_csv) {
      table_schema schema = parse_table_schema(schema_text, rows_per_frame);
      for (const std::string& b : blooms) apply_bloom_option(schema, b);
      const std::uint64_t rows = csv_to_table(csv_in, table_out, schema, csv_header);
      const columnar_geometry g = geometry_of(schema);
      std::cerr << "xeflow-table: " << table_out << ": " << rows << " rows in "
                << (rows + rows_per_frame - 1) / rows_per_frame << " frames of "
                << format_bytes(g.frame_bytes()) << "\n";
    } else if (*to_csv) {
      const columnar_table_file table(table_in);
      if (csv_out.empty()) {
        table_to_csv(table, std::cout, write_header);
      } else {
        std::ofstream out(csv_out, std::ios::binary | std::ios::trunc);
        if (!out) throw run_error({}, "CSV file '" + csv_out + "': cannot create it");
        table_to_csv(table, out, write_header);
      }
    } else if (*info) {
      if (!is_valid_name(topic)) {
        std::cerr
            << "xeflow-table: error: --topic '" << topic
            << "' is not a valid topic name (letters, digits, '_' and '-', starting with a letter or '_')\n";
        return exit_config_error;
      }
      print_info(columnar_table_file(info_in), topic);
    }
  } catch (const config_error& e) {
    std::cerr << e.what() << '\n';
    return exit_config_error;
  } catch (const std::exception& e) {
    std::cerr << "xeflow-table: error: " << e.what() << '\n';
    return exit_run_failed;
  }
  return exit_ok;
}
