// The per-offset ledger of a run's CPU subscribers.
#include "framework/runtime/frame_ledger.hpp"

#include <zlib.h>

#include <algorithm>
#include <tuple>

namespace xf {

void frame_ledger::record(std::uint32_t topic, std::uint32_t group, std::uint64_t offset,
                          const std::byte* data, std::uint64_t bytes, std::uint64_t tag, bool is_void) {
  entry e{topic, group, offset, bytes, tag, is_void, 0};
  if (data != nullptr) {
    uLong crc = crc32(0L, Z_NULL, 0);
    for (std::uint64_t done = 0; done < bytes;) {  // zlib takes at most a uInt at a time
      const auto chunk = static_cast<uInt>(std::min<std::uint64_t>(bytes - done, 1u << 30));
      crc = crc32(crc, reinterpret_cast<const Bytef*>(data + done), chunk);
      done += chunk;
    }
    e.crc = static_cast<std::uint32_t>(crc);
  }
  std::lock_guard lock(mutex_);
  entries_.push_back(e);
}

std::vector<frame_ledger::entry> frame_ledger::entries() const {
  std::vector<entry> sorted;
  {
    std::lock_guard lock(mutex_);
    sorted = entries_;
  }
  std::sort(sorted.begin(), sorted.end(), [](const entry& a, const entry& b) {
    return std::tie(a.topic, a.group, a.offset) < std::tie(b.topic, b.group, b.offset);
  });
  return sorted;
}

void frame_ledger::write(std::ostream& out, const std::vector<std::string>& topic_names) const {
  for (const entry& e : entries())
    out << (e.topic < topic_names.size() ? topic_names[e.topic] : std::to_string(e.topic)) << ' ' << e.group
        << ' ' << e.offset << ' ' << e.bytes << ' ' << e.tag << ' ' << (e.is_void ? 1 : 0) << ' ' << e.crc
        << '\n';
}

}  // namespace xf
