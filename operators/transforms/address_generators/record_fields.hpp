// What the record generators of the address stage share (records, indexed): their parameters — fixed-length
// records and the fields the consumer reads, declared as prefetch_source declares them — and the walk that
// hands a frame's field items to lanes so that the assembled frame is laid out as prefetch_source lays it
// out (item i of the frame's record j at (i·n + j)·item_bytes), which consumers of prefetch_source
// (kmeans_assign) read unchanged.
#pragma once

#include <cstdint>
#include <string>

#include "framework/core/exec_space.hpp"
#include "operators/sources/prefetch/record_frames.hpp"
#include "operators/sources/prefetch/record_layout.hpp"
#include "operators/transforms/prefetch_addresses.hpp"

namespace xf::prefetch {

/// Fixed-length records and the fields read.
struct record_fields_params {
  std::uint64_t record_bytes = 0;
  std::int64_t item_bytes = 4;
  record_layout fields;  ///< the `fields` list only (parse_field_list); record and item sizes are above

  XF_HOST_DEVICE record_layout layout() const {
    return resolve_fields(fields, record_bytes, static_cast<std::uint32_t>(item_bytes));
  }
};

/// Declares record_fields_params' parameters (under a generator's params derived from it), and checks the
/// layout they make at load.
template <class Schema>
void describe_record_fields(Schema& s) {
  using params = record_fields_params;
  s.bytes(&params::record_bytes, "record_bytes", "bytes per record of the dataset", required, 1);
  s.parsed(&params::fields, "fields",
           "the fields the consumer reads, 'OFFSET:BYTES,…' in offset order (empty: the whole record)",
           std::string{}, parse_field_list);
  s.param(&params::item_bytes, "item_bytes",
          "bytes each address names (1, 2, 4, 8 or 16; the assembler's item_bytes); fields are whole items",
          params{}.item_bytes, 1, 16);
  s.check_params([](const params& p) {
    const char* problem = layout_problem(p.layout());
    return *problem == '\0' ? std::string() : std::string("fields: ") + problem;
  });
}

/// Pushes lane `lane.lane`'s share of a frame of `n` records: position q of the frame's items (q = i·n + j
/// for item i of the frame's record j) belongs to lane q mod L, as its item q div L, so the assembler's
/// (k·L + l) puts it at q. `record_of(j)` is the dataset index of record j. A lane walks one item's records
/// at a time (a stride of L records: one pattern per field item with patterns on), and stops when push
/// refuses (the operator sees the overflow). An index past the dataset gives an address past its end,
/// which the assembler names.
template <class RecordOf, class Push>
XF_HOST_DEVICE void push_record_fields(const record_layout& l, std::uint64_t n, const address_lane& lane,
                                       RecordOf record_of, Push& push) {
  std::uint64_t i = 0;  // item of the record, fields in order
  for (std::uint32_t f = 0; f < l.field_count; ++f) {
    for (std::uint32_t b = 0; b < l.fields[f].bytes; b += l.item_bytes, ++i) {
      const std::uint64_t offset = l.fields[f].offset + b;
      const std::uint64_t skew = i * n % lane.lanes;  // the lane of this item's record 0
      for (std::uint64_t j = (lane.lane + lane.lanes - skew) % lane.lanes; j < n; j += lane.lanes)
        if (!push(record_of(j) * l.record_bytes + offset)) return;
    }
  }
}

}  // namespace xf::prefetch
