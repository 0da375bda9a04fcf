// Unified-memory traffic per topic, as the CUDA driver reports it through CUPTI's unified-memory counters:
// GPU page faults, CPU page faults, and bytes migrated each way, attributed to the topic whose managed
// memory the address falls in. This is how the stats show what a coherence policy costs (the `naive`
// policies migrate pages; the tuned ones should show none on the hot path). Without CUPTI (not built,
// or the driver refuses the counters) `available()` is false and the stats say so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xf {

struct um_traffic {
  std::uint64_t gpu_page_faults = 0;
  std::uint64_t cpu_page_faults = 0;
  std::uint64_t bytes_to_device = 0;  ///< migrated host → device
  std::uint64_t bytes_to_host = 0;    ///< migrated device → host
};

/// Collects unified-memory counters for one run. Process-wide (CUPTI's activity API is): at most one
/// instance at a time. Start before the topics' memory is touched by the GPU, stop after the kernel ended.
class um_counters {
 public:
  /// Counts the traffic between the host and GPU `device` (a CUDA ordinal: the one the run's kernel is on).
  explicit um_counters(int device);
  ~um_counters();
  um_counters(const um_counters&) = delete;
  um_counters& operator=(const um_counters&) = delete;

  /// False when the counters cannot be had; `why()` then says why.
  bool available() const noexcept { return available_; }
  const std::string& why() const noexcept { return why_; }

  /// Attributes [begin, begin + bytes) to `owner` (a topic index). Call for every region before stop().
  void add_range(std::uintptr_t begin, std::uint64_t bytes, std::size_t owner);
  /// Flushes and disables the counters; returns the traffic per owner (indexed by owner, `owners` long),
  /// plus everything outside the registered ranges in the last element.
  std::vector<um_traffic> stop(std::size_t owners);

 private:
  struct range {
    std::uintptr_t begin, end;
    std::size_t owner;
  };
  bool available_ = false;
  bool stopped_ = false;
  std::string why_;
  std::vector<range> ranges_;
};

}  // namespace xf
