// The live metrics' sampler: a running topology's live counters and offset indexes, read into a
// run_sample (run_sample.hpp) by the run's monitor thread.
#pragma once

#include "framework/runtime/run_context.hpp"
#include "framework/runtime/run_sample.hpp"

namespace xf {

class kernel_executor;
class topic_carrier;

/// Samples `run` now, from any thread once its operators have started (relaxed loads only: no lock on any
/// frame's path). `executor` and `carrier` may be null; both must outlive the call.
run_sample sample_run(run_context& run, kernel_executor* executor, const topic_carrier* carrier,
                      double elapsed_seconds);

}  // namespace xf
