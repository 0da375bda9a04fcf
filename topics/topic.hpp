// The owner of one shared topic: allocates its layers from a topic_memory and hands out the view that
// publishers and subscribers use. Move-only; the view stays valid while the owner lives.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "topics/topic_memory.hpp"
#include "topics/topic_view.hpp"

namespace xf {

struct topic_config {
  std::string name;
  std::uint64_t frame_bytes = 0;  ///< a multiple of 4 KiB
  std::uint32_t capacity = 0;     ///< ≥ 1
  std::uint32_t groups = 0;       ///< subscriber groups, ≥ 1
  std::uint32_t publishers = 0;   ///< publisher workers, ≥ 1
  /// Where the publishers and each subscriber group run; decides where each region of the topic lives
  /// (topic.cpp). Empty `groups_on_gpu` means every group is on the host.
  bool publishers_on_gpu = false;
  std::vector<bool> groups_on_gpu;
  /// The copy engines move the frames across PCIe (copy_bridge.hpp): they live in page-locked host
  /// memory, and the GPU works on a replica of its own.
  bool copy_engines = false;
  /// The stream's first offset: 0, or where a resumed run restarts (xeflow-run --resume). Offsets stay
  /// absolute — frame o is the same frame in every run — so sources produce, maps pass on and sinks see
  /// the offsets they would have in one uninterrupted run. The topic starts as if every offset below it
  /// had been published and released: the claim word, the end word and each group's cursor at it, and
  /// each slot's release words at the last offset below it that used the slot.
  std::uint64_t first_offset = 0;
  /// Per subscriber group: the cursor values one offset takes (a GPU operator that splits frames into
  /// parts takes offset · parts + part from its group's cursor); missing entries: 1.
  std::vector<std::uint32_t> group_items_per_offset;
};

/// Host-side counters of a topic, updated by the executors (relaxed: read for stats).
struct topic_counters {
  std::atomic<std::uint64_t> frames{0};      ///< frames published (void slots excluded)
  std::atomic<std::uint64_t> bytes{0};       ///< valid bytes published
  std::atomic<std::uint64_t> blocked_ns{0};  ///< publishers waiting for a free slot (backpressure)
};

class topic {
 public:
  topic(topic_config config, topic_memory& memory);
  ~topic();
  topic(const topic&) = delete;
  topic& operator=(const topic&) = delete;
  topic(topic&&) noexcept;
  topic& operator=(topic&&) = delete;

  const topic_view& view() const noexcept { return view_; }
  const topic_config& config() const noexcept { return config_; }
  const std::string& name() const noexcept { return config_.name; }
  topic_counters& counters() noexcept { return *counters_; }
  const topic_counters& counters() const noexcept { return *counters_; }
  /// Frames published but not yet released by every group: `claim`/end minus the slowest group's cursor
  /// is not tracked; this is the bound the heap enforces (for tests: never exceeds capacity).
  std::uint32_t frames_in_use() const noexcept;
  /// One past the highest offset published so far (a frame or a void): the highest seq word of the index,
  /// at least the stream's first offset.
  /// For live metrics, from any thread: relaxed loads of words the publishers (or the GPU) write, a
  /// moment's picture rather than a snapshot. Reads the host view's words.
  std::uint64_t published_mark() const noexcept;
  /// One past the highest offset subscriber group g released so far (as published_mark: for live metrics).
  /// published_mark() minus it never exceeds the capacity: a slot is published again only once every
  /// group released its previous occupant.
  std::uint64_t released_mark(std::uint32_t g) const noexcept;
  /// Calls fn(pointer, bytes, layer) for each memory region the topic allocated (for per-topic counters).
  template <class Fn>
  void for_each_region(Fn&& fn) const {
    for (std::size_t i = 0; i < allocation_count_; ++i)
      fn(allocations_[i].p, allocations_[i].bytes, allocations_[i].layer);
  }

 private:
  struct allocation {
    void* p;
    std::size_t bytes;
    topic_layer layer;
  };
  void* take(std::size_t bytes, topic_layer layer, memory_side side);
  /// The words of a stream that starts at `first` (topic_config::first_offset).
  void start_at(std::uint64_t first);
  bool group_on_gpu(std::uint32_t g) const {
    return g < config_.groups_on_gpu.size() && config_.groups_on_gpu[g];
  }

  topic_config config_;
  topic_memory* memory_;
  topic_view view_{};
  std::unique_ptr<topic_counters> counters_;
  std::unique_ptr<allocation[]> allocations_;
  std::size_t allocation_count_ = 0;
};

}  // namespace xf
