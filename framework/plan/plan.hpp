// The plan: a validated spec resolved against the registry and the machine — which executor runs the GPU
// operators, how many workers each operator has, which subscriber group each subscription is, and how a
// block's warps are split. Pure data, printable before anything runs (Taskflow's habit: the graph is data).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <typeindex>
#include <vector>

#include "framework/model/registry.hpp"
#include "framework/model/topology_spec.hpp"

namespace xf {

enum class resolved_executor : std::uint8_t { host, device };

struct planned_topic {
  const topic_spec* spec = nullptr;
  std::vector<std::size_t> publishers;   ///< operator indices
  std::vector<std::size_t> subscribers;  ///< operator indices; subscriber i is group i
  std::uint32_t publisher_workers = 0;   ///< threads/blocks that publish (each closes once)
  /// Device executor: the copy engines move this topic's frames across PCIe (transfer_mode::dma, or auto
  /// with large frames): it crosses between CPU and GPU operators and the kernel works on a replica of its
  /// frames in device memory (framework/gpu/copy_bridge.hpp).
  bool dma = false;
  /// With `dma`: true when its publishers are CPU operators (frames go to the device), false when they
  /// are GPU operators (frames go to the host).
  bool dma_to_device = false;
  /// A ranked run: the rank whose operators publish this topic, when it is another one. This rank's copy
  /// of the topic is then published by a bridge's receiving end (its one publisher worker), at the
  /// writer's offsets.
  std::optional<std::uint32_t> bridge_from;
  /// A ranked run, on the publishers' rank: the ranks whose operators subscribe too. Each gets a bridge
  /// whose sending end is one more subscriber group, numbered after the operators' groups in this order.
  std::vector<std::uint32_t> bridge_to;

  /// Subscriber groups: the operators' and the bridges'.
  std::uint32_t groups() const noexcept {
    return static_cast<std::uint32_t>(subscribers.size() + bridge_to.size());
  }
  /// The group of the bridge to bridge_to[k].
  std::uint32_t bridge_group(std::size_t k) const noexcept {
    return static_cast<std::uint32_t>(subscribers.size() + k);
  }
};

/// planned_operator::objects of an optional slot the topology left unbound.
inline constexpr std::size_t no_object = ~std::size_t{0};

/// A shared object of the topology: who writes it and who reads it.
struct planned_object {
  const shared_object_spec* spec = nullptr;
  std::optional<std::size_t> writer;  ///< operator index
  std::vector<std::size_t> readers;   ///< operator indices
};

struct planned_operator {
  const operator_spec* spec = nullptr;
  const operator_entry* entry = nullptr;
  std::vector<std::size_t> inputs;          ///< topic indices
  std::vector<std::size_t> outputs;         ///< topic indices
  std::vector<std::uint32_t> input_groups;  ///< this operator's group on each input topic
  bool in_kernel = false;                   ///< a GPU operator run by the (virtualised) kernel's blocks
  std::uint32_t workers = 0;                ///< CPU threads, or kernel blocks for in_kernel operators
  std::uint32_t warps = 0;                  ///< in_kernel: warps per block this operator gets each round
  std::uint32_t kernel_index = 0;           ///< in_kernel: position among the kernel's operators
  output_fraction output;                   ///< GPU maps: the share of an input frame they output
  /// in_kernel: work items per frame (on the device, blocks that share one large frame; on either
  /// executor, the shares of an operator that shares frames; see kernel_op).
  std::uint32_t parts = 1;
  /// in_kernel, parts > 1 and not sharing frames: bytes of each part (the last may be shorter).
  std::uint64_t part_bytes = 0;
  /// in_kernel on the device: stage the input (the frame, or the block's part of it) into the block's
  /// scratch before computing (it is read over PCIe).
  bool stage = false;
  /// in_kernel on the device: compute into the block's scratch, then copy the result out to the output
  /// topic with wide stores, all in flight at once (it is written over PCIe).
  bool stage_output = false;
  /// in_kernel on the device: work items each block holds and runs per round, each on warps/items warps
  /// (small frames several per round, so they share its polls, barrier and fence; see kernel_op).
  std::uint32_t items = 1;
  /// The shared objects bound to its class's slots, in slot order (indices into plan::objects; no_object for
  /// an optional slot left unbound).
  std::vector<std::size_t> objects;
};

struct plan {
  /// A ranked run: the rank this plan is the part of, and how many ranks run (the operators of the other
  /// ranks are not in it; its topics are those its operators touch). One process: rank 0 of 1, every
  /// operator whatever its `rank:`.
  std::uint32_t rank = 0;
  std::uint32_t ranks = 1;
  /// The GPU ordinal the device executor runs on (this rank's GPU operators' `device:`, or the rank's
  /// position on its node modulo the node's GPUs).
  std::uint32_t device = 0;
  resolved_executor executor = resolved_executor::host;
  std::string executor_reason;  ///< why this executor (for the log)
  std::uint32_t blocks = 0;
  std::uint32_t warps_per_block = 0;
  std::uint32_t watchdog_ms = 0;
  std::uint32_t index_rest = 0;                            ///< runtime.index_rest
  bool spread_warps = false;                               ///< runtime.spread_warps
  partition_policy partition = partition_policy::uniform;  ///< auto ones start from the uniform split
  std::vector<planned_topic> topics;
  std::vector<planned_operator> operators;
  std::vector<planned_object> objects;
  std::vector<std::size_t> kernel_operators;  ///< in_kernel operators, in kernel order
  std::vector<std::size_t> start_order;       ///< operators in topological order (sources first)

  /// A human-readable description (executor, blocks × warps, operators with workers and partition).
  std::string describe() const;
};

/// Frames larger than this are split into parts that several blocks work on at once (measured on the
/// H100: one block per 1–4 MiB frame left the link under-used; 128–512 KiB chunks reached its ceiling).
inline constexpr std::uint64_t kernel_part_bytes = 256 * 1024;
/// At most this many items share one frame of an operator that shares whole frames (operator_info::
/// shares_frames): beyond it a share holds too little of a frame to pay for its subscribe and release.
inline constexpr std::uint32_t max_frame_shares = 16;
/// Bytes a block aims to move per operator and round: frames smaller than this are taken several per
/// round (at most one per warp, and no more in all blocks than the input topic has in flight).
inline constexpr std::uint64_t kernel_round_bytes = 64 * 1024;
/// `transfer: auto` moves a topic's frames with the copy engines (transfer_mode::dma) when they are at
/// least dma_auto_large_frame_bytes, or at least dma_auto_min_frame_bytes in a ring of at least
/// dma_auto_min_capacity in a topology without CPU relays (`cpu_relay`: a CPU operator between GPU
/// operators; plan.cpp has the measurements); otherwise by the kernel's own loads and stores over PCIe
/// (mapped). Measured on the H100 (C(G)1C scale, 4 GiB, 2026-11-23, capacity 64 … 4096), with the bridge
/// that copies frames only (the kernel reads and writes the host index itself), dma / mapped GB/s on
/// one instance: 64 KiB 36.0 / 34.4, 256 KiB 37.8 / 35.8, 1 MiB 37.2 / 36.3, 4 MiB 39.1 / 34.8; at 16 KiB
/// dma is slower (37.0 / 38.2, and n = 4 stages 31.7 / 35.6): runs of small frames pay the copies' fixed
/// costs. A ring of a few frames is a latency setting, where a copy and its publish cost more than the
/// kernel's stores: unloaded (capacity 2) p50 at 64 KiB 100 µs dma / 34 µs mapped.
inline constexpr std::uint64_t dma_auto_min_frame_bytes = 64 * 1024;
inline constexpr std::uint32_t dma_auto_min_capacity = 16;
inline constexpr std::uint64_t dma_auto_large_frame_bytes = 1024 * 1024;
constexpr bool transfer_auto_uses_dma(std::uint64_t frame_bytes, std::uint32_t capacity, bool cpu_relay) {
  return frame_bytes >= dma_auto_large_frame_bytes ||
         (!cpu_relay && frame_bytes >= dma_auto_min_frame_bytes && capacity >= dma_auto_min_capacity);
}
/// Default kernel blocks per SM when runtime.blocks is 0 (fewer when occupancy allows fewer). Measured on
/// the H100 (pingpong, capacity 1024, 8 warps per block): 2 per SM streamed 35.1 GB/s at 16 KiB frames
/// and 22.9 at 4 KiB, 4 per SM 20.9 and 7.1 — more blocks mostly add polling over PCIe.
inline constexpr std::uint32_t default_blocks_per_sm = 2;

/// What the machine and the launcher's GPU kernel allow (filled by the launcher; all empty without one).
struct device_capabilities {
  bool usable = false;        ///< from probe_device()
  std::uint32_t ordinal = 0;  ///< the GPU probed
  std::string reason;         ///< why not usable
  std::uint32_t sm_count = 0;
  /// Kernels that run on this GPU at once, this one included: ranks of one node sharing the GPU under MPS.
  /// Every block of a persistent kernel must stay resident, so each plans its share of the resident
  /// blocks (without MPS the kernels take turns, each with the whole GPU: 1).
  std::uint32_t sharers = 1;
  /// Blocks of the kernel with `threads` threads that fit on one SM at once; empty: no kernel.
  std::function<int(int threads)> blocks_per_sm;
  /// Whether a GPU operator type is compiled into the launcher's kernel; empty: no kernel.
  std::function<bool(std::type_index)> compiled_in;
};

/// A ranked run's part to plan: this process's rank among `ranks`.
struct rank_part {
  std::uint32_t rank = 0;
  std::uint32_t ranks = 1;
};

struct plan_options {
  bool force_host = false;  ///< --host
  /// Set: plan only this rank's operators (a ranked run; every rank plans its own part of the same spec).
  /// Unset: one process runs every operator.
  std::optional<rank_part> part;
  device_capabilities device;
  std::uint32_t host_cores = 0;  ///< 0: std::thread::hardware_concurrency()
};

/// A topic carried from the rank that publishes it to one that subscribes to it too.
struct bridge_route {
  std::size_t topic = 0;  ///< index into spec.topics
  std::uint32_t from = 0, to = 0;
};
/// Every bridge a ranked run of `spec` (validated) has, the same on every rank: topics in declaration
/// order, each to its subscribers' ranks in increasing order. A rank's plan has its part of them
/// (planned_topic::bridge_from, bridge_to).
std::vector<bridge_route> bridge_routes(const topology_spec& spec);

/// Resolves a validated spec. Throws config_error for what only the machine can refuse (executor: device
/// without a usable GPU, more kernel operators than warps per block).
plan make_plan(const topology_spec& spec, const operator_registry& registry, const plan_options& options);

}  // namespace xf
