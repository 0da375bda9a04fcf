// A run's per-offset ledger: what every CPU subscriber group received at each offset of each topic —
// valid bytes, the source offset it descends from, void or not, and a CRC-32 of its bytes. Two runs of one
// topology (the host executor and the device's kernel, say) must give the same ledger: that is how the
// differential test holds the kernel to the host executor's results. Recording costs a CRC per frame:
// only runs that ask for it (xeflow-run --ledger) keep one.
#pragma once

#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace xf {

class frame_ledger {
 public:
  struct entry {
    std::uint32_t topic = 0;
    std::uint32_t group = 0;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    std::uint64_t tag = 0;
    bool is_void = false;
    std::uint32_t crc = 0;
    friend bool operator==(const entry&, const entry&) = default;
  };

  /// Records group `group`'s delivery of `offset` of `topic` (data: the frame's valid bytes, null for
  /// a void offset). Thread-safe.
  void record(std::uint32_t topic, std::uint32_t group, std::uint64_t offset, const std::byte* data,
              std::uint64_t bytes, std::uint64_t tag, bool is_void);
  /// Adds an entry recorded elsewhere (another rank's, when a ranked run merges its ledgers).
  void add(const entry& e) {
    std::lock_guard lock(mutex_);
    entries_.push_back(e);
  }
  /// Every entry, sorted by topic, group and offset.
  std::vector<entry> entries() const;
  /// One line per entry: "topic group offset bytes tag void crc32", topics by name.
  void write(std::ostream& out, const std::vector<std::string>& topic_names) const;

 private:
  mutable std::mutex mutex_;
  std::vector<entry> entries_;
};

}  // namespace xf
