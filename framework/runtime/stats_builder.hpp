// The run's stats, built once every worker has stopped: per operator and topic from the CPU workers'
// counters and the kernel executor's round counters, the stream window, the file cache, and what only the
// executor knows (its collect()).
#pragma once

#include <string>
#include <vector>

#include "framework/runtime/executor.hpp"
#include "framework/runtime/kernel_executor.hpp"
#include "framework/runtime/run_context.hpp"
#include "framework/runtime/run_stats.hpp"

namespace xf {

/// `sink_counters`: the GPU sinks' finish(), by operator index (empty when they were not finished);
/// `timeline`: the monitor's samples; `wall_seconds`: the run's time from its start.
run_stats build_stats(run_context& run, kernel_executor* executor,
                      const std::vector<operator_counters>& sink_counters,
                      const std::vector<run_progress>& timeline, double wall_seconds);

}  // namespace xf
