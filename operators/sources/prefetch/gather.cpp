// CPU data assembly for the prefetch source (see gather.hpp).
#include "operators/sources/prefetch/gather.hpp"

#include <cstring>
#include <optional>
#include <vector>

#include "framework/core/errors.hpp"

namespace xf::prefetch {

namespace {

/// gather for items of ItemBytes: each item one load and one store. A memcpy of a run-time size was a
/// library call per item: 2.9 ns a 1- or 4-byte item against 1.0 now, with the decoder's stride index no
/// longer a modulo (64 lanes of 1024 items, one core of the development machine, 2026-11-23). Gathering
/// each lane into a row first and interleaving in L1-sized tiles was slower still (1.3 ns).
template <std::uint32_t ItemBytes>
std::uint64_t gather_items(std::span<const std::byte> dataset, const gather_chunk& chunk,
                           std::uint32_t first_thread, std::uint32_t end_thread) {
  const auto threads = static_cast<std::uint32_t>(chunk.streams.size());
  const std::uint64_t step = std::uint64_t{threads} * ItemBytes;  // between a thread's items
  std::uint64_t bytes = 0;
  for (std::uint32_t t = first_thread; t < end_thread; ++t) {
    std::uint64_t k = 0;
    std::optional<std::uint64_t> bad_address;
    const char* why = nullptr;
    const address_words& stream = chunk.streams[t];
    std::byte* out = chunk.prefetch.data() + std::uint64_t{t} * ItemBytes;
    // The walk stops at the first bad address: a pattern's header can count 2^62 addresses.
    const bool well_formed = decode_addresses(stream.words, stream.used, [&](std::uint64_t address) {
      if (k >= chunk.max_items) {
        why = "more items than the prefetch buffer holds per thread";
        return false;
      }
      if (address > dataset.size() || dataset.size() - address < ItemBytes) {
        why = "an address past the dataset's end";
        bad_address = address;
        return false;
      }
      std::memcpy(out + k * step, dataset.data() + address, ItemBytes);
      ++k;
      return true;
    });
    if (why)
      throw gather_fault{
          t, k,
          std::string(why) + (bad_address ? " (address " + std::to_string(*bad_address) + ", dataset " +
                                                std::to_string(dataset.size()) + " bytes)"
                                          : "")};
    if (!well_formed) throw gather_fault{t, k, "malformed address words"};
    chunk.items[t] = static_cast<std::uint32_t>(k);
    bytes += k * ItemBytes;
  }
  return bytes;
}

}  // namespace

std::uint64_t gather(std::span<const std::byte> dataset, const gather_chunk& chunk,
                     std::uint32_t first_thread, std::uint32_t end_thread) {
  const auto threads = static_cast<std::uint32_t>(chunk.streams.size());
  if (end_thread > threads || chunk.items.size() < threads ||
      chunk.prefetch.size() < std::uint64_t{chunk.max_items} * threads * chunk.item_bytes)
    throw gather_fault{first_thread, 0, "the chunk's buffers are smaller than its threads and items need"};
  switch (chunk.item_bytes) {
    case 1:
      return gather_items<1>(dataset, chunk, first_thread, end_thread);
    case 2:
      return gather_items<2>(dataset, chunk, first_thread, end_thread);
    case 4:
      return gather_items<4>(dataset, chunk, first_thread, end_thread);
    case 8:
      return gather_items<8>(dataset, chunk, first_thread, end_thread);
    case 16:
      return gather_items<16>(dataset, chunk, first_thread, end_thread);
    default:
      throw gather_fault{first_thread, 0,
                         "items must be 1, 2, 4, 8 or 16 bytes, not " + std::to_string(chunk.item_bytes)};
  }
}

namespace {

enum class direction { gather, scatter };

/// Moves the layout's items between records and a field-by-field frame, with the item size a compile-time
/// constant so that each item is one load and one store. Records front to back: one stream for the CPU.
template <std::uint32_t ItemBytes, direction Direction, class RecordAt>
void move_items(RecordAt record_at, const std::uint32_t* item_offsets, std::uint32_t items,
                std::uint64_t count, std::byte* frame) {
  const std::uint64_t column = count * ItemBytes;  // bytes of one item's array
  for (std::uint64_t r = 0; r < count; ++r) {
    std::byte* record = record_at(r);
    std::byte* slot = frame + r * ItemBytes;
    for (std::uint32_t i = 0; i < items; ++i) {
      if constexpr (Direction == direction::gather)
        std::memcpy(slot + i * column, record + item_offsets[i], ItemBytes);
      else
        std::memcpy(record + item_offsets[i], slot + i * column, ItemBytes);
    }
  }
}

/// Moves the items `layout` names of `count` records, record r starting at record_at(r), to or from `frame`.
template <direction Direction, class RecordAt>
void move_layout_items(const record_layout& layout, RecordAt record_at, std::uint64_t count,
                       std::byte* frame) {
  const std::uint32_t items = layout.items_per_record();
  std::vector<std::uint32_t> offsets;  // of every item of every field, in order
  offsets.reserve(items);
  for (std::uint32_t f = 0; f < layout.field_count; ++f)
    for (std::uint32_t b = 0; b < layout.fields[f].bytes; b += layout.item_bytes)
      offsets.push_back(layout.fields[f].offset + b);
  const auto run = [&]<std::uint32_t ItemBytes>() {
    move_items<ItemBytes, Direction>(record_at, offsets.data(), items, count, frame);
  };
  switch (layout.item_bytes) {
    case 1:
      return run.template operator()<1>();
    case 2:
      return run.template operator()<2>();
    case 4:
      return run.template operator()<4>();
    case 8:
      return run.template operator()<8>();
    default:
      return run.template operator()<16>();
  }
}

template <direction Direction>
void move_records(std::span<const std::byte> dataset, const record_layout& layout, std::uint64_t first,
                  std::uint64_t count, std::byte* frame, std::uint64_t frame_bytes) {
  const std::uint32_t items = layout.items_per_record();
  XF_EXPECTS(*layout_problem(layout) == '\0', layout_problem(layout));
  XF_EXPECTS(
      first <= dataset.size() / layout.record_bytes && count <= dataset.size() / layout.record_bytes - first,
      "the records must lie inside the dataset");
  XF_EXPECTS(frame_bytes >= count * items * layout.item_bytes, "the frame is too small for its records");
  if (count == 0) return;
  // The dataset is written only when scattering (scatter_records took it writable).
  auto* records = const_cast<std::byte*>(dataset.data()) + first * layout.record_bytes;
  // Whole records, one item each: the frame is the dataset's bytes as they are.
  if (items == 1 && layout.item_bytes == layout.record_bytes) {
    if constexpr (Direction == direction::gather)
      std::memcpy(frame, records, count * layout.record_bytes);
    else
      std::memcpy(records, frame, count * layout.record_bytes);
    return;
  }
  move_layout_items<Direction>(
      layout, [records, bytes = layout.record_bytes](std::uint64_t r) { return records + r * bytes; }, count,
      frame);
}

}  // namespace

void gather_records(std::span<const std::byte> dataset, const record_layout& layout, std::uint64_t first,
                    std::uint64_t count, std::span<std::byte> out) {
  move_records<direction::gather>(dataset, layout, first, count, out.data(), out.size());
}

void gather_records_at(std::span<const std::byte> dataset, const record_layout& layout,
                       std::span<const std::uint64_t> starts, std::span<std::byte> out) {
  XF_EXPECTS(*layout_problem(layout) == '\0', layout_problem(layout));
  XF_EXPECTS(out.size() >= starts.size() * layout.bytes_read_per_record(),
             "the frame is too small for its records");
  for (const std::uint64_t start : starts)
    XF_EXPECTS(start <= dataset.size() && dataset.size() - start >= layout.record_bytes,
               "the records must lie inside the dataset");
  auto* data = const_cast<std::byte*>(dataset.data());  // read only: gathering
  move_layout_items<direction::gather>(
      layout, [data, starts](std::uint64_t r) { return data + starts[r]; }, starts.size(), out.data());
}

void scatter_records(std::span<std::byte> dataset, const record_layout& layout, std::uint64_t first,
                     std::uint64_t count, std::span<const std::byte> in) {
  move_records<direction::scatter>(dataset, layout, first, count, const_cast<std::byte*>(in.data()),
                                   in.size());
}

}  // namespace xf::prefetch
