// The CPU operators' workers: each of an operator's threads loops subscribe → hook → publish over the
// topic protocol (topics/topic_driver.hpp: blocking with backoff), counting into the run's counters.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "framework/runtime/run_context.hpp"

namespace xf {

/// Starts `workers` threads for every CPU operator of the plan (sources, maps and sinks), each guarded:
/// a failure fails the run. The threads are appended to `threads`; the caller joins them.
void start_cpu_workers(run_context& run, std::vector<std::thread>& threads);

/// Appends a thread running `body` to `threads`; when the system cannot create it, a run_error at `site`
/// naming `which` thread and its setting ("worker thread 3 of 8 (its threads: 8)") and the system's reason.
void start_run_thread(std::vector<std::thread>& threads, const fault_site& site, const std::string& which,
                      std::function<void()> body);

}  // namespace xf
