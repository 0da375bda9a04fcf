// The virtualised persistent kernel (the XeFlow paper's §4–§5): the device's driver of the round
// (framework/kernel/round_steps.hpp) over a fixed list of GPU operators. One launch runs every GPU operator
// of the topology until end of stream. Each block loops rounds:
//   1. subscribe — each lane of warp 0 advances one work item (subscribe_lane; an operator holds one or more
//      per block: small frames share a round's fixed costs), all at once so that their remote polls
//      overlap; then thread 0 advances the file readers (advance_readers);
//   2. schedule — warp 0 ballots which items run, then thread 0 builds the work-vector (the work item
//      each warp runs this round) from those items alone;
//   3. compute — each warp runs its operator over the item with virtual thread ids (after staging the
//      input into the block's scratch when the plan says so);
//   4. publish — warp 0's lanes finish their items, fence once, and publish (publish_round).
// Blocks never synchronise with each other; all coordination goes through the topics' single-writer words.
// Include it from exactly one `.cu` per executable (through fused_kernel.cuh).
#pragma once

#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>

#include "framework/files/file_api.hpp"
#include "framework/files/page_moves.hpp"
#include "framework/gpu/block_moves.cuh"
#include "framework/gpu/kernel_dispatch.cuh"
#include "framework/kernel/kernel_catalog.hpp"
#include "framework/kernel/kernel_program.hpp"
#include "framework/kernel/round_steps.hpp"

namespace xf {
namespace kernel_detail {

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

/// Warp 0, after the round's last barrier: the latest of the warps' arrivals at it (clock64), i.e. when the
/// block's compute ended.
__device__ __forceinline__ std::uint64_t last_arrival(const std::uint64_t* arrived, std::uint32_t lane_id) {
  std::uint64_t t = lane_id < blockDim.x / 32 ? arrived[lane_id] : 0;
  for (std::uint32_t d = 16; d > 0; d /= 2) {
    const std::uint64_t other = __shfl_xor_sync(0xffffffffu, t, d);
    t = other > t ? other : t;
  }
  return t;
}

/// Idle backoff of a block whose lanes all wait: doubles from this value to kernel_args::idle_sleep_max_ns.
constexpr std::uint32_t idle_sleep_min_ns = 64;

/// The publish phase, run by all of warp 0 together (lane s owns work item s): each lane finishes its item
/// (finish_item), the warp fences once, and the lanes finishing a frame publish it (publish_item). The
/// items' measured costs are added to the block's totals. Returns the fence's cycles (0 when the round
/// published nothing), as lane 0 measured them.
__device__ std::uint64_t publish_round(const kernel_args& a, lane_state* lanes, std::uint32_t lane_id,
                                       std::uint32_t* item_cycles, unsigned long long* op_cycles,
                                       std::uint32_t* op_items) {
  lane_state* l = lane_id < a.item_count ? &lanes[lane_id] : nullptr;
  bool last = false;
  if (l != nullptr) {
    // A file reader's stage computed this round: its cost counts with the item's other stages.
    if (l->reader != reader_none && l->compute && l->failure == 0 && l->item_bytes != 0)
      atomicAdd(&op_cycles[l->op], static_cast<unsigned long long>(item_cycles[lane_id]));
    last = finish_item(a, *l);
  }
  // One system-scope release fence, executed once by the whole warp, orders everything this round's
  // publishes depend on — the frames' bytes written by every thread of this block (they reached warp 0
  // through the block barrier; other blocks' parts through finish_item's acq_rel counter), the slot
  // fields prepared at subscribe, and this block's reads of the input frames — before publish_item's
  // relaxed stores. One fence per round instead of one per store: each is a PCIe round trip.
  std::uint64_t fence_cycles = 0;
  if (__any_sync(0xffffffffu, last)) {
    const std::uint64_t f0 = clock64();
    cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_system);
    fence_cycles = clock64() - f0 + 1;  // never 0: the round fenced
  }
  if (last) publish_item(a, *l, blockIdx.x, lane_id, publish_order::fenced);
  if (l != nullptr && l->ready && l->failure == 0) {
    if (l->reader != reader_none) {
      atomicAdd(&op_items[l->op], 1u);  // its stages' costs were counted as they ran
    } else if (l->item_bytes != 0) {    // it ran this round: its cost counts
      atomicAdd(&op_cycles[l->op], static_cast<unsigned long long>(item_cycles[lane_id]));
      atomicAdd(&op_items[l->op], 1u);
    }
    retire_item(*l);
  }
  if (lane_id < a.item_count) item_cycles[lane_id] = 0;
  return fence_cycles;
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
    warps[k] = cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(source[k]).load(
        cuda::std::memory_order_relaxed);
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

/// `Readers`: the kernel with the file readers' phases (advance_readers, the page moves), compiled only for a
/// list that has a reader and launched only for a topology that has one: the other topologies' kernel carries
/// none of their code (its registers and spills stay as measured: 128, ~0.1 KB).
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
  // Each warp's clock as it reached the round's last barrier: compute ends at the latest arrival. Each
  // arrival is stored before the barrier, so the barrier orders it; a clock read after __syncthreads()
  // has no such order.
  __shared__ std::uint64_t arrived[32];
  constexpr std::uint32_t no_item = ~0u;

  const std::uint32_t warp = threadIdx.x / 32;
  const std::uint32_t lane_id = threadIdx.x % 32;
  std::byte* block_scratch = a.scratch + std::uint64_t{blockIdx.x} * a.scratch_per_block;
  block_heartbeat& heartbeat_word = a.heartbeats[blockIdx.x];
  lane_snapshot& snapshot = a.snapshots[blockIdx.x];

  if (threadIdx.x < a.item_count) lanes[threadIdx.x] = initial_lane(a, threadIdx.x);
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
  // --trace: thread 0 of every trace_every-th block records a busy round now and then (trace_gap_ns apart)
  // into its ring in pinned memory, each phase's start from %globaltimer.
  const bool traced = a.trace_rounds != nullptr && blockIdx.x % a.trace_every == 0;
  round_record* trace_ring =
      traced ? a.trace_rounds + std::uint64_t{blockIdx.x / a.trace_every} * a.trace_ring : nullptr;
  std::uint64_t traced_rounds = 0, last_traced_ns = 0;
  round_record record{};  // thread 0: the round being traced
  bool tracing_round = false, busy_round = false;
  if (traced && blockIdx.x == 0 && threadIdx.x == 0) store_relaxed(*a.trace_clock, global_ns());
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
      generation_word = cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(a.partition->generation)
                            .load(cuda::std::memory_order_relaxed);
      now = global_ns();
      tracing_round = traced && now - last_traced_ns >= a.trace_gap_ns;
      record.subscribe_ns = now;
    }
    // 1. subscribe: one leader-warp lane per work item, so their remote polls overlap.
    if (warp == 0 && lane_id < a.item_count) {
      lane_state& l = lanes[lane_id];
      subscribe_lane(a, l, blockIdx.x, lane_id, block_scratch, ops_closed);
      // The lane's item in the block's snapshot: if its operator never returns, the watchdog's dump names
      // the frame (device memory: one coalesced store per round, nothing over PCIe).
      device_store(snapshot.item[lane_id], l.item);
      device_store(snapshot.phase[lane_id], l.ready ? std::uint32_t{lane_running} : l.phase);
    }
    __syncwarp();
    // 1b. fetch: the file readers' stages (their time counts as subscribe's).
    if constexpr (Readers) {
      if (threadIdx.x == 0)
        advance_readers(a, lanes, blockIdx.x, device_dispatch<List>{a.params}, moves, fetched, timing.rounds);
      __syncwarp();  // the schedule's ballots read, in every lane of warp 0, the lanes this fetch advanced
    }
    const std::uint64_t t1 = clock64();
    if (tracing_round && threadIdx.x == 0) record.schedule_ns = global_ns();
    // 2. schedule. Warp 0's lanes ballot their items, all at once: thread 0 then walks only the items
    // that compute this round, mostly one or two of the eight a block holds with 3–4 GPU stages at 4 KiB
    // frames. (Walking every item, one shared-memory load chain after the other, took ~150 SM cycles an
    // item: 3–5 % of busy round time at 4 KiB with 3–4 stages on the H100.)
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
      place_round_warps(lanes, compute_items, blockDim.x / 32, a.spread_warps != 0);
      std::uint32_t placed = 0, stage = 0;
      for (std::uint32_t items = compute_items; items != 0; items &= items - 1) {
        const std::uint32_t s = __ffs(items) - 1;
        const lane_state& l = lanes[s];
        for (std::uint32_t w = l.round_first_warp; w < l.round_first_warp + l.round_warps; ++w)
          warp_item[w] = s;
        placed |= static_cast<std::uint32_t>(((std::uint64_t{1} << l.round_warps) - 1) << l.round_first_warp);
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
      if (ready) {
        ++timing.busy_rounds;
        timing.placed_warps += __popc(placed);
        timing.computed_items += __popc(compute_items);
      }
      busy_round = ready;
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
      if (lane_id == 0) arrived[warp] = clock64();
      __syncthreads();
      continue;
    }
    const std::uint64_t t3 = clock64();
    if (tracing_round && threadIdx.x == 0) record.compute_ns = global_ns();
    // 3. compute
    if (s != no_item) {
      lane_state& l = lanes[s];
      const kernel_op& op = a.ops[l.op];
      const std::uint32_t local = (warp - l.round_first_warp) * 32 + lane_id;
      const std::uint32_t local_threads = l.round_warps * 32;
      // The item's cost: this warp's own work (staging, the operator), not its waits at the barriers.
      std::uint64_t work = 0;
      if (any_stage & stage_input_bit) {
        const std::uint64_t w0 = clock64();
        if (op.stage) stage_copy(const_cast<std::byte*>(l.in), l.src, l.item_bytes, local, local_threads);
        work += clock64() - w0;
        __syncthreads();
      }
      file_cache_view cache;  // what the call's files point into, for a file reader's stage
      file_pages pages;
      const reader_lane* r = nullptr;
      if constexpr (Readers) {
        if (l.reader != reader_none) {
          r = &reader_of(a, blockIdx.x, s);
          cache = a.files;
          pages = file_pages::paged(&cache, &r->item, op.first_file);
        }
      }
      frame_call call = item_call(a, l, op, r, &pages);
      call.thread_id = local;
      call.thread_count = local_threads;
      call.failure = &l.failure;
      const std::uint64_t w1 = clock64();
      dispatch(List{}, op.type, op.element, a.params + op.params_offset, call);
      work += clock64() - w1;
      if (any_stage & stage_output_bit) {
        __syncthreads();  // the operator's threads may have written any of the item's bytes
        const std::uint64_t w2 = clock64();
        if (op.stage_output)
          stage_copy(l.dst, l.out, l.item_bytes * op.output_numerator / op.output_denominator, local,
                     local_threads);
        work += clock64() - w2;
      }
      // The partition's tuner compares operators' items at their own warps: a round spread over more warps
      // counts its work as the own warps would have taken it (the same work over fewer warps).
      if (l.round_warps != l.item_warps) work = work * l.round_warps / l.item_warps;
      if (lane_id == 0)
        atomicMax(&item_cycles[s], work < 0xffffffffu ? static_cast<std::uint32_t>(work) : 0xffffffffu);
    } else {
      if (any_stage & stage_input_bit) __syncthreads();
      if (any_stage & stage_output_bit) __syncthreads();
    }
    if (lane_id == 0) arrived[warp] = clock64();
    __syncthreads();
    const std::uint64_t t4 = warp == 0 ? last_arrival(arrived, lane_id) : 0;
    // 4. publish. A failed frame is not published: fail_item set device_abort, so the next round's
    // schedule stops every warp of every block at the same barrier.
    if (tracing_round && threadIdx.x == 0) record.publish_ns = global_ns();
    const std::uint64_t fence_cycles =
        warp == 0 ? publish_round(a, lanes, lane_id, item_cycles, op_cycles, op_items) : 0;
    if (threadIdx.x == 0) {
      timing.compute += t4 - t3;
      timing.publish += clock64() - t4;
      if (fence_cycles != 0) {
        timing.fence += fence_cycles;
        ++timing.fences;
      }
      if (tracing_round && busy_round) {
        record.end_ns = global_ns();
        last_traced_ns = record.end_ns;
        record.round = ++traced_rounds;
        round_record& r = trace_ring[(traced_rounds - 1) % a.trace_ring];
        r.subscribe_ns = record.subscribe_ns;
        r.schedule_ns = record.schedule_ns;
        r.compute_ns = record.compute_ns;
        r.publish_ns = record.publish_ns;
        r.end_ns = record.end_ns;
        store_relaxed(r.round, record.round);
      }
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
  frame_call call;
  call.in = f.in;
  call.out = f.out;
  call.bytes = f.bytes;
  call.offset = f.offset;
  call.thread_id = blockIdx.x * blockDim.x + threadIdx.x;
  call.thread_count = gridDim.x * blockDim.x;
  call.failure = f.failure;
  call.state = f.state;
  dispatch(List{}, f.type, f.element, f.params, call);
}

}  // namespace kernel_detail
}  // namespace xf
