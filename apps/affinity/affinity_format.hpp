// The transaction-affinity dataset (BigKernel §V "MasterCard Affinity"): variable-length purchase records,
// plus an optional index file of record offsets (the paper's "indexed" variant).
//
// Data file (little-endian, no header): records back to back from offset 0 to the end of the file.
//
//   offset  size  field          generator                         read by the affinity query
//        0     4  record_bytes   24 + 4 × item_count               scan only (to find the next record)
//        4     8  card           card number of one of C cards     scan and index
//       12     4  merchant       0 .. M-1, Zipf-skewed (0 = most)  scan and index
//       16     4  amount_cents   100 .. 100099                     never
//       20     2  item_count     0 .. 15                           never
//       22     2  pad            0                                 never
//       24  4×n   item_code[n]   u32 each                          never
//
// record_bytes includes the 24-byte header. Fields are packed (card is not 8-byte aligned): read them with
// memcpy (load_u32/load_u64). The query reads the first 16 bytes of each record when scanning, and bytes
// [4, 16) of each record plus its 8-byte index entry with the index: items are never touched.
// The scan trusts record_bytes beyond two checks (>= 24, and the record ends inside the file); the index
// path never reads record_bytes and checks only that each offset leaves a whole header inside the file.
//
// Index file: one u64 per record, the record's byte offset in the data file, in file order; its size is
// 8 × records.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace xf::apps::affinity {

struct [[gnu::packed]] record_header {
  std::uint32_t record_bytes;
  std::uint64_t card;
  std::uint32_t merchant;
  std::uint32_t amount_cents;
  std::uint16_t item_count;
  std::uint16_t pad;
};

inline constexpr std::uint64_t record_header_bytes = 24;
inline constexpr std::uint64_t record_bytes_offset = 0;
inline constexpr std::uint64_t card_offset = 4;
inline constexpr std::uint64_t merchant_offset = 12;
inline constexpr std::uint64_t item_bytes = 4;
inline constexpr std::uint32_t max_items = 15;
inline constexpr std::uint64_t index_entry_bytes = 8;

static_assert(sizeof(record_header) == record_header_bytes);
static_assert(offsetof(record_header, record_bytes) == record_bytes_offset);
static_assert(offsetof(record_header, card) == card_offset &&
              offsetof(record_header, merchant) == merchant_offset);
static_assert(offsetof(record_header, amount_cents) == 16 && offsetof(record_header, item_count) == 20);
static_assert(offsetof(record_header, pad) == 22);
static_assert(std::endian::native == std::endian::little,
              "records are read in place: little-endian hosts only");

inline std::uint32_t load_u32(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline std::uint64_t load_u64(const std::byte* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace xf::apps::affinity
