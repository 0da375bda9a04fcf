// The auto partitions' controller: samples each GPU operator's round time over a schedule
// of partitions while the kernel runs, fits the cost models, switches to the partition they favour, and
// under auto-online watches the spread of the round times and tunes again when it moves. Pure host logic
// over cumulative cost readings: the executor feeds it what device_run reads, the tests feed it a model.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "framework/model/topology_spec.hpp"
#include "framework/plan/cost_model.hpp"
#include "framework/plan/warp_partition.hpp"

namespace xf {

/// An operator's cumulative measured cost (the kernel's op_cost, without CUDA).
struct cost_total {
  std::uint64_t cycles = 0;
  std::uint64_t items = 0;
};

/// One measured window at one partition.
struct partition_window {
  std::vector<std::uint32_t> warps;
  std::vector<double> cost;          ///< mean cycles per item per operator (0 where it ran no item)
  std::vector<std::uint64_t> items;  ///< items measured per operator
  double start_ms = 0;
  double duration_ms = 0;
  /// max_i cost_i over the operators that ran items: the round the partition would run.
  double measured_round() const;
};

/// One tuning: the sampled windows, the fits, the choice and how it measured. Two stages: the paper's
/// (a schedule over each operator's whole range, one quadratic per operator, eq. (3)), then a local one
/// around that choice — a quadratic fitted over the whole range misses costs that fall like 1/N (measured
/// in the tests' simulation: rounds 6–58% slower than the best split), while over a few warps around the
/// choice it fits them closely. Last, if a sampled partition measured clearly faster than the choice, it
/// is taken instead.
struct tuning_record {
  double start_ms = 0;  ///< when sampling began (the tuner's clock: ms since the run began, as the timeline)
  std::vector<partition_window> samples;  ///< the coarse schedule's windows, then the local ones
  std::size_t coarse_windows = 0;         ///< how many of `samples` are the coarse schedule's
  std::vector<cost_fit> coarse_fits;      ///< per operator, over the coarse windows
  partition_choice coarse_choice;         ///< eq. (3) and warp moves over the coarse models
  std::vector<cost_fit> fits;             ///< per operator, over the windows in the last local range
  partition_choice choice;                ///< within the last local range, over its models
  /// Local ranges sampled: when a choice lands on its range's edge, the range moves to it (a trust
  /// region), at most tuner_settings::local_rounds times.
  std::uint32_t local_rounds = 0;
  double fit_us = 0;                       ///< time to fit the models and choose, both stages (host)
  std::optional<partition_window> chosen;  ///< the chosen partition's first window
  /// Set when a sampled window measured a round clearly shorter than `chosen`: that partition is used.
  std::optional<partition_window> fallback;
  /// The run's starting partition (the uniform split unless the plan gave another), measured last when
  /// the tuning's candidate (the choice, or the fallback) differs from it. The candidate must measure a
  /// round shorter by more than the fallback margin or the starting partition is kept: the models are
  /// continuous in the warps, the kernel is not (a frame's vectors split evenly among 16 warps, raggedly
  /// among 11 or 18), and a stream bound by PCIe makes every window noisy. Measured on the H100: an auto
  /// choice of 11:21 streamed 15% below 16:16 where the link set the pace.
  std::optional<partition_window> initial;
  bool kept_initial = false;       ///< the candidate did not beat `initial`: it is the result
  double end_ms = 0;               ///< when the final partition was in place and measured
  std::uint64_t sample_items = 0;  ///< items measured over both schedules (the paper's samples)
  std::string reason;              ///< why this tuning ran ("start", "the spread … moved …")
  /// The partition the tuning ended with.
  const std::vector<std::uint32_t>& result() const {
    return kept_initial ? initial->warps : fallback ? fallback->warps : chosen->warps;
  }
  /// The candidate the starting partition was measured against (the fallback, else the choice).
  const partition_window& candidate() const { return fallback ? *fallback : *chosen; }
};

struct tuner_settings {
  partition_policy policy = partition_policy::auto_once;
  tuning_spec tuning;
  std::uint32_t block_warps = 0;
  std::vector<std::uint32_t> min_warps;  ///< per operator (its work items per round)
  std::vector<std::uint32_t> initial;    ///< the partition the kernel starts with
  /// A sampled partition's window ends once it measured its share of the samples and lasted this long …
  double min_window_ms = 1;
  /// … or after this long whatever it measured (an operator starved of input measures nothing).
  double max_window_ms = 200;
  /// auto-online: the window over which the spread is measured while watching.
  double watch_window_ms = 10;
  /// Warp counts sampled per operator (evenly over what it can get).
  std::uint32_t levels = 8;
  /// The local stage samples each operator this many warps either side of the coarse choice (0: a tenth
  /// of the block's warps, at least 2).
  std::uint32_t local_radius = 0;
  /// Most local ranges per tuning.
  std::uint32_t local_rounds = 4;
  /// A sampled partition replaces the choice when its measured round is shorter by more than this.
  double fallback_margin = 0.03;
};

class partition_tuner {
 public:
  /// Throws std::invalid_argument when the minimums do not fit the block or the policy is not tuned.
  explicit partition_tuner(tuner_settings settings);

  /// One step at time `now_ms` (any monotonic clock in milliseconds) with the operators' cumulative costs
  /// and whether every block adopted the last requested partition. Returns the partition to request now,
  /// if any; the caller requests it before the next step (and the next step's `adopted` refers to it).
  std::optional<std::vector<std::uint32_t>> step(double now_ms, const std::vector<cost_total>& totals,
                                                 bool adopted);

  bool tuning() const noexcept {
    return state_ == state::sampling || state_ == state::refining || state_ == state::measuring ||
           state_ == state::checking;
  }
  /// auto: tuned once and done; auto-online keeps watching (never done).
  bool done() const noexcept { return state_ == state::done; }
  const std::vector<tuning_record>& history() const noexcept { return history_; }
  const std::vector<std::uint32_t>& partition() const noexcept { return partition_; }
  /// The sampling schedule (partitions in order).
  const std::vector<std::vector<std::uint32_t>>& schedule() const noexcept { return schedule_; }
  /// The coarse sampling schedule (exposed for tests and xeflow-tune's listing).
  static std::vector<std::vector<std::uint32_t>> make_schedule(const tuner_settings& s);
  /// The local schedule around `center`: each operator ±radius warps, the others absorbing the change.
  static std::vector<std::vector<std::uint32_t>> make_local_schedule(
      const tuner_settings& s, const std::vector<std::uint32_t>& center);

 private:
  enum class state { start, sampling, refining, measuring, checking, watching, done };
  struct window_start {
    double ms = 0;
    std::vector<cost_total> totals;
    bool open = false;
  };

  std::optional<std::vector<std::uint32_t>> begin_tuning(double now_ms, std::string reason);
  std::optional<std::vector<std::uint32_t>> request(std::vector<std::uint32_t> warps);
  partition_window close_window(double now_ms, const std::vector<cost_total>& totals) const;
  std::uint64_t window_items(const std::vector<cost_total>& totals) const;
  /// Fits one model per operator over `windows` and chooses; bounds: ±radius around `center` if given.
  void fit_and_choose(std::span<const partition_window> windows, std::vector<cost_fit>& fits,
                      partition_choice& choice, const std::vector<std::uint32_t>* center) const;
  std::uint32_t radius() const noexcept;
  double spread(const partition_window& w) const;
  /// Ends a tuning on its result (auto-online goes on watching); `measured` is the result's window.
  void finish_tuning(double now_ms, const std::vector<cost_total>& totals, const partition_window& measured);

  tuner_settings s_;
  std::vector<std::vector<std::uint32_t>> schedule_;        // coarse
  std::vector<std::vector<std::uint32_t>> local_schedule_;  // of the tuning in progress
  std::vector<std::uint32_t> local_center_;
  /// Starts a local range around `center` (its partitions not measured yet in this tuning); false when
  /// all were measured already.
  bool start_local(const std::vector<std::uint32_t>& center);
  /// Fits the windows inside the local range; true when the choice lies on the range's edge.
  bool refine();
  std::vector<std::uint32_t> partition_;
  state state_ = state::start;
  std::size_t next_sample_ = 0;
  window_start window_;
  std::vector<tuning_record> history_;
  double tuned_spread_ = 0;
  partition_window candidate_window_;  ///< checking: the candidate's window, to compare with the start's
  std::optional<double> drift_since_ms_;
};

}  // namespace xf
