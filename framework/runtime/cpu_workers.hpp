// The CPU operators' workers: each of an operator's threads loops subscribe → hook → publish over the
// topic protocol (topics/topic_driver.hpp: blocking with backoff), counting into the run's counters.
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

#include "framework/runtime/run_context.hpp"

namespace xf {

/// Starts `workers` threads for every CPU operator of the plan (sources, maps and sinks), each guarded:
/// a failure fails the run. The threads are appended to `threads`; the caller joins them.
void start_cpu_workers(run_context& run, std::vector<std::thread>& threads);

}  // namespace xf
