// The prefetch source's access description for fixed-length records (the BigKernel paper's K-means
// particles): which fields of each record the GPU operator reads. The address-generation warps turn a range
// of records into the addresses of those fields' items, in record order, for the address stream
// (address_stream.hpp): a record's fields repeat at every record, so the stream compresses to one pattern
// of period ≤ max_pattern_period when the fields make ≤ 4 items, or to explicit runs otherwise.
#pragma once

#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "operators/sources/prefetch/address_stream.hpp"

namespace xf::prefetch {

inline constexpr std::uint32_t max_record_fields = 8;

/// A field the operator reads: `bytes` at `offset` in the record, a multiple of the source's item size
/// (a field of several items is read as consecutive items: an 8-byte card number with 4-byte items is
/// two).
struct record_field {
  std::uint32_t offset = 0;
  std::uint32_t bytes = 0;
};

struct record_layout {
  std::uint64_t record_bytes = 0;
  std::uint32_t item_bytes = 4;
  std::uint32_t field_count = 0;
  record_field fields[max_record_fields] = {};

  /// Items one record contributes.
  XF_HOST_DEVICE std::uint32_t items_per_record() const {
    std::uint32_t n = 0;
    for (std::uint32_t f = 0; f < field_count; ++f) n += fields[f].bytes / item_bytes;
    return n;
  }
  /// Bytes of a record read: the fraction of the dataset that crosses PCIe is this / record_bytes.
  XF_HOST_DEVICE std::uint64_t bytes_read_per_record() const {
    return std::uint64_t{items_per_record()} * item_bytes;
  }
};

/// Why a layout cannot be used (empty: it can): fields past the record, overlapping or out of order,
/// sizes that are not whole items, an item size other than 1, 2, 4, 8 or 16. Device code checks its
/// parameters with it too (a GPU operator has no on_start).
XF_HOST_DEVICE inline const char* layout_problem(const record_layout& l) {
  if (l.item_bytes != 1 && l.item_bytes != 2 && l.item_bytes != 4 && l.item_bytes != 8 && l.item_bytes != 16)
    return "the item size must be 1, 2, 4, 8 or 16 bytes";
  if (l.record_bytes == 0) return "records must have a size";
  if (l.field_count == 0 || l.field_count > max_record_fields) return "a layout reads 1 to 8 fields";
  std::uint64_t end = 0;
  for (std::uint32_t f = 0; f < l.field_count; ++f) {
    const record_field& field = l.fields[f];
    if (field.bytes == 0 || field.bytes % l.item_bytes != 0) return "field sizes must be whole items";
    if (field.offset % l.item_bytes != 0) return "fields must start at a multiple of the item size";
    if (f > 0 && field.offset < end) return "fields must be in offset order and must not overlap";
    end = std::uint64_t{field.offset} + field.bytes;
    if (end > l.record_bytes) return "a field ends past the record";
  }
  return "";
}

/// The layout of records of `record_bytes` read in items of `item_bytes`, with the fields of `fields` (a
/// `fields` parameter as parse_field_list left it: field_count 0 for an empty list, the whole record).
XF_HOST_DEVICE inline record_layout resolve_fields(const record_layout& fields, std::uint64_t record_bytes,
                                                   std::uint32_t item_bytes) {
  record_layout l = fields;
  l.record_bytes = record_bytes;
  l.item_bytes = item_bytes;
  if (l.field_count == 0 && record_bytes <= 0xffff'ffffu) {
    l.fields[0] = {0, static_cast<std::uint32_t>(record_bytes)};
    l.field_count = 1;
  }
  return l;
}

/// Pushes the addresses of records [first, end) (dataset offset `base`) into `enc`, resuming at
/// `*next_item` (items since `first`, in record order): false when `out` filled up, with `*next_item`
/// at the item to push next. The caller hands the buffer on and calls again.
XF_HOST_DEVICE inline bool generate_record_addresses(const record_layout& l, std::uint64_t base,
                                                     std::uint64_t first, std::uint64_t end,
                                                     std::uint64_t* next_item, address_encoder& enc,
                                                     address_words& out) {
  const std::uint32_t per_record = l.items_per_record();
  const std::uint64_t total = (end - first) * per_record;
  for (std::uint64_t i = *next_item; i < total; ++i) {
    const std::uint64_t record = first + i / per_record;
    std::uint32_t k = static_cast<std::uint32_t>(i % per_record);
    std::uint32_t f = 0;
    while (k >= l.fields[f].bytes / l.item_bytes) k -= l.fields[f++].bytes / l.item_bytes;
    const std::uint64_t address =
        base + record * l.record_bytes + l.fields[f].offset + std::uint64_t{k} * l.item_bytes;
    if (!enc.push(address, out)) {
      *next_item = i;
      return false;
    }
  }
  *next_item = total;
  return true;
}

}  // namespace xf::prefetch
