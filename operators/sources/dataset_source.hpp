// dataset_source: the benchmark's source. It cycles through P distinct frames (a dataset) and publishes
// each in place, so its per-frame CPU cost is near zero and a benchmark measures the data path, not the CPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/thread_slots.hpp"
#include "operators/sources/generated_source.hpp"

namespace xf {

struct dataset_stream_params {
  std::uint64_t total_bytes = std::uint64_t{1} << 30;  ///< default 1 GiB
  std::int64_t seed = 1;
  std::int64_t dataset_frames = 0;  ///< P; 0 = the output topic's capacity
};

/// A stream of `total_bytes` whose frame o holds what sequence_source (same seed) puts in its frame o % P,
/// P = dataset_frames: elements [(o % P)·E, (o % P)·E + n) of the sequence seed + i, E the elements per
/// frame, n this frame's. The last frame may be short; it then holds the prefix of its dataset frame.
///
/// In place: the topic's frame heap hands offset o the heap frame o % capacity whenever it can
/// (topic_view::alloc_frame), and nothing but its publisher writes a topic frame, so a heap frame keeps the
/// bytes this source last wrote there. The source remembers, per heap frame (frame_out::frame_index),
/// which dataset frame and how many bytes of it the frame holds; produce() only sets out.bytes when the
/// frame already holds what offset o needs, and writes the frame otherwise. With P = capacity (the
/// default), or any P dividing it, every heap frame always gets the same dataset frame, so after the first
/// `capacity` frames the source writes nothing (any other P makes most publishes fills: correct, not
/// cheap). This is what the benchmark uses, so that every contender (xeflow and the baselines in
/// apps/baselines, which publish their dataset batches in place too) has the same near-zero source cost
/// and the measurement is of moving the data, not of generating it.
///
/// Preconditions of in place: the source is its output topic's only publisher (another publisher would
/// write into heap frames this source thinks it holds; a verify sink downstream would then report corrupt
/// frames), and frame_index is a heap frame index stable for the run. A frame without an index
/// (frame_index == ~0u: a replay, a test) is always written.
///
/// Replay: the source is its own frame_reference (reference_chain uses it directly), so verify sinks
/// replay frame o without touching the in-place state or the counters, and learn its period P
/// (verify_sink's checksum mode caches one expected checksum per dataset frame).
///
/// Thread-safety: produce() and expected() are safe from any number of threads at once after on_start;
/// a heap frame is held by one publishing thread at a time (the topic protocol orders the hand-over), and
/// its state is kept in atomics so that ThreadSanitizer sees no race either way.
class dataset_source final : public generated_source, public frame_reference {
 public:
  using params = dataset_stream_params;

  static void describe(operator_schema<params>& s) {
    s.describe(
        "benchmark source: frame o holds sequence_source's frame o % dataset_frames (same seed), "
        "published in place (a topic frame that already holds that content is not written again), so the "
        "source costs almost no CPU per frame");
    s.bytes(&params::total_bytes, "total_bytes",
            "stream length in bytes; a multiple of the element size; the last frame may be short (a prefix "
            "of its dataset frame)",
            params{}.total_bytes);
    s.param(&params::seed, "seed", "value of the stream's first element (as sequence_source's seed)",
            params{}.seed);
    s.param(&params::dataset_frames, "dataset_frames",
            "P: distinct frames the stream cycles through; 0 = the output topic's capacity, with which every "
            "topic frame keeps its content and is published in place",
            params{}.dataset_frames, 0);
  }

  explicit dataset_source(const params& p);

  /// As generated_source::on_start, and resolves P (run_error naming the operator when dataset_frames is
  /// 0 and the output topic has no capacity).
  void on_start(const operator_setup& setup) override;
  /// Publishes frame `offset` into out (in place when out.frame_index already holds its content).
  bool produce(std::uint64_t offset, frame_out& out) override;
  /// {frames_filled, frames_in_place}: publishes that wrote the frame, and those that did not need to.
  /// Replays through expected() are not counted.
  operator_counters counters() const override;

  /// The replay: always writes frame `offset` into out; no side effects.
  bool expected(std::uint64_t offset, frame_out& out) const override;
  /// P: a full frame at o equals the full frame at o % P.
  std::uint64_t period() const override { return period_; }
  std::optional<std::uint64_t> frame_count() const override { return geometry().frame_count(); }

 private:
  /// What one heap frame holds. Written only by the thread publishing into that frame.
  struct held_frame {
    static constexpr std::uint64_t nothing = ~std::uint64_t{0};
    std::atomic<std::uint64_t> dataset_frame{nothing};
    std::atomic<std::uint64_t> bytes{0};  ///< valid bytes of dataset_frame in the heap frame
  };
  struct alignas(cache_line_bytes) publish_counts {
    // Written by the owning thread only, read by counters().
    std::atomic<std::uint64_t> filled{0};
    std::atomic<std::uint64_t> in_place{0};
  };

  std::int64_t dataset_frames_param_;
  std::uint64_t period_ = 1;
  std::uint64_t held_count_ = 0;
  std::unique_ptr<held_frame[]> held_;  ///< [held_count_], indexed by frame_out::frame_index
  thread_slots<publish_counts> counts_;
};

}  // namespace xf
