// What the virtualised kernel's round reads and writes besides the topics: the operator table, the lanes'
// state, the fault record and the run's control words. Both drivers of the round use it — the device's
// persistent kernel (framework/gpu/, nvcc) and the host executor's blocks (framework/runtime/, g++). Every
// struct is trivially copyable; each field says which side writes it, which reads it, and where it lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "framework/core/element_type.hpp"
#include "framework/core/exec_space.hpp"
#include "framework/files/file_cache_view.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/plan/kernel_limits.hpp"
#include "framework/shared/version_table.hpp"
#include "topics/topic_layout.hpp"
#include "topics/topic_view.hpp"

namespace xf {

/// kernel_op::output of a GPU sink: it publishes nothing; kernel_op::input of a file source.
inline constexpr std::uint32_t no_output_topic = ~0u;
inline constexpr std::uint32_t no_input_topic = ~0u;
/// kernel_op::inject_fail_at when no fault is injected.
inline constexpr std::uint64_t no_injected_fault = ~std::uint64_t{0};
/// kernel_op::objects of an optional slot left unbound (its item_context::objects entry is null).
inline constexpr std::uint32_t no_kernel_object = ~0u;

/// What kind of file reader a kernel operator is.
enum kernel_reader : std::uint32_t {
  reader_none = 0,
  reader_map = 1,     ///< reads files for each input frame (gpu_file_reader)
  reader_source = 2,  ///< streams files into its output topic (gpu_file_source)
};

/// One GPU operator as the kernel sees it. Catalog layer: written by the host before launch, read-only
/// while the kernel runs (a read-mostly replica on the GPU under the read_mostly catalog policy).
struct kernel_op {
  std::uint32_t type;        ///< position of the operator's C++ type in the fused kernel's list
  element_type element;      ///< element type of its input (and output: GPU maps keep it)
  std::uint32_t input;       ///< topic index
  std::uint32_t output;      ///< topic index, or no_output_topic (a GPU sink)
  std::uint32_t group;       ///< its subscriber group on `input`
  std::uint32_t first_warp;  ///< every block runs it on warps [first_warp, first_warp + warps)
  std::uint32_t warps;
  /// Work items each block holds and runs per round (several small frames per round share its fixed
  /// costs: the polls, the barrier, the fence). Item j runs on warps [first_warp + j·item_warps,
  /// first_warp + (j+1)·item_warps); the leader warp's lane first_item + j subscribes and publishes it.
  std::uint32_t items;
  std::uint32_t item_warps;
  std::uint32_t first_item;
  /// A frame is split into `parts` work items (parts > 1 for large frames, so several blocks share one
  /// frame); part p is the frame's bytes [p·part_bytes, (p+1)·part_bytes) — or, with `shares`, the whole
  /// frame, of which the operator does share p (item_context::part).
  std::uint32_t parts;
  std::uint32_t shares;
  std::uint64_t part_bytes;
  /// 1: the block first copies its part of the input frame into its scratch with wide loads, all in
  /// flight at once, so the operator's element loop reads local memory instead of waiting on PCIe.
  std::uint32_t stage;
  /// 1: the operator writes into the block's scratch, and the item's warps then copy the result to the
  /// output topic with wide stores (the operator's own stores are element-sized, each a PCIe write).
  std::uint32_t stage_output;
  /// The output frame is the input's bytes · output_numerator / output_denominator (operator.hpp); such
  /// operators have parts == 1.
  std::uint32_t output_numerator;
  std::uint32_t output_denominator;
  std::uint64_t params_offset;  ///< the operator's params struct in the parameter arena (16-byte aligned)
  std::uint64_t stage_offset;   ///< this operator's staging areas within a block's scratch (one per item)
  std::uint64_t stage_output_offset;  ///< this operator's output staging areas (one per item)
  std::uint64_t stage_stride;         ///< bytes from one item's staging area to the next
  /// Device memory, [input capacity]: parts finished per input slot; the block finishing the last part
  /// publishes the output and releases the input, then resets the counter (before the release, so the
  /// slot's next occupant starts from zero).
  std::uint32_t* parts_done;
  /// Device memory: a GPU sink's accumulator (frame_task::state), zeroed before the launch; null for maps.
  std::byte* state;
  /// File readers: a kernel_reader; its files are the cache's [first_file, first_file + file_count).
  /// Readers run whole frames (parts 1), unstaged, one item a block.
  std::uint32_t reader;
  std::uint32_t first_file;
  std::uint32_t file_count;
  /// File sources: frames in the stream (from the files' sizes at open), and how many offsets a block
  /// claims at once (read in order, so its misses are sequential and its readahead follows them).
  std::uint64_t source_frames;
  std::uint64_t source_run;
  /// The offset whose frame fails as an injected fault (XEFLOW_INJECT gpu_frame:fail@N, fault_injection.hpp),
  /// or no_injected_fault: one compare per finished item.
  std::uint64_t inject_fail_at;
  /// Shared objects: the operator's slots' entries in kernel_args::objects, in slot order.
  std::uint32_t object_count;
  std::uint32_t objects[max_operator_objects];
};
static_assert(std::is_trivially_copyable_v<kernel_op>);

/// Phases of a lane, for the watchdog's per-block dump.
enum lane_phase : std::uint32_t {
  lane_idle = 0,          ///< holds no work item
  lane_wait_input = 1,    ///< holds an item whose input frame is not published yet
  lane_wait_output = 2,   ///< input ready; the output slot is still held by a subscriber group
  lane_done = 3,          ///< its input stream ended
  lane_running = 4,       ///< the operator is running on the item (recorded when a round starts it)
  lane_reading = 5,       ///< a file reader's item: its stages' pages are being fetched and computed over
  lane_wait_version = 6,  ///< input ready; a shared object's writer has not made its version final yet
};

/// The schedule's stage bits of a lane: its operator stages its input / its output through the block's
/// scratch (device only: the host executor's table stages nothing).
constexpr std::uint32_t stage_input_bit = 1;
constexpr std::uint32_t stage_output_bit = 2;

/// One work item's progress in one block: a lane of the round. On the GPU it lives in shared memory,
/// written by its lane of warp 0 (the owner) in the subscribe and publish phases and read by every warp in
/// between, after a barrier; on the host executor, by the block's one thread.
struct lane_state {
  std::uint32_t op;     ///< the kernel operator this lane serves
  std::uint32_t index;  ///< which of the operator's items per round (its warps and staging area)
  // The operator's fields the schedule reads, copied here at start: the schedule then touches shared
  // memory only (the operator table is global memory, an L2 round trip per item that queues behind the
  // frames' traffic: 4.6% of round time at 16 KiB frames on the H100 when the loop read them there).
  std::uint32_t first_warp;  ///< the item's warps are [first_warp, first_warp + item_warps)
  std::uint32_t item_warps;
  /// The warps it runs on this round (place_round_warps): its own, or with kernel_args::spread_warps a
  /// share of every warp of the block when the round's items leave some idle.
  std::uint32_t round_first_warp;
  std::uint32_t round_warps;
  std::uint32_t stage_bits;  ///< stage_input_bit | stage_output_bit, as the operator stages
  std::uint32_t reader;      ///< kernel_op::reader
  std::uint64_t item;        ///< offset·parts + part
  std::uint32_t phase;       ///< lane_phase
  /// 1: the item is finished this round: publish it. Other operators' items compute in the same round;
  /// a file reader's item computes in the rounds its stages' pages are resident (`compute`) and is
  /// published in a later one.
  std::uint32_t ready;
  std::uint32_t compute;  ///< 1: the item's warps run the operator this round
  std::uint32_t is_void;
  std::uint32_t misses;  ///< polls that found the input pending (end of stream is checked every few)
  std::uint32_t skip;    ///< rounds to wait before polling again (backoff of a lane whose input lags)
  const std::byte* src;  ///< the item's input bytes in the topic (staged into `in` when op.stage)
  const std::byte* in;
  std::byte* out;            ///< where the operator writes (the staging area when op.stage_output)
  std::byte* dst;            ///< the item's output bytes in the topic
  std::uint64_t bytes;       ///< the frame's
  std::uint64_t first;       ///< the item's first byte within the frame
  std::uint64_t item_bytes;  ///< the item's bytes (0 for a part past a short frame's end)
  std::uint64_t tag;
  std::uint64_t born_ns;
  std::uint64_t failure;  ///< frame_task::fail's word for this round
  /// Shared objects: each slot's version for the item (item_context::objects points here), and the offsets
  /// [object_lo, object_hi) for which those versions hold — resolved once, then reused by the lane's next
  /// items without reading the version tables (host memory) again.
  const std::byte* object_data[max_operator_objects];
  std::uint64_t object_lo;
  std::uint64_t object_hi;
};
static_assert(std::is_trivially_copyable_v<lane_state>);

/// A file reader's work item in one block, in device memory ([blocks × item_count]; a lane of another
/// operator leaves its own unused). Only the block's thread 0 writes it, in the round's fetch phase
/// (and the subscribing lane when the item starts); compute reads `item` and `carry` after the barrier.
struct reader_lane {
  fetch_item item;
  alignas(16) std::byte carry[64];  ///< frame_task::carry
  std::uint32_t stage;
  std::uint32_t fetching;  ///< 1: the stage's ranges were declared and are being made resident
  std::uint32_t computed;  ///< 1: the stage's compute runs this round; next round releases its pages
  std::uint32_t fresh;     ///< 1: a file source's new frame: its bytes and slot fields are still to set
  /// File sources: the block's claimed run of offsets [next, run_end), one past the last offset it
  /// published, and where the readahead stops (the run's last frame's last page: beyond is another
  /// block's run).
  std::uint64_t next;
  std::uint64_t run_end;
  std::uint64_t published_end;
  std::uint32_t run_limit_pending;  ///< 1: a new run whose readahead limit is still to compute
  std::uint32_t ahead_limit_file;
  std::uint64_t ahead_end_page;
};
static_assert(std::is_trivially_copyable_v<reader_lane>);

/// A block's heartbeat, in pinned host memory: the block's leader stores it about every millisecond with
/// relaxed remote stores and no fence, and the host watchdog reads it. (A system-scope fence per report
/// waited until every write the block had in flight over PCIe had landed: up to 16% of round time at
/// 16 KiB frames on the H100.)
struct alignas(64) block_heartbeat {
  std::uint64_t beat;    ///< incremented at each report; ~0 once the block exited
  std::uint64_t rounds;  ///< rounds run so far, as of the last report
};
static_assert(std::is_trivially_copyable_v<block_heartbeat>);

/// One round of a traced block (`--trace`), as its leader read %globaltimer (ns): where each phase began,
/// and where the round ended. In pinned host memory, one ring of `trace_ring` records per traced block,
/// written with plain remote stores and no fence while the host drains it: `round` (the block's count of
/// recorded rounds, from 1) goes last, and the host takes a record only when it holds the round it
/// expects, with its clocks in order.
struct round_record {
  std::uint64_t subscribe_ns, schedule_ns, compute_ns, publish_ns, end_ns;
  std::uint64_t round;
};
static_assert(std::is_trivially_copyable_v<round_record>);

/// A block's work items as of its latest round, in device memory, so keeping it current costs the hot
/// path no PCIe traffic: each leader-warp lane stores its own at the end of subscribe, thread 0 the round
/// count. The watchdog copies it out on a stream of its own when the block's heartbeat stalls, so its
/// dump names the frame a stuck operator is running.
struct lane_snapshot {
  std::uint64_t rounds;
  std::uint64_t item[max_block_items];   ///< each lane's work item (offset·parts + part)
  std::uint32_t phase[max_block_items];  ///< each lane's lane_phase (lane_running: this round runs it)
};
static_assert(std::is_trivially_copyable_v<lane_snapshot>);

/// Kinds of failure the kernel reports.
enum kernel_fault : std::uint32_t {
  fault_none = 0,
  fault_frame_failed = 1,  ///< an operator called frame_task::fail(code)
  fault_bad_bytes = 2,     ///< an input slot announces more bytes than the output frame holds
  fault_read_range = 3,    ///< a file reader's stage reads outside its files (kernel_failure::range)
  fault_read_list = 4,     ///< a stage asked for more ranges than a read_list holds (detail: the stage)
  fault_stage_pages =
      5,  ///< a stage needs more pages than a block may hold (detail: pages, range.offset: room)
  fault_read_failed = 6,  ///< a page a stage reads could not be read (the I/O service says why)
  fault_injected = 7,     ///< kernel_op::inject_fail_at reached (the tests' fault injection)
};

/// The first failure of the run. Pinned host memory: written by the one block that won `fail_claim`,
/// then `failed` is stored with release order; the host reads the rest after an acquire load of it.
struct alignas(64) kernel_failure {
  std::uint64_t failed;   ///< 0, then 1
  std::uint32_t kind;     ///< kernel_fault
  std::uint32_t op;       ///< kernel operator index
  std::uint64_t offset;   ///< input offset of the frame
  std::uint64_t detail;   ///< the operator's code (frame_failed) or the announced bytes (bad_bytes)
  file_range range;       ///< read_range: the range at fault (run-global file id); `problem` says what
  std::uint32_t problem;  ///< read_range: a range_problem
};

/// Per-block phase clocks (SM cycles), summed by the block and written once when it exits (device
/// memory). Shares of their total are the paper's Fig. 11 round-time breakdown.
struct block_timing {
  std::uint64_t subscribe;  ///< lanes take, poll and reserve (the leader warp)
  std::uint64_t schedule;   ///< the leader builds the work-vector
  std::uint64_t compute;    ///< warps run operators (staging included)
  std::uint64_t publish;    ///< fences, publishes and releases
  std::uint64_t idle;       ///< rounds in which no lane had work (backoff sleeps included)
  std::uint64_t rounds;
  std::uint64_t busy_rounds;
  std::uint64_t fence;           ///< of publish: the rounds' system-scope release fences
  std::uint64_t fences;          ///< rounds that fenced (a lane published a frame)
  std::uint64_t placed_warps;    ///< summed over busy rounds: warps that ran an item
  std::uint64_t computed_items;  ///< summed over busy rounds: items that computed
};

/// Per-operator totals (device memory, device-scope atomics once per published frame).
struct kernel_op_counters {
  std::uint64_t frames;
  std::uint64_t bytes;
};

/// The partition the host asks for: warps per kernel operator, in kernel order (the operators' warps are
/// consecutive, in that order). Device memory: the host writes it with copies on its side stream while the
/// kernel runs — first warps[g % 2], then, in a later copy on the same stream (so after it), `generation`
/// = g — and each block's thread 0 reads `generation` every round and the warps when it changed. Two
/// buffers: the host asks for g + 1 only once every block adopted g, so no block reads a buffer while it
/// is rewritten. Generation 0 is the plan's partition (the operator table's first_warp / warps).
struct partition_control {
  std::uint32_t generation;
  std::uint32_t reserved;
  std::uint32_t warps[2][max_kernel_operators];
};
static_assert(std::is_trivially_copyable_v<partition_control>);

/// The warps of work item `item` of an operator that has `warps` warps from `first_warp` on and `items`
/// items per round: [*begin, *begin + *count). The first `warps % items` items get one warp more, so any
/// partition with at least one warp per item is valid (the plan's own is a multiple of `items`).
XF_HOST_DEVICE XF_FORCE_INLINE void item_warp_range(std::uint32_t first_warp, std::uint32_t warps,
                                                    std::uint32_t items, std::uint32_t item,
                                                    std::uint32_t* begin, std::uint32_t* count) {
  const std::uint32_t base = warps / items, extra = warps % items;
  *begin = first_warp + item * base + (item < extra ? item : extra);
  *count = base + (item < extra ? 1u : 0u);
}

/// An operator's measured round time: SM cycles its work items took (per item, the slowest of its warps'
/// own work: staging in, the operator, staging out; barrier waits excluded) and how many items, since the
/// launch. Device memory, [op_count]: each block sums its items in shared memory and adds them here every
/// `cost_flush_interval_ns` and before it adopts a new partition (so the items counted while a partition
/// was active are all here once every block adopted the next one). Read by the host with copies.
struct op_cost {
  std::uint64_t cycles;
  std::uint64_t items;
};
static_assert(std::is_trivially_copyable_v<op_cost>);

/// Everything the kernel gets, by value, at launch.
struct kernel_args {
  const topic_view* topics;  ///< catalog: [topic count]
  const kernel_op* ops;      ///< catalog: [op_count]
  const std::byte* params;   ///< catalog: parameter arena
  std::uint32_t op_count;
  std::uint32_t report_interval_ns;  ///< how often a block stores its heartbeat
  /// Device memory, read by every block each round: non-zero stops them all. A block that failed stores
  /// 1; the host asks for a stop by copying 1 in on a stream of its own (the copy engines run beside the
  /// kernel). A word in host memory instead cost a PCIe read per check, which queues behind the frames'
  /// reads: tens of microseconds under load, measured.
  std::uint32_t* device_abort;
  std::uint32_t* fail_claim;     ///< device: the first failing block CASes 0 → 1, then fills `failure`
  kernel_failure* failure;       ///< pinned host
  block_heartbeat* heartbeats;   ///< pinned host: [gridDim.x]
  lane_snapshot* snapshots;      ///< device: [gridDim.x]
  block_timing* timings;         ///< device: [gridDim.x]
  kernel_op_counters* counters;  ///< device: [op_count]
  std::byte* scratch;            ///< device: [gridDim.x · scratch_per_block]
  std::uint64_t scratch_per_block;
  std::uint32_t item_count;     ///< work items per block over all operators (lanes of the leader warp in use)
  std::uint32_t poll_skip_max;  ///< most rounds a lane whose input lags lets pass between two polls
  /// 1: a round whose computing items leave warps idle gives every warp of the block to those items
  /// (runtime.spread_warps; place_round_warps).
  std::uint32_t spread_warps;
  std::uint32_t idle_sleep_max_ns;  ///< longest sleep of a block with nothing to run (doubling from 64 ns)
  partition_control* partition;     ///< device (the kernel only reads it)
  std::uint32_t* block_generation;  ///< device, [gridDim.x]: the partition generation each block runs
  op_cost* costs;                   ///< device, [op_count]
  std::uint32_t cost_flush_interval_ns;
  // File readers; `readers` null when the topology has none.
  file_cache_view files;           ///< the file cache (kernel parts in device memory)
  fetch_block* fetch_blocks;       ///< device, [gridDim.x]: each block's share, request slots, readahead
  reader_lane* readers;            ///< device, [gridDim.x · item_count]
  std::uint32_t* reader_entries;   ///< device, [gridDim.x · item_count · entries_per_lane]
  std::uint32_t entries_per_lane;  ///< the most pages one stage may hold
  std::uint32_t block_room;        ///< pages a block may hold at once (its LRA share, or all slots)
  fetch_counters* fetch_totals;    ///< device, [gridDim.x]: written once when the block exits
  /// Device memory: non-zero once the host drains the run (an interrupt): file sources claim no more.
  std::uint32_t* drain;
  /// Catalog: the topology's shared objects' version tables (words in host memory, buffers on the side that
  /// runs the round); null without objects.
  const shared::version_table_view* objects;
  // The trace's rounds (round_record); `trace_rounds` null when the run is not traced.
  round_record* trace_rounds;  ///< pinned host: [ceil(gridDim.x / trace_every) · trace_ring]
  std::uint64_t* trace_clock;  ///< pinned host: block 0's %globaltimer at its start (the host's calibration)
  std::uint32_t trace_every;   ///< blocks 0, trace_every, 2·trace_every, … are traced
  std::uint32_t trace_ring;    ///< records per traced block's ring
  std::uint32_t trace_gap_ns;  ///< a traced block records a busy round at most once per this many ns
};
static_assert(std::is_trivially_copyable_v<kernel_args>);

}  // namespace xf
