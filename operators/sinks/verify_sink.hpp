// verify_sink: checks a stream frame by frame against what its replayable upstream chain says each offset
// must hold, and counts what a broken pipeline does wrong: lost, duplicated, reordered and corrupt frames.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "framework/operator.hpp"
#include "framework/operator_schema.hpp"
#include "operators/sinks/seen_offsets.hpp"
#include "operators/sinks/thread_slots.hpp"

namespace xf {

/// Checks every frame of its one input against input_references[0] and counts anomalies:
/// - corrupt: the payload differs from the reference's frame at that offset in length or any byte, or the
///   reference has no frame there (past its end). A frame holding another offset's content is corrupt too.
///   The message gives the zlib crc32 of both payloads and the first differing byte.
/// - duplicated: an offset delivered again (each extra delivery counts once).
/// - reordered: on one thread, an offset not larger than the previous offset that thread saw (each
///   subscriber thread receives increasing offsets by protocol). A duplicate on the same thread is both.
/// - lost: offsets below L never delivered. L is the reference end (first offset where expected() is
///   false, found once at on_start by an exponential then binary search; unbounded when expected() still
///   holds at 2^62, in which case the highest delivered offset + 1 stands in). When the run was
///   interrupted (operator_setup::interrupted set: SIGINT stops the sources early and drains what was
///   published), L = min(reference end, highest delivered offset + 1): the framework delivers every
///   offset below the topic's end, so a gap below the highest delivered offset is still a real loss.
/// on_stop throws run_error (operator, input topic, smallest bad offset) summarising all anomalies.
/// on_frame is safe from any number of threads: per-thread counters, a lock-free seen-offsets bitmap; a
/// lock only on the anomaly path.
class verify_sink final : public cpu_sink {
 public:
  struct params {};

  static void describe(operator_schema<params>& s) {
    s.describe(
        "checks every frame byte-exact against the replayed upstream chain; counts lost, duplicated, "
        "reordered "
        "and corrupt frames and fails the run when any is non-zero");
    s.needs_reference();
  }

  /// Reference probes stop here: a stream with frames at 2^62 has no end worth finding.
  static constexpr std::uint64_t reference_search_limit = std::uint64_t{1} << 62;
  /// Anomaly messages kept for the error (the counts are always complete).
  static constexpr std::size_t max_reported_anomalies = 8;

  explicit verify_sink(const params&) {}

  /// Needs inputs[0] and input_references[0] (run_error naming the operator when either is missing), and
  /// searches the reference's end: O(log end) calls of expected().
  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in) override;
  /// Counts lost offsets, then throws run_error when any anomaly count is non-zero.
  void on_stop() override;
  /// {frames, bytes, lost, duplicated, reordered, corrupt}; `lost` is known after on_stop.
  operator_counters counters() const override;

  /// The first offset the reference has no frame for; nullopt when unbounded (or before on_start).
  std::optional<std::uint64_t> reference_end() const noexcept { return reference_end_; }

 private:
  enum anomaly : std::uint8_t { lost, duplicated, reordered, corrupt, anomaly_kinds };

  struct alignas(cache_line_bytes) thread_state {
    // Written by the owning thread only (load + store), read by counters() and on_stop.
    std::atomic<std::uint64_t> frames{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint64_t> duplicated{0};
    std::atomic<std::uint64_t> reordered{0};
    std::atomic<std::uint64_t> corrupt{0};
    std::atomic<std::uint64_t> delivered_end{0};  ///< highest offset this thread saw + 1
    // Owning thread only.
    std::optional<std::uint64_t> previous_offset;
    std::vector<std::byte> expected;  ///< the reference frame, reused across frames
  };

  std::optional<std::uint64_t> find_reference_end() const;
  void check_content(thread_state& state, std::uint64_t offset, const frame_in& in);
  void record(anomaly kind, std::uint64_t offset, std::string detail);

  std::string name_;
  std::string topic_;
  std::uint64_t frame_bytes_ = 0;
  element_type element_ = element_type::u8;
  const frame_reference* reference_ = nullptr;
  std::optional<std::uint64_t> reference_end_;
  const std::atomic<bool>* interrupted_ = nullptr;  ///< from operator_setup; null outside a run
  seen_offsets seen_;
  thread_slots<thread_state> slots_;
  std::atomic<std::uint64_t> lost_{0};
  bool stopped_ = false;  ///< on_stop ran (touched by the stopping thread only)

  mutable std::mutex anomalies_mutex_;
  std::array<std::optional<std::uint64_t>, anomaly_kinds> first_bad_{};  ///< smallest offset per kind
  std::vector<std::string> details_;
  std::uint64_t details_dropped_ = 0;
};

}  // namespace xf
