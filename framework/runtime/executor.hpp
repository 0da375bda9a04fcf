// Runs a planned topology: CPU operators on their own threads, and the GPU operators either inside the one
// virtualised persistent kernel on the GPU (plan.executor == device: topics in managed memory with the
// runtime's coherence policies) or on the host executor — CPU threads that drive the same round as the
// kernel (framework/kernel/round_steps.hpp) — over the same topic protocol. The host executor is the
// fallback on machines without a GPU, and what `--host` selects.
#pragma once

#include <chrono>
#include <functional>

#include "framework/plan/plan.hpp"
#include "framework/runtime/run_control.hpp"
#include "framework/runtime/run_sample.hpp"
#include "framework/runtime/run_stats.hpp"

namespace xf {

class kernel_program;
class frame_ledger;
class topic_carrier;
struct checkpoint_options;

/// Live totals for a progress line, sampled while the run goes on.
struct run_progress {
  double elapsed_seconds = 0;
  std::uint64_t sink_frames = 0;  ///< frames consumed by sink operators
  std::uint64_t sink_bytes = 0;
};

struct run_options {
  std::function<void(const run_progress&)> on_progress;  ///< called from a monitor thread; may be empty
  std::chrono::milliseconds progress_interval{500};
  /// Non-zero: the sinks' totals are also recorded at this interval into run_stats::timeline (throughput
  /// over time, e.g. around a partition switch).
  std::chrono::milliseconds timeline_interval{0};
  /// Live metrics: called from the monitor thread with the run's live counters (run_sample.hpp) once every
  /// operator has started, then every sample_interval, and once more after the run's threads stopped;
  /// may be empty.
  std::function<void(const run_sample&)> on_sample;
  std::chrono::milliseconds sample_interval{250};
  /// The launcher's fused GPU kernel; required when plan.executor is device.
  const kernel_program* kernel = nullptr;
  /// Partition auto / auto-online on the device: drain the run (as an interrupt does) once the first
  /// tuning has its partition in place — xeflow-tune wants the tuning, not the stream.
  bool stop_after_tuning = false;
  /// A trial run (xeflow-tune's): the outputs its sinks did not commit are removed at its end rather than
  /// left under their temporary names for the user to find (an interrupted run keeps them, and says so).
  bool discard_outputs = false;
  /// Non-null: every CPU subscriber records each frame it receives here (frame_ledger.hpp).
  frame_ledger* ledger = nullptr;
  /// A ranked run: what carries the plan's bridged topics (topic_carrier.hpp); required when the plan
  /// has bridges.
  topic_carrier* carrier = nullptr;
  /// A ranked run: the whole topology planned as one process, whose chains its verify sinks replay (a
  /// source on another rank is replayed here). Null: the plan's own chains.
  const plan* replay = nullptr;
  /// Non-null: the run commits its sinks' durable progress to a checkpoint file (checkpoint.hpp) every
  /// interval and once more at its end (marked complete when every stream completed). The plan must pass
  /// checkpoint_refusal.
  const checkpoint_options* checkpoint = nullptr;
  /// A resumed run: each topic's first offset (by plan topic; resume_offsets), and every sink told so
  /// (operator_setup::resume_offset). Empty: every stream starts at 0.
  std::vector<std::uint64_t> first_offsets;
  bool resumed = false;
};

/// Runs `p` (made from `spec`, which must outlive the call) to the end of every stream, an interrupt
/// (control.request_drain), or the first failure. Every thread is joined before it returns. Never throws
/// for run-time faults: they are in the returned stats (status "failed", error naming the operator,
/// topic and offset) and in control.failure(). When stats.device_wedged is set (a GPU kernel that hung
/// or faulted), the GPU context cannot be torn down: the caller should end the process.
run_stats run_topology(const plan& p, const topology_spec& spec, run_control& control,
                       const run_options& options = {});

}  // namespace xf
