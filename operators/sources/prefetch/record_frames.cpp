// Field lists and the frames of a record dataset (see record_frames.hpp).
#include "operators/sources/prefetch/record_frames.hpp"

#include <cctype>
#include <charconv>
#include <vector>

#include "framework/datatype/committed_type.hpp"
#include "framework/datatype/traversal.hpp"

namespace xf::prefetch {
namespace {

/// A decimal number at text[pos…] (spaces around it skipped), or false.
bool read_number(const std::string& text, std::size_t& pos, std::uint64_t& value) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  const char* begin = text.data() + pos;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc{} || ptr == begin) return false;
  pos += static_cast<std::size_t>(ptr - begin);
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  return true;
}

}  // namespace

std::string parse_fields(const std::string& text, record_layout& layout) {
  layout.field_count = 0;
  bool blank = true;
  for (char c : text) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (blank) {
    if (layout.record_bytes > UINT32_MAX) return "a whole record of more than 4 GiB cannot be one field";
    layout.fields[0] = {0, static_cast<std::uint32_t>(layout.record_bytes)};
    layout.field_count = 1;
  } else {
    std::size_t pos = 0;
    while (true) {
      std::uint64_t offset = 0, bytes = 0;
      const std::size_t at = pos;
      if (!read_number(text, pos, offset) || pos >= text.size() || text[pos] != ':' ||
          !read_number(text, ++pos, bytes))
        return "fields '" + text + "': expected OFFSET:BYTES at character " + std::to_string(at + 1);
      if (layout.field_count == max_record_fields)
        return "fields '" + text + "': more than " + std::to_string(max_record_fields) + " fields";
      if (offset > UINT32_MAX || bytes > UINT32_MAX) return "fields '" + text + "': a field past 4 GiB";
      layout.fields[layout.field_count++] = {static_cast<std::uint32_t>(offset),
                                             static_cast<std::uint32_t>(bytes)};
      if (pos == text.size()) break;
      if (text[pos] != ',')
        return "fields '" + text + "': expected ',' or the end at character " + std::to_string(pos + 1);
      ++pos;
    }
  }
  if (const char* problem = layout_problem(layout); *problem != '\0')
    return std::string("fields: ") + problem;
  return "";
}

std::string field_list_problem(const std::string& text) {
  record_layout layout;
  layout.record_bytes = 1;  // the syntax only: layout_problem's verdicts ("fields: …") need the record
  const std::string problem = parse_fields(text, layout);
  return problem.rfind("fields: ", 0) == 0 ? "" : problem;
}

std::string parse_field_list(const std::string& text, record_layout& fields) {
  if (std::string problem = field_list_problem(text); !problem.empty()) return problem;
  record_layout parsed;
  parsed.record_bytes = UINT64_MAX;  // no record yet: only the list is taken (its layout verdict is later)
  parsed.item_bytes = 1;
  (void)parse_fields(text, parsed);
  bool blank = true;
  for (char c : text) blank = blank && std::isspace(static_cast<unsigned char>(c));
  fields.field_count = blank ? 0 : parsed.field_count;
  for (std::uint32_t f = 0; f < max_record_fields; ++f)
    fields.fields[f] = f < fields.field_count ? parsed.fields[f] : record_field{};
  return "";
}

std::string fields_of_record(const dt::datatype& record, record_layout& layout) {
  const std::string bounds = "[" + std::to_string(record.lb()) + ", " + std::to_string(record.ub()) + ")";
  if (record.lb() != 0 || record.extent() <= 0)
    return "a record datatype spans [0, record size), not " + bounds + " (resize it: resized with lb 0)";
  if (record.size() == 0) return "the record datatype holds no field";
  if (record.true_lb() < 0 || record.true_ub() > record.ub())
    return "the record datatype's data lies outside its extent " + bounds;
  if (record.extent() > UINT32_MAX) return "a record of more than 4 GiB";  // fields are 32-bit offsets
  const dt::committed_type committed = dt::commit(record);
  layout.record_bytes = static_cast<std::uint64_t>(record.extent());
  layout.field_count = 0;
  bool too_many = false;
  dt::for_each_run(
      committed.view(), 1, 0, record.elements(), [&](std::int64_t at, std::int64_t, std::int64_t bytes) {
        record_field* last = layout.field_count > 0 ? &layout.fields[layout.field_count - 1] : nullptr;
        if (last != nullptr && std::uint64_t{last->offset} + last->bytes == static_cast<std::uint64_t>(at)) {
          last->bytes += static_cast<std::uint32_t>(bytes);  // within the extent
        } else if (layout.field_count == max_record_fields) {
          too_many = true;
        } else {
          layout.fields[layout.field_count++] = {static_cast<std::uint32_t>(at),
                                                 static_cast<std::uint32_t>(bytes)};
        }
      });
  if (too_many)
    return "the record datatype reads more than " + std::to_string(max_record_fields) +
           " fields (runs of adjacent bytes)";
  return "";
}

dt::datatype frame_datatype(const record_layout& layout, std::uint64_t records) {
  std::vector<std::int64_t> items;  // each item's offset in the record, fields in order
  for (std::uint32_t f = 0; f < layout.field_count; ++f)
    for (std::uint32_t at = 0; at < layout.fields[f].bytes; at += layout.item_bytes)
      items.push_back(std::int64_t{layout.fields[f].offset} + at);
  const dt::datatype item = dt::contiguous(layout.item_bytes, dt::primitive::byte);
  const dt::datatype column = dt::hvector(static_cast<std::int64_t>(records), 1,
                                          static_cast<std::int64_t>(layout.record_bytes), item);
  return dt::hindexed_block(1, items, column);
}

void describe_record_params(operator_schema<record_dataset_params>& s, dataset_side side) {
  using params = record_dataset_params;
  const bool reads = side == dataset_side::reads;
  s.param(&params::path, "path",
          reads ? "dataset file of fixed-length records (memory-mapped, read-only)"
                : "the prefetch source's dataset file (mapped read-write)",
          required);
  if (!reads) s.writes_file();
  if (reads)
    s.bytes(&params::record_bytes, "record_bytes", "bytes per record (or `record`, a datatype, gives it)", 0,
            0);
  else
    s.bytes(&params::record_bytes, "record_bytes", "bytes per record (the source's)", required, 1);
  if (reads)
    s.param(&params::fields, "fields",
            "the fields the GPU operators read, 'OFFSET:BYTES,…' in offset order (empty: the whole record)",
            std::string{});
  else
    s.param(&params::fields, "fields", "the fields written, 'OFFSET:BYTES,…' in offset order", required);
  s.check(field_list_problem);
  s.param(&params::item_bytes, "item_bytes", "bytes of one item (1, 2, 4, 8 or 16); fields are whole items",
          params{}.item_bytes, 1, 16);
  s.param(&params::records, "records",
          reads ? "records to stream from the start (0: the whole dataset)"
                : "records the source streams (its records parameter)",
          params{}.records, 0);
  s.param(
      &params::records_per_frame, "records_per_frame",
      reads
          ? "records per frame (0: as many as a frame holds); a prefetch_writeback downstream takes the same"
          : "records per frame: the source's (its stats counter records_per_frame); must be set",
      params{}.records_per_frame, 0);
  s.param(&params::passes, "passes",
          reads
              ? "times the stream goes over the records (frame o holds pass o / F's frame o % F, F frames a "
                "pass): iterations of an algorithm in one run"
              : "the source's passes (only the last pass's frames are written)",
          params{}.passes, 1);
  if (!reads) return;
  s.datatype(
      &params::record, "record",
      "the record as a datatype, instead of record_bytes and fields: its extent is the record's size, its "
      "data (in address order) the fields read",
      [](const dt::datatype& type, std::optional<dt::datatype>& member) {
        member = type;
        record_layout layout;
        return fields_of_record(type, layout);
      },
      true);
  s.check_params([](const params& p) -> std::string {
    if (p.record && p.record_bytes != 0) return "give record_bytes (with fields) or record, not both";
    if (p.record && !p.fields.empty()) return "give fields (with record_bytes) or record, not both";
    if (!p.record && p.record_bytes == 0) return "give record_bytes (with fields), or record (a datatype)";
    if (!p.record) return "";  // a field list's fit to its record is checked when the source starts
    record_layout layout;
    return layout_of(p, layout);
  });
}

std::string layout_of(const record_dataset_params& p, record_layout& layout) {
  layout.item_bytes = static_cast<std::uint32_t>(p.item_bytes);
  if (p.record) {
    if (std::string problem = fields_of_record(*p.record, layout); !problem.empty())
      return "record: " + problem;
    if (const char* problem = layout_problem(layout); *problem != '\0')
      return std::string("record: ") + problem;
    return "";
  }
  layout.record_bytes = p.record_bytes;
  return parse_fields(p.fields, layout);
}

std::string plan_record_frames(std::uint64_t file_bytes, std::uint64_t records,
                               std::uint64_t records_per_frame, std::uint64_t frame_bytes,
                               std::uint64_t bytes_per_record, record_frames& out) {
  const std::uint64_t record_bytes = out.layout.record_bytes;
  if (record_bytes == 0) return "record_bytes must be at least 1";
  const std::uint64_t whole = file_bytes / record_bytes;
  if (records == 0) {
    if (file_bytes % record_bytes != 0)
      return "the dataset ends with a partial record at byte offset " + std::to_string(whole * record_bytes) +
             " (" + std::to_string(file_bytes % record_bytes) + " of " + std::to_string(record_bytes) +
             " bytes); set records to stream fewer";
    records = whole;
  } else if (records > whole) {
    return "records " + std::to_string(records) + " but the dataset holds " + std::to_string(whole) +
           " whole records of " + std::to_string(record_bytes) + " bytes";
  }
  const std::uint64_t fit = bytes_per_record == 0 ? 0 : frame_bytes / bytes_per_record;
  if (records_per_frame == 0) records_per_frame = fit;
  if (records_per_frame == 0 || records_per_frame > fit)
    return "a frame of " + std::to_string(frame_bytes) + " bytes holds " + std::to_string(fit) +
           " records of " + std::to_string(bytes_per_record) + " bytes" +
           (records_per_frame > fit ? ", not records_per_frame " + std::to_string(records_per_frame) : "");
  out.records = records;
  out.records_per_frame = records_per_frame;
  return "";
}

}  // namespace xf::prefetch
