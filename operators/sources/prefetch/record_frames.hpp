// How the prefetch source and its write-back sink agree on frames of records: a dataset of fixed-length
// records, a layout naming the fields that travel, and R records per frame — frame o carries records
// [o·R, min((o+1)·R, records)), field item by field item (gather_records). Both operators build one from
// the same parameters, so the source's frame o and the sink's frame o are the same records.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "framework/datatype/datatype.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sources/prefetch/record_layout.hpp"

namespace xf::prefetch {

/// Parses "OFFSET:BYTES[,OFFSET:BYTES…]" (byte counts in decimal, spaces allowed around the numbers) into
/// the layout's fields; an empty text is the whole record as one field. Returns the problem ("" when
/// none): malformed text, too many fields, or what layout_problem says of the result.
std::string parse_fields(const std::string& text, record_layout& layout);

/// A `fields` parameter of a GPU operator (whose params hold no strings, and whose record size is another
/// parameter): the listed fields into `fields.fields` and `fields.field_count` (0 for an empty list: the
/// whole record, see resolve_fields); the syntax problem ("" when none). Whether the fields suit the record
/// and item sizes is layout_problem's, once those are known.
std::string parse_field_list(const std::string& text, record_layout& fields);

/// The syntax half of parse_fields, without a record to check the fields against: what the topology's
/// loader reports with file:line:column ("" when the text is well formed).
std::string field_list_problem(const std::string& text);

/// The fields a record datatype reads (the source's `record` parameter): a record is one instance — its
/// extent the record's size, from its lower bound 0 — and its data, in type-map order, the fields, adjacent
/// runs merged (a struct of three f32 resized to 64 bytes is the field 0:12). Fills `layout`'s record_bytes
/// and fields; the problem ("" when none): bounds other than [0, extent), data outside them, more than
/// max_record_fields fields. Whether they suit the item size is layout_problem's.
std::string fields_of_record(const dt::datatype& record, record_layout& layout);

/// A frame of `records` records as a datatype over the dataset from its first record: item i of the
/// layout (its fields cut into items, in order) of record r is element r of block i, so packing it — one
/// instance at the first record's address — gives the frame gather_records writes.
dt::datatype frame_datatype(const record_layout& layout, std::uint64_t records);

/// The parameters prefetch_source and prefetch_writeback share: the dataset, its records and their frames.
struct record_dataset_params {
  std::string path;
  std::uint64_t record_bytes = 0;
  std::string fields;
  /// The source's fields and record size as a datatype instead (fields_of_record); unset for the sink.
  std::optional<dt::datatype> record;
  std::int64_t item_bytes = 4;
  std::int64_t records = 0;
  std::int64_t records_per_frame = 0;
  std::int64_t passes = 1;
};

/// Which side of the dataset an operator is: the source reads the fields, the write-back sink writes them.
enum class dataset_side { reads, writes };

/// Declares the shared parameters, described for `side` (the write-back sink must name its fields and be
/// given the source's records_per_frame).
void describe_record_params(operator_schema<record_dataset_params>& s, dataset_side side);

/// The layout the parameters describe (record_bytes, item_bytes, fields); the problem ("" when none).
std::string layout_of(const record_dataset_params& p, record_layout& layout);

struct record_frames {
  record_layout layout;
  std::uint64_t records = 0;            ///< in one pass
  std::uint64_t records_per_frame = 0;  ///< R
  std::uint64_t passes = 1;             ///< the stream goes over the records this many times

  std::uint64_t frames_per_pass() const {
    return records_per_frame == 0 ? 0 : (records + records_per_frame - 1) / records_per_frame;
  }
  std::uint64_t frame_count() const { return frames_per_pass() * passes; }
  /// The first record of frame `offset` (< frame_count()).
  std::uint64_t first_record(std::uint64_t offset) const {
    return offset % frames_per_pass() * records_per_frame;
  }
  /// Records of frame `offset` (0 past the end).
  std::uint64_t records_in(std::uint64_t offset) const {
    if (offset >= frame_count()) return 0;
    const std::uint64_t first = first_record(offset);
    return records - first < records_per_frame ? records - first : records_per_frame;
  }
};

/// The frames of a dataset of `file_bytes` for the parameters both operators take; the problem ("" when
/// none) otherwise. `records` 0: every record of the file (which must then hold whole records);
/// `records_per_frame` 0: as many as `frame_bytes` holds at `bytes_per_record` (the bytes a frame carries
/// per record: the layout's for the source, the written fields' for the sink).
std::string plan_record_frames(std::uint64_t file_bytes, std::uint64_t records,
                               std::uint64_t records_per_frame, std::uint64_t frame_bytes,
                               std::uint64_t bytes_per_record, record_frames& out);

}  // namespace xf::prefetch
