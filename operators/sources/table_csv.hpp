// Table files as text: a schema written on a command line, CSV in and out, and the columnar topic that
// streams a table. What tools/xeflow-table does, as functions the tests call too.
//
// CSV as read here: one record a line, fields separated by commas; a field may be in double quotes, inside
// which a comma or a line feed is data and "" is one quote. A CR before a line feed is dropped. Number
// fields may have spaces or tabs around them; character fields are taken as written (no trimming). A blank
// line is a record of one empty field.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "operators/sources/columnar_table.hpp"

namespace xf {

/// Rows a frame holds when the command line does not say.
inline constexpr std::uint32_t default_table_rows_per_frame = 8192;

/// Parses "NAME:TYPE,NAME:TYPE,…" (TYPE: u8 … f64 or char(N)) into a schema of `rows_per_frame`. Throws
/// config_error at "--schema" naming the column and what is wrong; the schema is checked by geometry_of.
table_schema parse_table_schema(std::string_view text, std::uint32_t rows_per_frame);

/// Applies "COL:BITS:HASHES" (a bloom filter of BITS bits and HASHES hashes on column COL) to `schema`.
/// Throws config_error at "--bloom" for an unknown column or a malformed option; the filter's limits are
/// geometry_of's to check.
void apply_bloom_option(table_schema& schema, std::string_view text);

/// Converts the CSV file `csv_path` into the table file `table_path`. With `header`, the first record names
/// the columns and must match the schema's. The CSV is read twice (the first pass checks every value and
/// counts the rows, so a bad file writes nothing). Throws config_error at "file:line:column" for a bad
/// value, a wrong field count or a quote left open, run_error naming a path for I/O errors. Returns the
/// rows written.
std::uint64_t csv_to_table(const std::string& csv_path, const std::string& table_path,
                           const table_schema& schema, bool header = false);

/// Writes `table`'s rows to `out` as CSV (with `header`, a first line of the column names). Numbers are
/// written so that they read back to the same value; character values with their trailing zeros trimmed,
/// in quotes when they hold a comma, a quote or a line break. Throws run_error for a failing read or write.
void table_to_csv(const columnar_table_file& table, std::ostream& out, bool header = false);

/// The `topics:` YAML of a columnar topic `topic_name` that streams a table of `schema` (`frames` frames:
/// a comment suggests that capacity, with which table_source reads the table once however many passes).
std::string table_topic_yaml(const table_schema& schema, const std::string& topic_name, std::uint64_t frames);

}  // namespace xf
