// prefetch_assembler: checking an address frame, gathering its lanes' items and counting what crossed.
#include "operators/transforms/prefetch_assembler.hpp"

#include <cstring>
#include <vector>

#include "framework/core/element_type.hpp"
#include "framework/core/errors.hpp"
#include "operators/sources/prefetch/address_frame.hpp"
#include "operators/sources/prefetch/gather.hpp"

namespace xf {

void prefetch_assembler::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (setup.inputs.size() != 1 || setup.outputs.size() != 1)
    throw run_error({name_, "", std::nullopt}, "an assembler maps one address topic to one data topic");
  topic_ = setup.inputs.front().name;
  const topic_info& out = setup.outputs.front();
  const auto fail = [&](const std::string& reason) {
    throw run_error({name_, topic_, std::nullopt}, reason);
  };
  if (setup.inputs.front().element != element_type::u64)
    fail("address frames are u64 words, not " + std::string(name_of(setup.inputs.front().element)));
  const std::int64_t item = params_.item_bytes;
  if (item != 1 && item != 2 && item != 4 && item != 8 && item != 16)
    fail("item_bytes must be 1, 2, 4, 8 or 16, not " + std::to_string(item));
  item_bytes_ = static_cast<std::uint32_t>(item);
  if (item_bytes_ % size_of(out.element) != 0)
    fail("items of " + std::to_string(item_bytes_) + " bytes are not whole elements of topic '" + out.name +
         "' (" + std::string(name_of(out.element)) + ")");
  try {
    dataset_ = mapped_file::open(params_.path);
  } catch (const dataset_error& e) {
    throw run_error({name_, topic_, std::nullopt}, e.what());
  }
}

prefetch_assembler::frame_counts prefetch_assembler::assemble(std::uint64_t offset, const frame_in& in,
                                                              frame_out& out) const {
  using namespace prefetch;
  const auto fail = [&](const std::string& reason) { throw run_error({name_, topic_, offset}, reason); };
  const std::uint64_t count = in.bytes / sizeof(std::uint64_t);
  const auto* words = reinterpret_cast<const std::uint64_t*>(in.data);
  if (in.bytes % sizeof(std::uint64_t) != 0 || count < address_frame_header_words)
    fail("a frame of " + std::to_string(in.bytes) + " bytes is not an address frame");
  if (words[0] != address_frame_magic)
    fail("not an address frame (word 0 is " + std::to_string(words[0]) +
         "): the input must be a prefetch_addresses operator's output");
  const address_frame_shape shape{words[1], words[2]};
  const std::uint64_t room = count - address_frame_header_words;
  if (shape.lanes == 0 || shape.lanes > room || shape.words_per_lane > 0xffff'ffffu ||
      shape.words_per_lane > (room - shape.lanes) / shape.lanes)
    fail("the header's " + std::to_string(shape.lanes) + " lanes of " + std::to_string(shape.words_per_lane) +
         " words do not fit a frame of " + std::to_string(count) + " words");
  const auto lanes = static_cast<std::uint32_t>(shape.lanes);
  const auto capacity = static_cast<std::uint32_t>(shape.words_per_lane);

  std::vector<address_words> streams(lanes);
  frame_counts counts{0, shape.used_index(lanes)};
  for (std::uint32_t l = 0; l < lanes; ++l) {
    const std::uint64_t used = words[shape.used_index(l)];
    if (used > capacity)
      fail("lane " + std::to_string(l) + " used " + std::to_string(used) + " words of a region of " +
           std::to_string(capacity));
    // The decoder only reads the words; address_words is the encoder's (writable) view.
    streams[l] = {const_cast<std::uint64_t*>(words + shape.region_index(l)), capacity,
                  static_cast<std::uint32_t>(used)};
    counts.address_words += used;
  }

  const std::uint64_t per_lane = out.capacity / (std::uint64_t{lanes} * item_bytes_);
  const auto max_items = static_cast<std::uint32_t>(per_lane < 0xffff'ffffu ? per_lane : 0xffff'ffffu);
  std::vector<std::uint32_t> items(lanes);
  gather_chunk chunk{
      streams, item_bytes_, max_items, {out.data, std::uint64_t{max_items} * lanes * item_bytes_}, items};
  try {
    gather(dataset_.bytes(), chunk, 0, lanes);
  } catch (const gather_fault& f) {
    fail("lane " + std::to_string(f.thread) + ", item " + std::to_string(f.item) + ": " + f.reason +
         (f.item >= max_items
              ? " (a data frame of " + std::to_string(out.capacity) + " bytes holds " +
                    std::to_string(max_items) + " items per lane of " + std::to_string(lanes) + ")"
              : std::string()));
  }

  // The frame ends after the last item any lane has; where a lane has fewer, pad bytes (a frame is a
  // function of its addresses, for replays).
  std::uint64_t extent = 0;
  for (std::uint32_t l = 0; l < lanes; ++l) {
    counts.addresses += items[l];
    if (items[l] > 0 && (std::uint64_t{items[l]} - 1) * lanes + l + 1 > extent)
      extent = (std::uint64_t{items[l]} - 1) * lanes + l + 1;
  }
  for (std::uint32_t l = 0; l < lanes; ++l)
    for (std::uint64_t k = items[l]; k * lanes + l < extent; ++k)
      std::memset(out.data + (k * lanes + l) * item_bytes_, static_cast<int>(params_.pad), item_bytes_);
  out.bytes = extent * item_bytes_;
  return counts;
}

void prefetch_assembler::on_frame(std::uint64_t offset, const frame_in& in, frame_out& out) {
  const frame_counts c = assemble(offset, in, out);
  assembly_counts& mine = counts_.local();
  mine.addresses.store(mine.addresses.load(std::memory_order_relaxed) + c.addresses,
                       std::memory_order_relaxed);
  mine.address_words.store(mine.address_words.load(std::memory_order_relaxed) + c.address_words,
                           std::memory_order_relaxed);
}

void prefetch_assembler::replay(std::uint64_t offset, const frame_in& in, frame_out& out) {
  (void)assemble(offset, in, out);
}

operator_counters prefetch_assembler::counters() const {
  std::uint64_t addresses = 0, address_words = 0;
  counts_.for_each([&](const assembly_counts& c) {
    addresses += c.addresses.load(std::memory_order_relaxed);
    address_words += c.address_words.load(std::memory_order_relaxed);
  });
  const std::uint64_t address_bytes = address_words * sizeof(std::uint64_t);
  return {{"addresses", addresses},
          {"address_bytes", address_bytes},
          {"items", addresses},
          {"bytes_gathered", addresses * item_bytes_},
          {"compression_percent", address_bytes == 0 ? 0 : addresses * 800 / address_bytes}};
}

}  // namespace xf
