// Table files as text: the schema's command-line syntax, a CSV reader that knows where every field starts,
// values parsed and printed per column type, and the topic's YAML.
#include "operators/sources/table_csv.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <ostream>
#include <type_traits>
#include <vector>

#include "framework/core/errors.hpp"
#include "topics/columnar_view.hpp"

namespace xf {
namespace {

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_at(std::string_view s, char at) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t end = s.find(at);
    parts.push_back(s.substr(0, end));
    if (end == std::string_view::npos) return parts;
    s.remove_prefix(end + 1);
  }
}

bool parse_count(std::string_view text, std::uint32_t& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

std::string column_list(const table_schema& schema) {
  std::string text;
  for (const table_column& c : schema.columns) text += (text.empty() ? "" : ", ") + c.name;
  return text;
}

/// One CSV field: its text (quotes removed) and where it starts (1-based line and byte column).
struct csv_text_field {
  std::string text;
  bool quoted = false;
  int line = 0;
  int column = 0;
};

/// Reads CSV records from a stream, one at a time, remembering positions for errors.
class csv_reader {
 public:
  csv_reader(std::istream& in, std::string path) : in_(in), path_(std::move(path)) {}

  /// The next record's fields, or false at the end of the input.
  bool next(std::vector<csv_text_field>& fields) {
    fields.clear();
    std::string line;
    if (!next_line(line)) return false;
    std::size_t i = 0;
    for (;;) {
      csv_text_field f;
      f.line = line_;
      std::size_t start = i;
      while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
      if (start < line.size() && line[start] == '"') {
        f.quoted = true;
        f.column = static_cast<int>(start + 1);
        i = start + 1;
        for (;;) {
          if (i >= line.size()) {  // the field goes on on the next line
            std::string more;
            if (!next_line(more))
              throw config_error(source_pos{path_, f.line, f.column}, "a quote opened here is never closed");
            f.text += '\n';
            line = std::move(more);
            i = 0;
            continue;
          }
          if (line[i] == '"') {
            if (i + 1 < line.size() && line[i + 1] == '"') {
              f.text += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          f.text += line[i++];
        }
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i < line.size() && line[i] != ',')
          throw config_error(
              source_pos{path_, line_, static_cast<int>(i + 1)},
              std::string("after a closing quote comes a comma or the line's end, not '") + line[i] + "'");
      } else {
        f.column = static_cast<int>(i + 1);
        std::size_t end = line.find(',', i);
        if (end == std::string::npos) end = line.size();
        f.text = line.substr(i, end - i);
        if (const std::size_t quote = f.text.find('"'); quote != std::string::npos)
          throw config_error(source_pos{path_, line_, static_cast<int>(i + quote + 1)},
                             "a quote inside a field that does not start with one (quote the whole field and "
                             "double the quote: \"a\"\"b\")");
        i = end;
      }
      fields.push_back(std::move(f));
      if (i >= line.size()) break;
      ++i;  // the comma; a comma that ends the line is followed by an empty field
    }
    end_line_ = line_;
    end_column_ = static_cast<int>(line.size() + 1);
    return true;
  }

  const std::string& path() const { return path_; }
  /// Where the last record read ends (for "too few fields").
  source_pos end() const { return {path_, end_line_, end_column_}; }

 private:
  bool next_line(std::string& line) {
    if (!std::getline(in_, line)) {
      if (in_.bad())
        throw run_error({},
                        "CSV file '" + path_ + "': reading line " + std::to_string(line_ + 1) + " failed");
      return false;
    }
    ++line_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  std::istream& in_;
  std::string path_;
  int line_ = 0;
  int end_line_ = 0;
  int end_column_ = 0;
};

template <class T>
std::string type_range_text() {
  if constexpr (std::is_floating_point_v<T>) {
    return "its range";
  } else {
    return std::to_string(static_cast<std::int64_t>(std::numeric_limits<T>::min())) + " to " +
           std::to_string(static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
  }
}

/// Parses field `f` as column `col`'s value into `dest` (value_bytes of the column; null: only check it).
void parse_csv_value(const csv_text_field& f, const table_column& col, std::byte* dest,
                     const std::string& path) {
  const source_pos at{path, f.line, f.column};
  const std::string which = "column '" + col.name + "' (" + column_type_name(col.layout) + "): ";
  if (col.layout.chars != 0) {
    if (f.text.size() > col.layout.chars)
      throw config_error(at, which + "a value of " + std::to_string(f.text.size()) + " bytes; char(" +
                                 std::to_string(col.layout.chars) + ") holds at most " +
                                 std::to_string(col.layout.chars));
    if (dest) std::memcpy(dest, f.text.data(), f.text.size());  // the frame starts zeroed: the padding
    return;
  }
  std::string_view text = trim_blanks(f.text);
  if (text.empty()) throw config_error(at, which + "an empty value; a number column needs a number");
  if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  visit_element(col.layout.element, [&](auto zero) {
    using T = decltype(zero);
    T value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range)
      throw config_error(at, which + "'" + std::string(text) + "' is out of " + type_range_text<T>());
    if (ec != std::errc{} || end != text.data() + text.size())
      throw config_error(at, which + "'" + std::string(text) + "' is not " +
                                 (std::is_floating_point_v<T> ? "a number" : "an integer"));
    if (dest) std::memcpy(dest, &value, sizeof value);
  });
}

void check_csv_fields(const csv_reader& reader, const std::vector<csv_text_field>& fields,
                      const table_schema& schema) {
  if (fields.size() == schema.columns.size()) return;
  const std::string what = "a record of " + std::to_string(fields.size()) + " field" +
                           (fields.size() == 1 ? "" : "s") + "; the schema has " +
                           std::to_string(schema.columns.size()) + " columns (" + column_list(schema) + ")";
  if (fields.size() > schema.columns.size()) {
    const csv_text_field& extra = fields[schema.columns.size()];
    throw config_error(source_pos{reader.path(), extra.line, extra.column}, what);
  }
  throw config_error(reader.end(), what);
}

void check_csv_header(csv_reader& reader, std::vector<csv_text_field>& fields, const table_schema& schema) {
  if (!reader.next(fields))
    throw config_error(source_pos{reader.path(), 1, 1},
                       "the file is empty; --header expects a line of column names");
  check_csv_fields(reader, fields, schema);
  for (std::size_t c = 0; c < fields.size(); ++c)
    if (std::string(trim_blanks(fields[c].text)) != schema.columns[c].name)
      throw config_error(source_pos{reader.path(), fields[c].line, fields[c].column},
                         "the header names column " + std::to_string(c) + " '" + fields[c].text +
                             "', the schema '" + schema.columns[c].name + "'");
}

std::ifstream open_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw run_error({}, "CSV file '" + path + "': cannot open it: " + std::strerror(errno));
  return in;
}

/// Appends a character value (trailing zeros trim_blanks) as a CSV field.
void append_csv_chars(std::string& out, const std::byte* value, std::uint32_t width) {
  std::uint32_t n = width;
  while (n > 0 && value[n - 1] == std::byte{0}) --n;
  const std::string_view text(reinterpret_cast<const char*>(value), n);
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) {
    out += text;
    return;
  }
  out += '"';
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}

void append_csv_number(std::string& out, const columnar_view& view, std::uint32_t c, std::uint32_t r,
                       element_type element) {
  char text[64];
  visit_element(element, [&](auto zero) {
    using T = decltype(zero);
    const T value = view.value<T>(c, r);
    std::to_chars_result done;
    if constexpr (std::is_floating_point_v<T>)
      done = std::to_chars(text, text + sizeof text, value);  // shortest text that reads back the same
    else if constexpr (sizeof(T) == 1)
      done = std::to_chars(text, text + sizeof text, static_cast<int>(value));
    else
      done = std::to_chars(text, text + sizeof text, value);
    out.append(text, done.ptr);
  });
}

}  // namespace

table_schema parse_table_schema(std::string_view text, std::uint32_t rows_per_frame) {
  const source_pos at{"--schema", 0, 0};
  table_schema schema;
  schema.rows_per_frame = rows_per_frame;
  if (trim_blanks(text).empty()) throw config_error(at, "the schema is empty; write NAME:TYPE,NAME:TYPE,…");
  const std::vector<std::string_view> items = split_at(text, ',');
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item(trim_blanks(items[i]));
    const std::string which = "column " + std::to_string(i) + " '" + item + "': ";
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw config_error(at, which + "write NAME:TYPE (a type is u8 … f64 or char(N))");
    table_column col;
    col.name = std::string(trim_blanks(std::string_view(item).substr(0, colon)));
    const std::string type(trim_blanks(std::string_view(item).substr(colon + 1)));
    if (type.rfind("char(", 0) == 0 && type.back() == ')') {
      std::uint32_t n = 0;
      if (!parse_count(std::string_view(type).substr(5, type.size() - 6), n) || n == 0 ||
          n > columnar_max_chars)
        throw config_error(at, which + "char(N) takes N from 1 to " + std::to_string(columnar_max_chars));
      col.layout.element = element_type::u8;
      col.layout.chars = n;
    } else if (auto element = element_type_from_name(type)) {
      col.layout.element = *element;
    } else {
      throw config_error(at, which +
                                 "the type must be one of u8, i8, u16, i16, u32, i32, u64, i64, f32, f64 or "
                                 "char(N), not '" +
                                 type + "'");
    }
    schema.columns.push_back(std::move(col));
  }
  return schema;
}

void apply_bloom_option(table_schema& schema, std::string_view text) {
  const source_pos at{"--bloom", 0, 0};
  const std::vector<std::string_view> parts = split_at(text, ':');
  std::uint32_t bits = 0, hashes = 0;
  if (parts.size() != 3 || !parse_count(trim_blanks(parts[1]), bits) ||
      !parse_count(trim_blanks(parts[2]), hashes))
    throw config_error(at, "'" + std::string(text) + "': write COLUMN:BITS:HASHES (e.g. K2:8192:6)");
  const std::string_view name = trim_blanks(parts[0]);
  for (table_column& col : schema.columns)
    if (col.name == name) {
      col.layout.bloom_bits = bits;
      col.layout.bloom_hashes = hashes;
      return;
    }
  throw config_error(at, "'" + std::string(text) + "': no column '" + std::string(name) +
                             "' (the schema has " + column_list(schema) + ")");
}

std::uint64_t csv_to_table(const std::string& csv_path, const std::string& table_path,
                           const table_schema& schema, bool header) {
  geometry_of(schema);  // a schema that makes no frame is the first problem to report
  std::vector<csv_text_field> fields;
  std::uint64_t rows = 0;
  {
    std::ifstream in = open_csv(csv_path);
    csv_reader reader(in, csv_path);
    if (header) check_csv_header(reader, fields, schema);
    while (reader.next(fields)) {
      check_csv_fields(reader, fields, schema);
      for (std::size_t c = 0; c < fields.size(); ++c)
        parse_csv_value(fields[c], schema.columns[c], nullptr, csv_path);
      ++rows;
    }
  }
  std::ifstream in = open_csv(csv_path);
  csv_reader reader(in, csv_path);
  if (header) check_csv_header(reader, fields, schema);
  const auto changed = [&] {
    return run_error({}, "CSV file '" + csv_path + "': it changed while it was converted (it had " +
                             std::to_string(rows) + " records)");
  };
  write_columnar_table(table_path, schema, rows,
                       [&](std::uint64_t, std::uint32_t frame_rows, const columnar_writer& frame) {
                         // threads = 1: frames come in order, so the reader's next records are this frame's.
                         for (std::uint32_t r = 0; r < frame_rows; ++r) {
                           if (!reader.next(fields)) throw changed();
                           check_csv_fields(reader, fields, schema);
                           for (std::uint32_t c = 0; c < fields.size(); ++c)
                             parse_csv_value(fields[c], schema.columns[c], frame.value_at(c, r), csv_path);
                         }
                       });
  if (reader.next(fields)) {
    std::remove(table_path.c_str());
    throw changed();
  }
  return rows;
}

void table_to_csv(const columnar_table_file& table, std::ostream& out, bool header) {
  const table_schema& schema = table.schema();
  const columnar_geometry& g = table.geometry();
  std::string text;
  if (header) {
    for (const table_column& c : schema.columns) text += (text.empty() ? "" : ",") + c.name;
    text += '\n';
  }
  struct free_bytes {
    void operator()(std::byte* p) const noexcept { std::free(p); }
  };
  const std::unique_ptr<std::byte, free_bytes> frame(
      static_cast<std::byte*>(std::aligned_alloc(columnar_page_bytes, table.frame_bytes())));
  if (!frame) throw std::bad_alloc();
  for (std::uint64_t k = 0; k < table.frames(); ++k) {
    table.read_frame(k, frame.get());
    const columnar_view view(g, frame.get());
    for (std::uint32_t r = 0; r < view.rows(); ++r) {
      for (std::uint32_t c = 0; c < g.column_count; ++c) {
        if (c != 0) text += ',';
        const column_layout& l = g.columns[c].layout;
        if (l.chars != 0)
          append_csv_chars(text, view.chars(c, r), l.chars);
        else
          append_csv_number(text, view, c, r, l.element);
      }
      text += '\n';
    }
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    text.clear();
    if (!out)
      throw run_error(
          {}, "writing the CSV of table file '" + table.path() + "' failed at frame " + std::to_string(k));
  }
  if (!text.empty()) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  if (!out) throw run_error({}, "writing the CSV of table file '" + table.path() + "' failed");
}

std::string table_topic_yaml(const table_schema& schema, const std::string& topic_name,
                             std::uint64_t frames) {
  std::string y = "topics:\n  " + topic_name +
                  ":\n    layout: columnar\n    rows_per_frame: " + std::to_string(schema.rows_per_frame) +
                  "\n";
  if (frames != 0)
    y += "    # capacity: " + std::to_string(frames) +
         "  # the whole table resident: table_source reads the file once, however many passes\n";
  y += "    columns:\n";
  for (const table_column& c : schema.columns) {
    y += "      - {name: " + c.name + ", type: " + column_type_name(c.layout);
    if (c.layout.bloom_bits != 0)
      y += ", bloom_bits: " + std::to_string(c.layout.bloom_bits) +
           ", bloom_hashes: " + std::to_string(c.layout.bloom_hashes);
    y += "}\n";
  }
  return y;
}

}  // namespace xf
