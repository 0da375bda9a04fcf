// The host side of one run of the virtualised kernel: builds the catalog (topic views, operator table,
// parameter arena) in managed memory, allocates the kernel's control words, launches the kernel once, and
// watches it — completion, a failure an operator reported, a sticky CUDA error, and a heartbeat watchdog
// that catches a block that stopped making progress. Plain C++ over the CUDA runtime API.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "framework/core/cuda_buffer.hpp"
#include "framework/core/errors.hpp"
#include "framework/files/file_cache.hpp"
#include "framework/gpu/copy_bridge.hpp"
#include "framework/kernel/kernel_program.hpp"
#include "framework/kernel/kernel_table.hpp"
#include "framework/model/host_kernel_op.hpp"
#include "framework/plan/plan.hpp"
#include "topics/managed_topic_memory.hpp"
#include "topics/topic.hpp"

namespace xf {

class device_run {
 public:
  /// `topics` (indexed like plan.topics) and `memory` must outlive this object; `params[k]` is the
  /// params struct of the k-th kernel operator as bytes, `accumulators[k]` the contents its accumulator
  /// starts from (a GPU sink's, prepared on the host; empty for maps). Throws cuda_error or run_error (an
  /// operator whose class is not compiled into `program`).
  /// `readers` (null without GPU file readers) must outlive this object too. `objects`: the shared
  /// objects' version tables as the kernel reads them (indexed like plan.objects). Runs on GPU p.device,
  /// which it makes the calling thread's current device: call the other members from that thread.
  device_run(const plan& p, std::vector<topic>& topics, const std::vector<std::vector<std::byte>>& params,
             const std::vector<std::span<const std::byte>>& accumulators,
             const std::vector<const host_kernel_op*>& operators, const kernel_program& program,
             managed_topic_memory& memory, const kernel_files* readers = nullptr,
             std::span<const shared::version_table_view> objects = {});
  ~device_run();
  device_run(const device_run&) = delete;
  device_run& operator=(const device_run&) = delete;

  /// Launches the kernel (asynchronous) and starts the copy engines' bridge of the `dma` topics.
  void launch();

  enum class state { running, finished, failed };
  /// Checks, without blocking, whether the run finished (the kernel ended and the bridge carried every
  /// frame across), the kernel reported a failure, hit a CUDA error, or has a block whose heartbeat
  /// stalled for longer than the watchdog, or the bridge failed; on `failed`, `error()` says why.
  state poll();
  const std::optional<run_error>& error() const noexcept { return error_; }
  /// Asks every block to stop at its next round (a failure elsewhere, or an abort).
  void request_stop() noexcept;
  /// An interrupt: file sources claim no more offsets, so the streams end after what they claimed.
  void request_drain() noexcept;
  /// True once the kernel can no longer be waited for or freed around (a sticky CUDA error, or a hung
  /// block): the caller ends the process instead of tearing the device down.
  bool wedged() const noexcept { return wedged_; }
  /// From any thread (live metrics): how long since the stalest running block last showed a heartbeat, as
  /// poll() saw it; nullopt before the first poll and once no block runs.
  std::optional<std::chrono::nanoseconds> heartbeat_age() const noexcept;

  /// The partition control of the auto policies. Asks every block to run `warps` (per kernel operator, in
  /// kernel order; at least each operator's items, at most the block's warps in all) from its next round,
  /// and returns the request's generation. Call it only once read_costs() says the previous request was
  /// adopted. Waits for two small copies on the side stream (the kernel keeps running).
  std::uint32_t request_partition(const std::vector<std::uint32_t>& warps);
  struct cost_reading {
    std::vector<op_cost> ops;  ///< cumulative, per kernel operator
    /// Every block runs the latest requested partition (or has exited): the items counted from now on
    /// all ran under it.
    bool adopted = false;
  };
  /// The operators' measured costs so far, copied on the side stream while the kernel runs (or after).
  cost_reading read_costs();
  /// The partition the blocks were last asked to run (the plan's until the first request).
  const std::vector<std::uint32_t>& partition() const noexcept { return partition_; }
  /// SM clock rate in kHz (cycles per millisecond), to turn the costs' cycles into time.
  std::uint64_t sm_clock_khz() const noexcept { return sm_clock_khz_; }

  /// After `finished`: frames and bytes each kernel operator published, in kernel order.
  std::vector<kernel_op_counters> counters() const;
  /// After `finished`: copies bytes [from, to) of kernel operator k's accumulator (a GPU sink's) into the
  /// same bytes of `host`, whose size must be the accumulator's.
  void copy_accumulator(std::uint32_t k, std::span<std::byte> host, std::uint64_t from,
                        std::uint64_t to) const;
  /// After `finished`: the phase clocks summed over blocks.
  block_timing timing() const;
  /// After `finished`: the file readers' fetch counters summed over blocks (zero without readers).
  fetch_counters fetch_totals() const;
  /// What the copy engines carried, per bridged topic (topic index, direction, counters).
  struct bridged_topic {
    std::size_t topic;
    bool to_device;
    bridge_counters counters;
  };
  std::vector<bridged_topic> bridged() const;

 private:
  std::string describe_blocks(const std::vector<std::uint32_t>& stalled);
  /// --trace: the rings' new rounds onto the timeline (each traced block's track), once the kernel's
  /// clock is calibrated against the host's.
  void drain_trace();
  /// The blocks' lane snapshots, copied on the side stream while the kernel still runs (hung), or why not.
  const lane_snapshot* read_snapshots(std::string& why_not);
  void set_up_readers(kernel_op* ops, std::uint32_t item_count);

  const plan& plan_;
  int device_;  ///< the plan's GPU (CUDA ordinal)
  const kernel_program& program_;
  std::uint32_t blocks_ = 0;
  std::uint32_t threads_ = 0;
  std::chrono::milliseconds watchdog_;

  // Catalog (managed memory, through the topic memory and its catalog policy).
  managed_topic_memory& memory_;
  struct catalog_allocation {
    void* p;
    std::size_t bytes;
  };
  std::vector<catalog_allocation> catalog_;
  kernel_args args_{};

  // Control words and per-block state.
  pinned_buffer<std::uint32_t> stop_word_;  // holds 1: the source of request_stop's copy
  pinned_buffer<kernel_failure> failure_;
  pinned_buffer<block_heartbeat> heartbeats_;
  device_buffer<lane_snapshot> snapshots_;
  pinned_buffer<lane_snapshot> snapshot_copy_;  // the watchdog's copy of snapshots_
  device_buffer<std::uint32_t> device_words_;   // [0] device_abort, [1] fail_claim
  device_buffer<block_timing> timings_;
  device_buffer<kernel_op_counters> counters_;
  device_buffer<partition_control> partition_control_;
  pinned_buffer<partition_control> partition_source_;  // what request_partition copies from
  device_buffer<std::uint32_t> block_generation_;
  pinned_buffer<std::uint32_t> block_generation_copy_;
  device_buffer<op_cost> costs_;
  pinned_buffer<op_cost> costs_copy_;
  std::vector<std::uint32_t> partition_;
  std::uint32_t generation_ = 0;
  std::uint64_t sm_clock_khz_ = 0;
  std::vector<device_buffer<std::uint32_t>> parts_done_;
  std::vector<device_buffer<std::byte>> accumulators_;  // [op_count]: GPU sinks' (empty for maps)
  device_buffer<std::byte> scratch_;
  std::unique_ptr<cuda_stream> stream_;
  std::unique_ptr<cuda_stream> side_stream_;  // stop requests and the watchdog's copies, beside the kernel
  std::unique_ptr<copy_bridge> bridge_;       // the dma topics' frames and publishes across PCIe
  const kernel_files* readers_ = nullptr;
  device_buffer<reader_lane> reader_lanes_;
  device_buffer<std::uint32_t> reader_entries_;
  device_buffer<fetch_counters> fetch_totals_;
  bool drain_requested_ = false;

  bool launched_ = false;
  bool stop_requested_ = false;
  bool kernel_done_ = false;
  bool finished_ = false;
  bool wedged_ = false;
  std::optional<run_error> error_;
  // --trace (trace_rounds_ empty when the run is not traced).
  pinned_buffer<round_record> trace_rounds_;
  pinned_buffer<std::uint64_t> trace_clock_;
  std::vector<std::uint64_t> trace_taken_;   // per traced block: rounds taken from its ring
  std::vector<std::uint32_t> trace_tracks_;  // per traced block: its timeline track
  std::uint32_t trace_phase_names_[4] = {};  // subscribe, schedule, compute, publish
  std::uint32_t trace_overrun_name_ = 0;
  std::uint64_t trace_launch_ns_ = 0;  // host clock just before the launch
  std::int64_t trace_offset_ns_ = 0;   // host clock − kernel clock
  bool trace_calibrated_ = false;
  std::chrono::steady_clock::time_point trace_drained_{};
  std::vector<std::uint64_t> last_beat_;
  std::vector<std::chrono::steady_clock::time_point> beat_seen_;
  /// poll()'s look at the heartbeats for other threads: the steady clock (ns) at which the stalest running
  /// block's heartbeat last moved; 0 when no block runs (or before the first poll).
  std::atomic<std::int64_t> stalest_beat_ns_{0};
};

}  // namespace xf
