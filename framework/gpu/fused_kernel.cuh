// The virtualised persistent kernel (the XeFlow paper's §4–§5) fused with the device code of a fixed list
// of GPU operators. Include it from exactly one `.cu` per executable and name the operators there:
//
//   const xf::kernel_program* my_kernel() { return xf::fused_kernel<xf::builtin_gpu_operators, my_op>(); }
//
// Compiled by a plain C++ compiler (a build without CUDA), fused_kernel() returns null: GPU operators then
// run on the host executor. So one source file serves both builds.
//
// One launch runs every GPU operator of the topology until end of stream. Each block loops rounds:
//   1. subscribe — each lane of warp 0 advances one work item (an operator holds one or more per block:
//      small frames share a round's fixed costs): take an item from the operator's subscriber group, poll
//      its input slot, check that the output slot is free (all non-blocking: an item that is not ready
//      waits for a later round, so blocks that feed each other never deadlock);
//   2. schedule — warp 0 ballots which items run, then thread 0 builds the work-vector (the work item
//      each warp runs this round) from those items alone;
//   3. compute — each warp runs its operator over the frame with virtual thread ids (after staging the
//      input frame into the block's scratch when the plan says so);
//   4. publish — warp 0 fences once, then each lane publishes its item's output at the input's offset
//      and releases the input (for a frame split into parts, the block finishing the last part does).
// Blocks never synchronise with each other; all coordination goes through the topics' single-writer words.
#pragma once

#include "framework/model/gpu_operator_list.hpp"

#if !defined(__CUDACC__)
namespace xf {
class kernel_program;
template <class... Ops>
const kernel_program* fused_kernel() {
  return nullptr;
}
}  // namespace xf
#else

#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>
#include <optional>
#include <typeindex>
#include <typeinfo>

#include "framework/gpu/block_moves.cuh"
#include "framework/core/cuda_check.hpp"
#include "framework/kernel/kernel_program.hpp"
#include "framework/model/operator.hpp"

namespace xf {
namespace kernel_detail {

// ---- the operator list, flattened ---------------------------------------------------------------------

template <class... Lists>
struct concat;
template <>
struct concat<> {
  using type = gpu_operator_list<>;
};
template <class... A>
struct concat<gpu_operator_list<A...>> {
  using type = gpu_operator_list<A...>;
};
template <class... A, class... B, class... Rest>
struct concat<gpu_operator_list<A...>, gpu_operator_list<B...>, Rest...> {
  using type = typename concat<gpu_operator_list<A..., B...>, Rest...>::type;
};
template <class T>
struct as_list {
  using type = gpu_operator_list<T>;
};
template <class... A>
struct as_list<gpu_operator_list<A...>> {
  using type = gpu_operator_list<A...>;
};
template <class... Items>
using flatten = typename concat<typename as_list<Items>::type...>::type;

// ---- dispatch: (operator type, element type) → the operator's compute ----------------------------------

struct frame_call {
  const std::byte* params;
  const std::byte* in;
  std::byte* out;
  std::uint64_t bytes;
  std::uint64_t first_byte;  ///< of the part within the frame
  std::uint64_t offset;
  std::uint32_t thread_id;
  std::uint32_t thread_count;
  std::uint64_t* failure;
  std::byte* state;  ///< a GPU sink's accumulator (kernel_op::state)
  // File readers (frame_task's fields of the same names); null / zero for other operators.
  const file_pages* files = nullptr;
  std::uint32_t stage = 0;
  std::byte* carry = nullptr;
  const std::uint64_t* file_sizes = nullptr;
  std::uint64_t out_capacity = 0;
};

/// Calls f(T{}) for the element type e.
template <class F>
__device__ __forceinline__ void with_element(element_type e, F&& f) {
  switch (e) {
    case element_type::u8:
      f(std::uint8_t{});
      break;
    case element_type::i8:
      f(std::int8_t{});
      break;
    case element_type::u16:
      f(std::uint16_t{});
      break;
    case element_type::i16:
      f(std::int16_t{});
      break;
    case element_type::u32:
      f(std::uint32_t{});
      break;
    case element_type::i32:
      f(std::int32_t{});
      break;
    case element_type::u64:
      f(std::uint64_t{});
      break;
    case element_type::i64:
      f(std::int64_t{});
      break;
    case element_type::f32:
      f(float{});
      break;
    case element_type::f64:
      f(double{});
      break;
  }
}

template <class Op>
__device__ __forceinline__ const typename Op::params& params_of(const frame_call& c) {
  static_assert(alignof(typename Op::params) <= 16, "the parameter arena aligns each params struct to 16 bytes");
  // Read in place (16-byte aligned arena, trivially copyable params, no strict aliasing in this build): a
  // copy put large params — kmeans_assign's 32 centres — on every thread's stack for every item.
  return *reinterpret_cast<const typename Op::params*>(c.params);
}

template <class T>
__device__ __forceinline__ frame_task<T> task_of(const frame_call& c) {
  frame_task<T> task;
  task.in = reinterpret_cast<const T*>(c.in);
  task.out = reinterpret_cast<T*>(c.out);
  task.count = c.bytes / sizeof(T);
  task.first = c.first_byte / sizeof(T);
  task.offset = c.offset;
  task.thread_id = c.thread_id;
  task.thread_count = c.thread_count;
  task.failure = c.failure;
  task.state = c.state;
  task.files = c.files;
  task.stage = c.stage;
  task.carry = c.carry;
  task.file_sizes = c.file_sizes;
  task.out_capacity = c.out_capacity;
  return task;
}

template <class Op>
__device__ void run_op(element_type e, const frame_call& c) {
  with_element(e, [&](auto zero) { Op::compute(params_of<Op>(c), task_of<decltype(zero)>(c)); });
}

template <class... Ops>
__device__ void dispatch(gpu_operator_list<Ops...>, std::uint32_t type, element_type e, const frame_call& c) {
  std::uint32_t i = 0;
  ((type == i++ ? run_op<Ops>(e, c) : void()), ...);
}

template <class Op>
__device__ void reads_op(element_type e, const frame_call& c, read_list& list, read_step& step) {
  if constexpr (gpu_file_reader<Op>)
    with_element(e, [&](auto zero) {
      step = Op::template reads<decltype(zero)>(params_of<Op>(c), task_of<decltype(zero)>(c), list);
    });
}

/// A file reader's `reads` for the stage in `c` (operator.hpp: gpu_file_reader); `done` for any other type.
template <class... Ops>
__device__ read_step dispatch_reads(gpu_operator_list<Ops...>, std::uint32_t type, element_type e,
                                   const frame_call& c, read_list& list) {
  read_step step = read_step::done;
  std::uint32_t i = 0;
  ((type == i++ ? reads_op<Ops>(e, c, list, step) : void()), ...);
  return step;
}

template <class Op>
__device__ void frame_bytes_op(const frame_call& c, std::uint64_t& bytes) {
  if constexpr (gpu_file_source<Op>) bytes = Op::frame_bytes(params_of<Op>(c), c.file_sizes, c.out_capacity, c.offset);
}

/// A file source's frame_bytes (operator.hpp: gpu_file_source); 0 for any other type.
template <class... Ops>
__device__ std::uint64_t dispatch_frame_bytes(gpu_operator_list<Ops...>, std::uint32_t type, const frame_call& c) {
  std::uint64_t bytes = 0;
  std::uint32_t i = 0;
  ((type == i++ ? frame_bytes_op<Ops>(c, bytes) : void()), ...);
  return bytes;
}

/// Whether any operator of the list reads files: the kernel's reader phases are compiled in only then.
template <class List>
struct reads_any_files;
template <class... Ops>
struct reads_any_files<gpu_operator_list<Ops...>> {
  static constexpr bool value = (gpu_file_reader<Ops> || ...);
};

// ---- device helpers ------------------------------------------------------------------------------------

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// A relaxed device-scope store: emitted where it stands (a plain store may be deferred or merged),
/// without a fence.
template <class T>
__device__ __forceinline__ void device_store(T& word, T value) {
  cuda::atomic_ref<T, cuda::thread_scope_device>(word).store(value, cuda::std::memory_order_relaxed);
}

/// The schedule's `any_stage` bits: some item of the round stages its input / its output.
constexpr std::uint32_t stage_input_bit = 1;
constexpr std::uint32_t stage_output_bit = 2;

/// One work item's progress in one block, in shared memory. Written by its lane of warp 0 (the owner) in
/// the subscribe and publish phases; read by every warp in between, after a __syncthreads.
struct lane_state {
  std::uint32_t op;     ///< the kernel operator this lane serves
  std::uint32_t index;  ///< which of the operator's items per round (its warps and staging area)
  // The operator's fields the schedule reads, copied here at start: the schedule then touches shared
  // memory only (a.ops is global memory, an L2 round trip per item that queues behind the frames' traffic:
  // measured 4.6% of round time at 16 KiB frames when the loop read them there).
  std::uint32_t first_warp;  ///< the item's warps are [first_warp, first_warp + item_warps)
  std::uint32_t item_warps;
  std::uint32_t stage_bits;  ///< stage_input_bit | stage_output_bit, as the operator stages
  std::uint32_t reader;      ///< kernel_op::reader
  std::uint64_t item;   ///< offset·parts + part
  std::uint32_t phase;  ///< lane_phase
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
  std::byte* out;  ///< where the operator writes (the staging area when op.stage_output)
  std::byte* dst;  ///< the item's output bytes in the topic
  std::uint64_t bytes;       ///< the frame's
  std::uint64_t first;       ///< the item's first byte within the frame
  std::uint64_t item_bytes;  ///< the item's bytes (0 for a part past a short frame's end)
  std::uint64_t tag;
  std::uint64_t born_ns;
  std::uint64_t failure;  ///< frame_task::fail's word for this round
};


/// Polls that find an input pending between two reads of the topic's end word (a remote read each).
constexpr std::uint32_t end_check_interval = 8;
/// Idle backoff of a block whose lanes all wait: doubles from this value to kernel_args::idle_sleep_max_ns.
constexpr std::uint32_t idle_sleep_min_ns = 64;

/// Reports the first failure of the run and stops every block. `range` and `problem`: a file reader's
/// (kernel_failure).
__device__ void report_failure(const kernel_args& a, std::uint32_t kind, std::uint32_t op,
                               std::uint64_t offset, std::uint64_t detail, file_range range = {},
                               std::uint32_t problem = 0) {
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device> claim(*a.fail_claim);
  std::uint32_t expected = 0;
  if (claim.compare_exchange_strong(expected, 1u, cuda::std::memory_order_relaxed)) {
    a.failure->kind = kind;
    a.failure->op = op;
    a.failure->offset = offset;
    a.failure->detail = detail;
    a.failure->range = range;
    a.failure->problem = problem;
    store_release(a.failure->failed, std::uint64_t{1});  // the fields above before the flag
  }
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(*a.device_abort)
      .store(1u, cuda::std::memory_order_relaxed);
}

}  // namespace kernel_detail
}  // namespace xf

#include "framework/gpu/kernel_readers.cuh"

namespace xf {
namespace kernel_detail {

/// Subscribe step of one lane of warp 0 (one work item of operator l.op). `ops_closed[k]` counts the
/// block's lanes of operator k that saw the end of its input: the last one closes the output, so each
/// block closes each output once, as the topic's publisher count expects.
__device__ void subscribe(const kernel_args& a, lane_state& l, std::uint32_t lane, std::byte* block_scratch,
                          std::uint32_t* ops_closed) {
  l.ready = 0;
  l.compute = 0;
  // A file reader's item in its stages is advanced by the fetch phase (kernel_readers.cuh).
  if (l.phase == lane_done || l.phase == lane_reading) return;
  const kernel_op& op = a.ops[l.op];
  if (op.input == no_input_topic) {
    subscribe_source(a, l, lane);
    return;
  }
  const topic_view& vi = a.topics[op.input];
  // A GPU sink has no output: no backpressure, nothing to publish or close.
  const topic_view* vo = op.output == no_output_topic ? nullptr : &a.topics[op.output];
  if (l.phase == lane_idle) {
    l.item = vi.take(op.group);
    l.phase = lane_wait_input;
    l.misses = 0;
    l.skip = 0;
  }
  const std::uint64_t offset = l.item / op.parts;
  if (l.phase == lane_wait_input) {
    if (l.skip != 0) {
      --l.skip;
      return;
    }
    if (!vi.published(offset)) {
      // Each poll of a host-resident slot is a PCIe read: a lane whose input keeps lagging polls less
      // often (every 1, 2, 4 … up to poll_skip_max rounds), so idle lanes leave the link to the data.
      const std::uint32_t exponent = l.misses / 4 < 5 ? l.misses / 4 : 5;
      l.skip = ((1u << exponent) - 1) < a.poll_skip_max ? (1u << exponent) - 1 : a.poll_skip_max;
      // Pending, or past the end. The end word is stored after every publish below it, so reading it
      // after a pending seq is exact; it is read only every few misses (it is a remote load).
      if (++l.misses % end_check_interval == 0 && offset >= vi.end()) {
        l.phase = lane_done;
        if (atomicAdd(&ops_closed[l.op], 1u) + 1 == op.items && vo != nullptr) vo->close(vi.end());
      }
      return;
    }
    l.phase = lane_wait_output;
  }
  if (vo != nullptr && !vo->slot_free(offset)) return;  // backpressure: a later round
  const index_slot& slot = vi.slot(offset);
  l.is_void = (slot.flags & slot_void) != 0;
  l.bytes = slot.bytes;
  l.tag = slot.tag;
  l.born_ns = slot.born_ns;
  l.failure = 0;
  if (!l.is_void && vo != nullptr && l.bytes > vo->frame_bytes) {
    report_failure(a, fault_bad_bytes, l.op, offset, l.bytes);
    return;
  }
  l.item_bytes = 0;
  if (!l.is_void) {
    l.first = (l.item % op.parts) * op.part_bytes;
    l.item_bytes =
        l.bytes > l.first ? (l.bytes - l.first < op.part_bytes ? l.bytes - l.first : op.part_bytes) : 0;
    l.src = vi.frame_data(slot.frame) + l.first;
    l.in =
        op.stage ? block_scratch + op.stage_offset + l.index * op.stage_stride : l.src;  // staged at compute
    l.dst = vo != nullptr ? vo->frame_data(vo->slot_frame(offset)) + l.first : nullptr;
    l.out = op.stage_output ? block_scratch + op.stage_output_offset + l.index * op.stage_stride : l.dst;
  }
  if (vo == nullptr) {
    l.ready = 1;
    l.compute = 1;
    return;
  }
  // The output slot is ours (slot_free): its fields are prepared now and committed by the publish phase,
  // after its release fence.
  if (l.is_void)
    vo->prepare_void(offset);
  else
    vo->prepare_slot(offset, vo->slot_frame(offset), l.bytes * op.output_numerator / op.output_denominator, l.tag,
                     0, l.born_ns);
  if (op.reader != reader_none && !l.is_void) {
    start_reading(a, l, lane, false);  // its stages run from the next fetch phase on
    return;
  }
  l.ready = 1;
  l.compute = 1;
}

/// Publish step, run by all of warp 0 together (lane s owns work item s): each ready lane counts its
/// part done; lanes finishing a frame publish the output at the input's offset and release the input.
/// A failed frame is reported instead.
__device__ void publish(const kernel_args& a, lane_state* lanes, std::uint32_t lane_id,
                        std::uint32_t* item_cycles, unsigned long long* op_cycles, std::uint32_t* op_items) {
  lane_state* l = lane_id < a.item_count && lanes[lane_id].ready ? &lanes[lane_id] : nullptr;
  bool last = false;
  std::uint64_t offset = 0;
  // A file reader's stage computed this round: a failure is the frame's (it is published in a later
  // round, if at all), and its cost counts with the item's other stages.
  if (lane_id < a.item_count && lanes[lane_id].reader != reader_none && lanes[lane_id].compute) {
    lane_state& r = lanes[lane_id];
    if (r.failure != 0) {
      report_failure(a, fault_frame_failed, r.op, r.item, r.failure & 0xffffffffu);
    } else if (r.item_bytes != 0) {
      atomicAdd(&op_cycles[r.op], static_cast<unsigned long long>(item_cycles[lane_id]));
    }
  }
  if (l != nullptr) {
    const kernel_op& op = a.ops[l->op];
    const topic_view& vi = a.topics[op.input == no_input_topic ? op.output : op.input];
    offset = l->item / op.parts;
    if (l->failure != 0) {
      report_failure(a, fault_frame_failed, l->op, offset, l->failure & 0xffffffffu);
    } else {
      last = true;
      if (op.parts > 1) {
        // acq_rel: this block's (fenced) writes of its part happen before the last finisher's publish.
        cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device> done(op.parts_done[vi.slot_of(offset)]);
        last = done.fetch_add(1u, cuda::std::memory_order_acq_rel) + 1 == op.parts;
        if (last) done.store(0u, cuda::std::memory_order_relaxed);  // before the release below reuses it
      }
    }
  }
  // One system-scope release fence, executed once by the whole warp, orders everything this round's
  // publishes depend on — the frames' bytes written by every thread of this block (they reached warp 0
  // through the block barrier; other blocks' parts through the acq_rel counter above), the slot fields
  // written at subscribe, and this block's reads of the input frames — before the stores below, which
  // can then be relaxed. One fence per round instead of one per store: each is a PCIe round trip.
  if (__any_sync(0xffffffffu, last))
    cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_system);
  if (last) {
    const kernel_op& op = a.ops[l->op];
    if (op.output != no_output_topic) a.topics[op.output].commit_relaxed(offset);
    if (op.input != no_input_topic) {
      a.topics[op.input].release_relaxed(op.group, offset);
    } else {
      reader_of(a, lane_id).published_end = offset + 1;  // a file source closes its output with it
    }
    if (!l->is_void) {
      cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> frames(a.counters[l->op].frames);
      cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> bytes(a.counters[l->op].bytes);
      frames.fetch_add(1u, cuda::std::memory_order_relaxed);
      bytes.fetch_add(l->bytes, cuda::std::memory_order_relaxed);
    }
  }
  if (l != nullptr && l->failure == 0) {
    if (l->reader != reader_none) {
      atomicAdd(&op_items[l->op], 1u);  // its stages' costs were counted as they ran
    } else if (l->item_bytes != 0) {  // it ran this round: its cost counts
      atomicAdd(&op_cycles[l->op], static_cast<unsigned long long>(item_cycles[lane_id]));
      atomicAdd(&op_items[l->op], 1u);
    }
    l->phase = lane_idle;
    l->ready = 0;
  }
  if (lane_id < a.item_count) item_cycles[lane_id] = 0;
}

/// Thread 0: adds the block's measured costs to a.costs and clears them.
__device__ void flush_costs(const kernel_args& a, unsigned long long* op_cycles, std::uint32_t* op_items) {
  for (std::uint32_t k = 0; k < a.op_count; ++k) {
    if (op_items[k] == 0) continue;
    atomicAdd(reinterpret_cast<unsigned long long*>(&a.costs[k].cycles), op_cycles[k]);
    atomicAdd(reinterpret_cast<unsigned long long*>(&a.costs[k].items),
              static_cast<unsigned long long>(op_items[k]));
    op_cycles[k] = 0;
    op_items[k] = 0;
  }
}

/// Thread 0, between rounds: gives each work item its warps under the partition `warps` (per operator,
/// operators' warps consecutive in kernel order). Only the items' warps change: the lanes keep the frames
/// they hold, so a switch loses, repeats or reorders nothing.
__device__ void adopt_partition(const kernel_args& a, lane_state* lanes, std::uint32_t* source) {
  // Device-scope loads: the words were written by the copy engines, and the same buffer was read two
  // generations ago (a plain load could hit a stale L1 line).
  std::uint32_t first[max_kernel_operators], warps[max_kernel_operators];
  std::uint32_t next = 0;
  for (std::uint32_t k = 0; k < a.op_count; ++k) {
    warps[k] = cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(source[k])
                   .load(cuda::std::memory_order_relaxed);
    first[k] = next;
    next += warps[k];
  }
  for (std::uint32_t s = 0; s < a.item_count; ++s) {
    lane_state& l = lanes[s];
    item_warp_range(first[l.op], warps[l.op], a.ops[l.op].items, l.index, &l.first_warp, &l.item_warps);
  }
}

/// The persistent kernel is compiled for two block sizes, since a kernel's register budget is fixed when it
/// is compiled: blocks of at most `narrow_block_threads` (8 warps, the default) get up to 128 registers a
/// thread at 2 blocks an SM (the default grid); wider blocks, up to 1024 threads, 64. Bound to 64 for every
/// block size, the kernel spilled (4.5 KB of spill loads in its code once every operator was in) and the
/// unloaded latency of a 16 KiB frame grew with it, 15.6 → 20.0 µs p50 on the H100 over the commits that
/// grew the kernel; with 128 it spills ~0.1 KB.
inline constexpr int narrow_block_threads = 256;

/// `Readers`: the kernel with the file readers' phases (kernel_readers.cuh), compiled only for a list that
/// has a reader and launched only for a topology that has one: the other topologies' kernel carries none
/// of their code (its registers and spills stay as measured: 128, ~0.1 KB).
template <class List, int MaxThreads, bool Readers>
__global__ void __launch_bounds__(MaxThreads, MaxThreads <= narrow_block_threads ? 2 : 1)
    persistent_kernel(kernel_args a) {
  __shared__ lane_state lanes[max_block_items];
  __shared__ deferred_moves moves;  // the fetch phase's page copies (Readers only)
  __shared__ std::uint32_t ops_closed[max_kernel_operators];
  // The work-vector: the item (lane) each warp runs this round, valid for the warps whose bit is set in
  // placed_warps (the others keep a stale entry: clearing every entry every round cost a store per warp).
  __shared__ std::uint32_t warp_item[max_kernel_operators];
  __shared__ std::uint32_t placed_warps;
  __shared__ std::uint32_t stop;
  __shared__ std::uint32_t any_stage;
  // Round-time measurement: each item's cost this round (the max over its warps), and per operator the
  // cycles and items not yet added to a.costs.
  __shared__ std::uint32_t item_cycles[max_block_items];
  __shared__ unsigned long long op_cycles[max_kernel_operators];
  __shared__ std::uint32_t op_items[max_kernel_operators];
  constexpr std::uint32_t no_item = ~0u;

  const std::uint32_t warp = threadIdx.x / 32;
  const std::uint32_t lane_id = threadIdx.x % 32;
  std::byte* block_scratch = a.scratch + std::uint64_t{blockIdx.x} * a.scratch_per_block;
  block_heartbeat& heartbeat_word = a.heartbeats[blockIdx.x];
  lane_snapshot& snapshot = a.snapshots[blockIdx.x];

  if (threadIdx.x < a.item_count) {
    lane_state l{};
    for (std::uint32_t k = 0; k < a.op_count; ++k)
      if (threadIdx.x >= a.ops[k].first_item && threadIdx.x < a.ops[k].first_item + a.ops[k].items) {
        const kernel_op& op = a.ops[k];
        l.op = k;
        l.index = threadIdx.x - op.first_item;
        item_warp_range(op.first_warp, op.warps, op.items, l.index, &l.first_warp, &l.item_warps);
        l.stage_bits = (op.stage ? stage_input_bit : 0u) | (op.stage_output ? stage_output_bit : 0u);
        l.reader = op.reader;
      }
    l.phase = lane_idle;
    lanes[threadIdx.x] = l;
  }
  if constexpr (Readers) {
    if (threadIdx.x == 0) moves.clear();
  }
  fetch_counters fetched{};  // thread 0's (Readers only)
  if (threadIdx.x < max_kernel_operators) {
    ops_closed[threadIdx.x] = 0;
    op_cycles[threadIdx.x] = 0;
    op_items[threadIdx.x] = 0;
  }
  if (threadIdx.x < max_block_items) item_cycles[threadIdx.x] = 0;
  block_timing timing{};  // thread 0's clocks
  std::uint64_t last_report_ns = 0, last_flush_ns = 0, heartbeat = 0;
  std::uint32_t generation = 0;  // thread 0: the partition this block runs
  std::uint32_t sleep_ns = idle_sleep_min_ns;
  __syncthreads();

  while (true) {
    const std::uint64_t t0 = clock64();
    // Thread 0's reads for the schedule phase, issued now so that their latency (an L2 round trip behind
    // the frames' traffic) passes while the subscribe's polls wait on PCIe. A failed block or the host
    // (through the copy engines) asks every block to stop.
    std::uint32_t abort_word = 0, generation_word = 0;
    std::uint64_t now = 0;
    if (threadIdx.x == 0) {
      abort_word = cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(*a.device_abort)
                       .load(cuda::std::memory_order_relaxed);
      // Relaxed, with an acquire fence below only when it changed: an acquire load here would hold this
      // lane's subscribe polls behind it every round.
      generation_word =
          cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(a.partition->generation)
              .load(cuda::std::memory_order_relaxed);
      now = global_ns();
    }
    // 1. subscribe: one leader-warp lane per work item, so their remote polls overlap.
    if (warp == 0 && lane_id < a.item_count) {
      lane_state& l = lanes[lane_id];
      subscribe(a, l, lane_id, block_scratch, ops_closed);
      // The lane's item in the block's snapshot: if its operator never returns, the watchdog's dump names
      // the frame (device memory: one coalesced store per round, nothing over PCIe).
      device_store(snapshot.item[lane_id], l.item);
      device_store(snapshot.phase[lane_id], l.ready ? std::uint32_t{lane_running} : l.phase);
    }
    __syncwarp();
    // 1b. fetch: the file readers' stages (their time counts as subscribe's).
    if constexpr (Readers) {
      if (threadIdx.x == 0) fetch_readers<List>(a, lanes, moves, fetched, timing.rounds);
      __syncwarp();  // the schedule's ballots read, in every lane of warp 0, the lanes this fetch advanced
    }
    const std::uint64_t t1 = clock64();
    // 2. schedule. Warp 0's lanes ballot their items, all at once: thread 0 then walks only the items
    // that compute this round, mostly one or two of the eight a block holds with 3–4 GPU stages at 4 KiB
    // frames. (Walking every item, one shared-memory load chain after the other, took ~150 SM cycles an
    // item: 3–5 % of busy round time at 4 KiB with 3–4 stages on the H100, session 17's phase split.)
    std::uint32_t running_items = 0, ready_items = 0, compute_items = 0;
    if (warp == 0) {
      bool running = false, ready = false, computes = false;
      if (lane_id < a.item_count) {
        const lane_state& l = lanes[lane_id];
        running = l.phase != lane_done;
        ready = l.ready || l.compute;
        // Void, a part past a short frame's end, or a file reader's item that is only published this
        // round: nothing to compute.
        computes = l.compute && l.item_bytes != 0;
      }
      running_items = __ballot_sync(~0u, running);
      ready_items = __ballot_sync(~0u, ready);
      compute_items = __ballot_sync(~0u, computes);
    }
    if (threadIdx.x == 0) {
      // Costs go to a.costs every flush interval, and before a new partition: what one partition ran is
      // all there once every block adopted the next.
      if (generation_word != generation || now - last_flush_ns >= a.cost_flush_interval_ns) {
        last_flush_ns = now;
        flush_costs(a, op_cycles, op_items);
      }
      if (generation_word != generation) {
        generation = generation_word;
        cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_device);
        adopt_partition(a, lanes, a.partition->warps[generation % 2]);
        device_store(a.block_generation[blockIdx.x], generation);
      }
      std::uint32_t placed = 0, stage = 0;
      for (std::uint32_t items = compute_items; items != 0; items &= items - 1) {
        const std::uint32_t s = __ffs(items) - 1;
        const lane_state& l = lanes[s];
        for (std::uint32_t w = l.first_warp; w < l.first_warp + l.item_warps; ++w) warp_item[w] = s;
        placed |= static_cast<std::uint32_t>(((std::uint64_t{1} << l.item_warps) - 1) << l.first_warp);
        stage |= l.stage_bits;
      }
      placed_warps = placed;
      any_stage = stage;
      const bool ready = ready_items != 0;
      const bool abort = abort_word != 0;
      ++timing.rounds;
      device_store(snapshot.rounds, timing.rounds);
      if (now - last_report_ns >= a.report_interval_ns) {
        last_report_ns = now;
        // Relaxed: the watchdog only needs the count to move; a release here would be a system fence.
        store_relaxed(heartbeat_word.rounds, timing.rounds);
        store_relaxed(heartbeat_word.beat, ++heartbeat);
      }
      stop = running_items == 0 || abort;
      if (!ready && !stop) {
        __nanosleep(sleep_ns);
        sleep_ns = sleep_ns * 2 > a.idle_sleep_max_ns ? a.idle_sleep_max_ns : sleep_ns * 2;
      } else {
        sleep_ns = idle_sleep_min_ns;
      }
      if (ready) ++timing.busy_rounds;
      const std::uint64_t t2 = clock64();
      timing.subscribe += t1 - t0;
      if (!ready)
        timing.idle += t2 - t1;
      else
        timing.schedule += t2 - t1;
    }
    __syncthreads();
    if (stop) break;
    if constexpr (Readers) {
      if (moves.count != 0) run_moves(moves, a.files.slots);  // the pages this round's stages read
    }
    const std::uint32_t s = (placed_warps >> warp) & 1u ? warp_item[warp] : no_item;
    if (s == no_item && warp != 0) {
      // Idle warps only meet the barriers.
      if (any_stage & stage_input_bit) __syncthreads();
      if (any_stage & stage_output_bit) __syncthreads();
      __syncthreads();
      continue;
    }
    const std::uint64_t t3 = clock64();
    // 3. compute
    if (s != no_item) {
      lane_state& l = lanes[s];
      const kernel_op& op = a.ops[l.op];
      const std::uint32_t local = (warp - l.first_warp) * 32 + lane_id;
      const std::uint32_t local_threads = l.item_warps * 32;
      // The item's cost: this warp's own work (staging, the operator), not its waits at the barriers.
      std::uint64_t work = 0;
      if (any_stage & stage_input_bit) {
        const std::uint64_t w0 = clock64();
        if (op.stage) stage_copy(const_cast<std::byte*>(l.in), l.src, l.item_bytes, local, local_threads);
        work += clock64() - w0;
        __syncthreads();
      }
      frame_call call{a.params + op.params_offset, l.in,  l.out,         l.item_bytes, l.first,
                      l.item / op.parts,           local, local_threads, &l.failure,   op.state};
      file_cache_view cache;  // what task.files points into, for a file reader's stage
      file_pages pages;
      if constexpr (Readers) {
        if (l.reader != reader_none) {
          reader_lane& r = reader_of(a, s);
          cache = a.files;
          pages = file_pages::paged(&cache, &r.item, op.first_file);
          call = reader_call(a, l, op, r, &pages);
          call.thread_id = local;
          call.thread_count = local_threads;
          call.failure = &l.failure;
        }
      }
      const std::uint64_t w1 = clock64();
      dispatch(List{}, op.type, op.element, call);
      work += clock64() - w1;
      if (any_stage & stage_output_bit) {
        __syncthreads();  // the operator's threads may have written any of the item's bytes
        const std::uint64_t w2 = clock64();
        if (op.stage_output)
          stage_copy(l.dst, l.out, l.item_bytes * op.output_numerator / op.output_denominator, local,
                     local_threads);
        work += clock64() - w2;
      }
      if (lane_id == 0)
        atomicMax(&item_cycles[s], work < 0xffffffffu ? static_cast<std::uint32_t>(work) : 0xffffffffu);
    } else {
      if (any_stage & stage_input_bit) __syncthreads();
      if (any_stage & stage_output_bit) __syncthreads();
    }
    __syncthreads();
    const std::uint64_t t4 = clock64();
    // 4. publish. A failed frame is not published: report_failure set device_abort, so the next round's
    // schedule stops every warp of every block at the same barrier.
    if (warp == 0) publish(a, lanes, lane_id, item_cycles, op_cycles, op_items);
    if (threadIdx.x == 0) {
      timing.compute += t4 - t3;
      timing.publish += clock64() - t4;
    }
  }
  if (threadIdx.x == 0) {
    flush_costs(a, op_cycles, op_items);
    if constexpr (Readers) a.fetch_totals[blockIdx.x] = fetched;
    a.timings[blockIdx.x] = timing;
    store_relaxed(heartbeat_word.rounds, timing.rounds);
    store_relaxed(heartbeat_word.beat, ~std::uint64_t{0});  // exited: the watchdog stops watching
  }
}

/// One operator over one frame, as an ordinary kernel (kernel_program::launch_frame). Once a frame failed,
/// later launches do nothing: the run is over, and a sink whose table filled up would only probe it.
template <class List>
__global__ void frame_kernel(kernel_program::frame_launch f) {
  if (f.failure != nullptr && *static_cast<volatile const std::uint64_t*>(f.failure) != 0) return;
  const frame_call call{f.params, f.in, f.out, f.bytes, 0, f.offset, blockIdx.x * blockDim.x + threadIdx.x,
                        gridDim.x * blockDim.x, f.failure, f.state};
  dispatch(List{}, f.type, f.element, call);
}

// ---- the host side of one fused kernel -----------------------------------------------------------------

template <class List>
struct type_table;
template <class... Ops>
struct type_table<gpu_operator_list<Ops...>> {
  static std::optional<std::uint32_t> index_of(std::type_index t) {
    const std::type_index types[] = {std::type_index(typeid(Ops))...};
    for (std::uint32_t i = 0; i < sizeof...(Ops); ++i)
      if (types[i] == t) return i;
    return std::nullopt;
  }
};

template <class List>
class fused_kernel_program final : public kernel_program {
 public:
  std::optional<std::uint32_t> index_of(std::type_index op) const override {
    return type_table<List>::index_of(op);
  }

  int blocks_per_sm(int threads) const override {
    // The fewer of the two kernels': the plan sizes the grid before it knows which one runs.
    int blocks = 0, with_readers = 0;
    XF_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, persistent_for(threads, false), threads, 0));
    XF_CUDA_TRY(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&with_readers, persistent_for(threads, true), threads, 0));
    return blocks < with_readers ? blocks : with_readers;
  }

  void launch(const kernel_args& args, std::uint32_t blocks, std::uint32_t threads,
              cudaStream_t stream) const override {
    kernel_args copy = args;
    void* params[] = {&copy};
    const auto kernel = persistent_for(static_cast<int>(threads), args.readers != nullptr);
    XF_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                            dim3(threads), params, 0, stream));
  }

  int frame_blocks_per_sm(int threads) const override {
    int blocks = 0;
    XF_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, frame_kernel<List>, threads, 0));
    return blocks;
  }

  void launch_frame(const frame_launch& f, std::uint32_t blocks, std::uint32_t threads,
                    cudaStream_t stream) const override {
    frame_kernel<List><<<blocks, threads, 0, stream>>>(f);
    XF_CUDA_TRY(cudaGetLastError());
  }

 private:
  /// The persistent kernel compiled for blocks of `threads`, with the file readers' phases when the run
  /// has readers (and the list any).
  static auto persistent_for(int threads, bool readers) {
    if constexpr (reads_any_files<List>::value) {
      if (readers)
        return threads <= narrow_block_threads ? &persistent_kernel<List, narrow_block_threads, true>
                                               : &persistent_kernel<List, 1024, true>;
    }
    return threads <= narrow_block_threads ? &persistent_kernel<List, narrow_block_threads, false>
                                           : &persistent_kernel<List, 1024, false>;
  }
};

}  // namespace kernel_detail

/// The fused kernel of the given GPU operators (types or gpu_operator_lists), one instance per program.
template <class... Ops>
const kernel_program* fused_kernel() {
  static const kernel_detail::fused_kernel_program<kernel_detail::flatten<Ops...>> program;
  return &program;
}

}  // namespace xf

#endif  // __CUDACC__
