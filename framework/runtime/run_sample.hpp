// What a running topology's monitor thread samples for live metrics (run_options::on_sample): the live
// counters the runtime keeps anyway, read with relaxed loads a few times a second, and a look at each
// topic's offset index. Counters only grow from one sample to the next; what the runtime knows only at
// the end of a run (the device kernel's counters and round phases) is in run_stats instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/latency_histogram.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/runtime/topic_carrier.hpp"

namespace xf {

struct run_sample {
  double elapsed_seconds = 0;          ///< since the run started
  bool draining = false;               ///< an interrupt: the sources stopped, the streams drain
  std::optional<std::string> failure;  ///< the run failed (its threads are stopping): why

  struct operator_sample {
    std::string name;
    std::string role;     ///< "source", "map" or "sink"
    bool kernel = false;  ///< run by the kernel's blocks
    /// Kernel operators on the device executor: frames and bytes are known only at the end of the run
    /// (the round counts them in device memory); the times are the host's only.
    bool frames_live = true;
    std::uint64_t frames_in = 0, bytes_in = 0, frames_out = 0, bytes_out = 0;
    std::uint64_t busy_ns = 0, input_wait_ns = 0, blocked_ns = 0;
    /// Sinks on CPU threads: latencies from the source's publish recorded so far, per latency_histogram
    /// bucket (empty for other operators).
    std::vector<std::uint64_t> latency;
  };
  std::vector<operator_sample> operators;

  struct group_sample {
    std::string name;  ///< the subscribing operator, or "bridge to rank N"
    /// Offsets published but not yet released by this group: published − released marks
    /// (topic::published_mark, released_mark), at most the topic's capacity.
    std::uint64_t lag = 0;
  };
  struct topic_sample {
    std::string name;
    std::uint32_t capacity = 0;
    /// Frames and bytes published; on the device executor, those the kernel publishes are added at the end.
    std::uint64_t frames = 0, bytes = 0, blocked_ns = 0;
    /// False where the offset index lives in device memory (a topic between GPU operators on the device
    /// executor), which the host does not poll: no occupancy nor lag then.
    bool index_sampled = false;
    std::uint64_t occupancy = 0;  ///< offsets published and not yet released by every group
    std::vector<group_sample> groups;
  };
  std::vector<topic_sample> topics;

  /// The kernel's file readers' fetch counters so far, where a file cache runs and they are live (the
  /// host executor's blocks; the device's are read at the end).
  std::optional<fetch_counters> file_cache;
  /// A ranked run: what each bridge of this rank moved so far.
  std::vector<bridge_stats> bridges;
  /// The GPU kernel's heartbeat on the device executor while it runs: how long since the stalest of its
  /// running blocks last showed one, and the age at which it counts as stale (half the watchdog's period,
  /// runtime.watchdog_ms: the watchdog ends the run at the full period).
  struct heartbeat {
    double age_seconds = 0;
    double stale_seconds = 0;
  };
  std::optional<heartbeat> kernel_heartbeat;
};

}  // namespace xf
