// CPU data assembly for the prefetch source (see gather.hpp).
#include "operators/sources/prefetch/gather.hpp"

#include <cstring>
#include <optional>

namespace xf::prefetch {

std::uint64_t gather(std::span<const std::byte> dataset, const gather_chunk& chunk, std::uint32_t first_thread,
                     std::uint32_t end_thread) {
  const auto threads = static_cast<std::uint32_t>(chunk.streams.size());
  const std::uint64_t item_bytes = chunk.item_bytes;
  if (end_thread > threads || chunk.items.size() < threads ||
      chunk.prefetch.size() < std::uint64_t{chunk.max_items} * threads * item_bytes)
    throw gather_fault{first_thread, 0, "the chunk's buffers are smaller than its threads and items need"};
  std::uint64_t bytes = 0;
  for (std::uint32_t t = first_thread; t < end_thread; ++t) {
    std::uint64_t k = 0;
    std::optional<std::uint64_t> bad_address;
    const char* why = nullptr;
    const address_words& stream = chunk.streams[t];
    const bool well_formed = decode_addresses(stream.words, stream.used, [&](std::uint64_t address) {
      if (why) return;
      if (k >= chunk.max_items) {
        why = "more items than the prefetch buffer holds per thread";
        return;
      }
      if (address > dataset.size() || dataset.size() - address < item_bytes) {
        why = "an address past the dataset's end";
        bad_address = address;
        return;
      }
      std::memcpy(chunk.prefetch.data() + (k * threads + t) * item_bytes, dataset.data() + address, item_bytes);
      ++k;
    });
    if (why)
      throw gather_fault{t, k,
                         std::string(why) + (bad_address ? " (address " + std::to_string(*bad_address) +
                                                                ", dataset " + std::to_string(dataset.size()) + " bytes)"
                                                          : "")};
    if (!well_formed) throw gather_fault{t, k, "malformed address words"};
    chunk.items[t] = static_cast<std::uint32_t>(k);
    bytes += k * item_bytes;
  }
  return bytes;
}

}  // namespace xf::prefetch
