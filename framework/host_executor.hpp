// The host executor: runs a planned topology on CPU threads. CPU operators get their own threads; GPU
// operators run on host "blocks" — threads that play the virtualised kernel's role, round by round, with a
// work-vector of warps per operator and virtual thread ids — over the same topic protocol the GPU
// executor uses. It is the fallback on machines without a GPU, and what `--host` selects.
#pragma once

#include <chrono>
#include <functional>

#include "framework/plan.hpp"
#include "framework/run_control.hpp"
#include "framework/run_stats.hpp"

namespace xf {

/// Live totals for a progress line, sampled while the run goes on.
struct run_progress {
  double elapsed_seconds = 0;
  std::uint64_t sink_frames = 0;  ///< frames consumed by sink operators
  std::uint64_t sink_bytes = 0;
};

struct host_run_options {
  std::function<void(const run_progress&)> on_progress;  ///< called from a monitor thread; may be empty
  std::chrono::milliseconds progress_interval{500};
};

/// Runs `p` (made from `spec`, which must outlive the call) to the end of every stream, an interrupt
/// (control.request_drain), or the first failure. Every thread is joined before it returns. Never throws
/// for run-time faults: they are in the returned stats (status "failed", error naming the operator,
/// topic and offset) and in control.failure().
run_stats run_on_host(const plan& p, const topology_spec& spec, run_control& control,
                      const host_run_options& options = {});

}  // namespace xf
