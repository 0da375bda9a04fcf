// verify_sink: checks a stream frame by frame against what its replayable upstream chain says each offset
// must hold, and counts what a broken pipeline does wrong: lost, duplicated, reordered and corrupt frames.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/page_buffer.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/seen_offsets.hpp"
#include "operators/sinks/thread_slots.hpp"

namespace xf {

/// Checks every frame of its one input against input_references[0] and counts anomalies:
/// - corrupt: the payload differs from the reference's frame at that offset, or the reference has no frame
///   there (past its end). A frame holding another offset's content is corrupt too. How frames are
///   compared is the `mode` parameter:
///   - exact (default): the reference replays every frame and the payload is compared with it in length
///     and every byte; the message gives the zlib crc32 of both payloads and the first differing byte.
///   - checksum: xf::frame_checksum (operators/frame_checksum.hpp, which covers the length too) of the
///     payload is compared with that of the reference's frame; the message gives both checksums. When the
///     reference is periodic (frame_reference::period() = P > 0, e.g. dataset_source and any chain of
///     content-only maps below it) the expected checksum of every frame but the stream's last is computed
///     once per o % P, on first use (no up-front cost at on_start), and reused, so checking a frame costs
///     one pass over its bytes: what a benchmark's sink can afford at link speed. With a non-periodic
///     reference every frame is replayed, then checksummed: correct, just not faster than exact. Offset-
///     dependent maps (apps/custom_operator's xor_mask) make period() lie: on_start compares the checksums
///     of frames 0 and P once and replays every frame when they differ, which catches most such chains but
///     not all, so do not verify those in checksum mode.
/// - duplicated: an offset delivered again (each extra delivery counts once).
/// - reordered: on one thread, an offset not larger than the previous offset that thread saw (each
///   subscriber thread receives increasing offsets by protocol). A duplicate on the same thread is both.
/// - lost: offsets below L never delivered. L is the reference end (first offset where expected() is
///   false, found once at on_start by an exponential then binary search; unbounded when expected() still
///   holds at 2^62, in which case the highest delivered offset + 1 stands in). When the run was
///   interrupted (operator_setup::interrupted set: SIGINT stops the sources early and drains what was
///   published), L = min(reference end, highest delivered offset + 1): the framework delivers every
///   offset below the topic's end, so a gap below the highest delivered offset is still a real loss. When
///   the run was aborted (operator_setup::aborted: a failure or a second interrupt) losses are not judged:
///   the abort drops frames that threads had taken and not yet received. A resumed run
///   (operator_setup::resume_offset = K) counts losses in [K, L) only: the offsets below K were checked by
///   the run that committed them. Replayed frames above what this sink had checked are checked again,
///   which costs time and finds nothing new: the sink keeps no state across frames, so a checkpointed run
///   may restart it (operator_schema::resumable).
/// on_stop throws run_error (operator, input topic, smallest bad offset) summarising all anomalies.
/// on_frame is safe from any number of threads: per-thread counters, a lock-free seen-offsets bitmap, a
/// checksum cache whose entries are claimed by a compare-exchange (a thread that loses the race computes
/// the checksum itself rather than waiting); a lock only on the anomaly path.
class verify_sink final : public cpu_sink {
 public:
  struct params {
    std::string mode = "exact";
  };
  enum class compare_mode : std::uint8_t { exact, checksum };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "checks every frame against the replayed upstream chain (byte-exact, or by checksum); counts lost, "
        "duplicated, reordered and corrupt frames and fails the run when any is non-zero");
    s.param(&params::mode, "mode",
            "exact: replay every frame and compare every byte; checksum: compare frame_checksum with the "
            "replayed frame's, computed once per frame of a periodic upstream (dataset_source) and cached",
            params{}.mode, {"exact", "checksum"});
    s.needs_reference();
    s.resumable();
  }

  /// Reference probes stop here: a stream with frames at 2^62 has no end worth finding.
  static constexpr std::uint64_t reference_search_limit = std::uint64_t{1} << 62;
  /// Anomaly messages kept for the error (the counts are always complete).
  static constexpr std::size_t max_reported_anomalies = 8;

  /// Checksums cached at most, in checksum mode (16 bytes each): a larger period caches its first
  /// max_cached_checksums frames and replays the others.
  static constexpr std::uint64_t max_cached_checksums = std::uint64_t{1} << 20;
  /// The cache is filled at start (on the sink's thread count) when that replays at most this many bytes,
  /// so the stream pays only for comparing; beyond it, entries fill as frames arrive.
  static constexpr std::uint64_t eager_cache_bytes = std::uint64_t{1} << 30;

  /// Throws std::invalid_argument when params.mode is neither "exact" nor "checksum" (the schema's
  /// choices keep a topology from getting there).
  explicit verify_sink(const params& p);

  /// Needs inputs[0] and input_references[0] (run_error naming the operator when either is missing), and
  /// searches the reference's end: O(log end) calls of expected(). In checksum mode with a periodic
  /// reference, also sizes the (empty) checksum cache, probes the period (two more calls) and fills the
  /// cache when small enough. The search and the filling stop once the run is interrupted or aborted.
  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in) override;
  /// Counts lost offsets, then throws run_error when any anomaly count is non-zero.
  void on_stop() override;
  /// {frames, bytes, lost, duplicated, reordered, corrupt}; `lost` is known after on_stop.
  operator_counters counters() const override;

  /// The first offset the reference has no frame for; nullopt when unbounded (or before on_start).
  std::optional<std::uint64_t> reference_end() const noexcept { return reference_end_; }
  compare_mode mode() const noexcept { return mode_; }
  /// The period the checksum cache is keyed by; 0 when every frame is replayed (exact mode, a
  /// non-periodic reference, or a period that failed on_start's probe). Valid after on_start.
  std::uint64_t cache_period() const noexcept { return cache_period_; }

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
    page_buffer expected;  ///< the reference frame, reused across frames
  };

  /// One dataset frame's expected checksum. `state` goes empty → filling (by the one thread whose
  /// compare-exchange won) → ready; the filling thread writes checksum and bytes before its release store
  /// of ready, readers load ready with acquire before reading them.
  struct cached_checksum {
    enum : std::uint8_t { empty, filling, ready };
    std::atomic<std::uint8_t> state{empty};
    std::uint64_t checksum = 0;
    std::uint64_t bytes = 0;
  };
  struct expected_sum {
    std::uint64_t checksum = 0;
    std::uint64_t bytes = 0;
  };

  std::optional<std::uint64_t> find_reference_end() const;
  void setup_checksum_cache(std::uint32_t threads);
  void check_content(thread_state& state, std::uint64_t offset, const frame_in& in);
  void check_checksum(thread_state& state, std::uint64_t offset, const frame_in& in);
  /// The reference's checksum at `offset` (cached when the offset is cacheable), nullopt past its end.
  std::optional<expected_sum> expected_checksum(thread_state& state, std::uint64_t offset);
  std::optional<expected_sum> replay_checksum(thread_state& state, std::uint64_t offset);
  void record(anomaly kind, std::uint64_t offset, std::string detail);

  compare_mode mode_;
  std::string name_;
  std::string topic_;
  std::uint64_t frame_bytes_ = 0;
  element_type element_ = element_type::u8;
  const frame_reference* reference_ = nullptr;
  std::optional<std::uint64_t> reference_end_;
  const std::atomic<bool>* interrupted_ = nullptr;  ///< from operator_setup; null outside a run
  std::uint64_t first_offset_ = 0;                  ///< operator_setup::resume_offset: losses count from it
  const std::atomic<bool>* aborted_ = nullptr;      ///< from operator_setup; null outside a run
  /// The run was interrupted or aborted: start-up replays stop early.
  bool cut_short() const;
  // Checksum mode: set at on_start, read-only after (the entries themselves are atomic).
  std::uint64_t cache_period_ = 0;
  std::uint64_t cache_entries_ = 0;  ///< min(period, reference end, max_cached_checksums)
  std::uint32_t cache_phases_ = 1;   ///< the reference's phase_count()
  /// [cache_entries_ · cache_phases_]: the entry of offset o is phase_of(o) · cache_entries_ + o % P.
  std::unique_ptr<cached_checksum[]> cache_;
  std::uint64_t cache_index(std::uint64_t offset) const {
    return std::uint64_t{reference_->phase_of(offset)} * cache_entries_ + offset % cache_period_;
  }
  /// The stream's last frame (it may be short, so the cache never holds it), replayed at start with the
  /// cache: replayed on arrival it would hold the end of the stream up by a whole frame's chain (FMA-64
  /// over 4 MiB: ~65 ms on one thread, a third of a 4 GiB stream).
  std::optional<expected_sum> last_sum_;
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
