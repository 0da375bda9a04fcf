// The executor of a topology's kernel operators: the device's persistent kernel or the host's blocks,
// chosen in one place (make_kernel_executor). Both drive the same round (framework/kernel/round_steps.hpp)
// over the run's topics; the rest of the runtime sees only this interface.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "framework/files/cache_memory.hpp"
#include "framework/runtime/executor.hpp"
#include "framework/runtime/run_context.hpp"
#include "framework/runtime/run_stats.hpp"
#include "topics/topic.hpp"
#include "topics/topic_memory.hpp"

namespace xf {

class kernel_executor {
 public:
  virtual ~kernel_executor() = default;
  /// The memory the run's topics live in, and what the executor adds to each topic's configuration
  /// (which side publishes and subscribes, the copy engines).
  virtual std::unique_ptr<topic_memory> topic_memory_for_run() = 0;
  virtual void configure_topic(std::size_t /*topic*/, topic_config& /*config*/) const {}
  /// Where the file cache's pages live (null: host memory).
  virtual std::unique_ptr<cache_memory> cache_memory_for_run() { return nullptr; }
  /// Starts the kernel operators: a launch on the device, the blocks' threads on the host (appended to
  /// `threads`, which the caller joins). Before any CPU worker runs.
  virtual void start(std::vector<std::thread>& threads) = 0;
  /// Watches the run on the calling thread until the kernel operators end or the run fails (the device's
  /// watchdog and partition tuner); the host executor's blocks watch themselves.
  virtual void watch() {}
  /// A GPU sink's accumulator as the kernel left it, into `sink`'s (the device copies back what its
  /// result uses; the host executor folded into it directly).
  virtual void collect_accumulator(std::uint32_t /*kernel_op*/, host_kernel_op& /*sink*/) {}
  /// Per kernel operator, frames and bytes the round counted (kernel_op order).
  virtual std::vector<kernel_op_counters> op_counters() = 0;
  /// Adds what only this executor knows to the stats (round breakdown, partition, copy engines, faults).
  virtual void collect(run_stats& stats) = 0;
  /// The file readers' fetch counters of every block.
  virtual fetch_counters fetch_totals() = 0;
  /// While the run goes, from any thread (after start): per kernel operator the frames and bytes the
  /// round counted so far; empty where they are known only at the end (the device counts in its memory).
  virtual std::vector<kernel_op_counters> live_op_counters() { return {}; }
  /// While the run goes, from any thread: the file readers' fetch counters so far; nullopt where they are
  /// known only at the end.
  virtual std::optional<fetch_counters> live_fetch_totals() { return std::nullopt; }
  /// While the GPU kernel runs, from any thread: how long since the stalest of its running blocks last
  /// showed a heartbeat (as the watchdog sees it); nullopt without a kernel running on the GPU.
  virtual std::optional<std::chrono::nanoseconds> heartbeat_age() const { return std::nullopt; }
  /// A hung or faulted GPU kernel that still owns the topics (see run_stats::device_wedged).
  virtual bool wedged() const { return false; }
};

/// The executor the plan chose: the host's blocks, or the device's kernel (options.kernel).
std::unique_ptr<kernel_executor> make_kernel_executor(run_context& run, const run_options& options);
/// The host executor's blocks.
std::unique_ptr<kernel_executor> make_host_kernel_executor(run_context& run);
/// The device's kernel; in a build without CUDA, throws run_error saying so.
std::unique_ptr<kernel_executor> make_device_kernel_executor(run_context& run, const run_options& options);

}  // namespace xf
