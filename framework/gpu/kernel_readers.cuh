// The virtualised kernel's file readers (issue 6): included by fused_kernel.cuh, whose round it extends.
//
// A file reader's work item (a lane in `lane_reading`) runs in stages over several rounds. Each round:
//   - fetch (thread 0, after subscribe): for each reading lane of the block, in turn — the block's
//     fetch_block has one owner — release the pages of the stage computed last round, ask the operator's
//     `reads` for the next stage's ranges (or learn the item is done: publish it this round), and step
//     the fetch (file_fetch.hpp). Nothing waits: pages not resident yet are asked for and looked at again
//     next round, while the block's other lanes run.
//   - moves (every thread, after the schedule's barrier): the bytes the fetch queued (deferred_moves) are
//     copied with wide loads — out of pinned staging over PCIe, or out of the block's readahead buffer —
//     then thread 0 finishes the pages' loads.
//   - compute: a lane whose stage resolved runs the operator over the stage's pages (task.files).
// A file source's lane has no input: it claims runs of offsets of its output topic (readahead stays
// within the run), reserves each offset's output slot, and publishes it once its stages are done.
#pragma once

#include <cuda/atomic>

#include <cstdint>

#include "framework/files/file_api.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/files/page_moves.hpp"
#include "framework/gpu/block_moves.cuh"
#include "framework/kernel/kernel_catalog.hpp"

namespace xf {
namespace kernel_detail {

__device__ __forceinline__ reader_lane& reader_of(const kernel_args& a, std::uint32_t lane) {
  return a.readers[std::uint64_t{blockIdx.x} * a.item_count + lane];
}

/// The subscribing lane starts a reader's item at stage 0 with a zero carry.
__device__ __forceinline__ void start_reading(const kernel_args& a, lane_state& l, std::uint32_t lane, bool source) {
  reader_lane& r = reader_of(a, lane);
  r.stage = 0;
  r.fetching = 0;
  r.computed = 0;
  r.fresh = source ? 1u : 0u;
  auto* carry = reinterpret_cast<uint4*>(r.carry);
  for (std::uint32_t i = 0; i < sizeof(r.carry) / sizeof(uint4); ++i) carry[i] = uint4{0, 0, 0, 0};
  l.phase = lane_reading;
}

/// Subscribe step of a file source's lane: claim a run of offsets when the last one is used up (none once
/// the stream's frames are all claimed, or the run drains: the lane is done and the block closes the
/// output with one past the last offset it published), then wait for the next offset's output slot.
__device__ void subscribe_source(const kernel_args& a, lane_state& l, std::uint32_t lane) {
  const kernel_op& op = a.ops[l.op];
  const topic_view& vo = a.topics[op.output];
  reader_lane& r = reader_of(a, lane);
  if (l.phase == lane_idle) {
    if (r.next == r.run_end) {
      const bool draining =
          cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(*a.drain).load(cuda::std::memory_order_relaxed) != 0;
      const std::uint64_t first = draining ? op.source_frames : vo.claim_offsets(op.source_run);
      if (first >= op.source_frames) {
        l.phase = lane_done;
        vo.close(r.published_end);
        return;
      }
      r.next = first;
      r.run_end = first + op.source_run < op.source_frames ? first + op.source_run : op.source_frames;
      r.run_limit_pending = 1;
    }
    l.item = r.next++;
    l.phase = lane_wait_output;
  }
  if (l.phase != lane_wait_output || !vo.slot_free(l.item)) return;  // backpressure: a later round
  l.is_void = 0;
  l.first = 0;
  l.src = nullptr;
  l.in = nullptr;
  l.dst = vo.frame_data(vo.slot_frame(l.item));
  l.out = l.dst;
  l.tag = l.item;
  l.born_ns = 0;  // the kernel's clock is not the host's: no latency is measured from a GPU source
  l.failure = 0;
  start_reading(a, l, lane, true);
}

/// The frame_call of a reader lane's `reads` and compute (files: the stage's pages, or null for reads).
__device__ __forceinline__ frame_call reader_call(const kernel_args& a, const lane_state& l, const kernel_op& op,
                                                  reader_lane& r, const file_pages* files) {
  frame_call c{a.params + op.params_offset, l.in, l.out, l.item_bytes, 0, l.item, 0, 1, nullptr, nullptr};
  c.files = files;
  c.stage = r.stage;
  c.carry = r.carry;
  c.file_sizes = a.files.file_size + op.first_file;
  c.out_capacity = op.output != no_output_topic ? a.topics[op.output].frame_bytes : 0;
  return c;
}

/// A file source's new frame: its bytes, its output slot's fields (ordered before the publish by the
/// publish phase's fence), and for a new run, where the run's readahead stops: the end of the last range
/// the run's last frame reads at stage 0 (reads is a pure function of the frame).
template <class List>
__device__ void start_source_frame(const kernel_args& a, lane_state& l, const kernel_op& op, reader_lane& r) {
  const topic_view& vo = a.topics[op.output];
  frame_call c = reader_call(a, l, op, r, nullptr);
  l.bytes = dispatch_frame_bytes(List{}, op.type, c);
  l.item_bytes = l.bytes;
  vo.prepare_slot(l.item, vo.slot_frame(l.item), l.bytes, l.item);
  if (r.run_limit_pending) {
    r.run_limit_pending = 0;
    r.ahead_limit_file = ~std::uint32_t{0};
    r.ahead_end_page = 0;
    alignas(16) std::byte zero_carry[frame_task<std::uint32_t>::carry_bytes] = {};
    c.offset = r.run_end - 1;
    c.bytes = dispatch_frame_bytes(List{}, op.type, c);
    c.stage = 0;
    c.carry = zero_carry;
    read_list list;
    if (dispatch_reads(List{}, op.type, op.element, c, list) == read_step::more && list.size() > 0) {
      const file_range& last = list[list.size() - 1];
      r.ahead_limit_file = last.file + op.first_file;
      r.ahead_end_page = (last.offset + last.bytes + a.files.page_bytes() - 1) >> a.files.page_shift;
    }
  }
  r.fresh = 0;
}

/// The fetch phase (thread 0): advances every reading lane of the block as far as its pages allow; see
/// the top of this file. Failures are reported (the run ends) with the operator and offset.
template <class List>
__device__ void fetch_readers(const kernel_args& a, lane_state* lanes, deferred_moves& moves,
                              fetch_counters& counters, std::uint64_t round) {
  fetch_block& block = a.fetch_blocks[blockIdx.x];
  // The lanes take turns at going first: readers sharing the block's request slots and readahead buffer
  // (a fill waits for a round in which no page was taken from the buffer before it) all get their turn.
  const auto first = static_cast<std::uint32_t>(round % a.item_count);
  for (std::uint32_t n = 0; n < a.item_count; ++n) {
    const std::uint32_t s = first + n < a.item_count ? first + n : first + n - a.item_count;
    lane_state& l = lanes[s];
    if (l.phase != lane_reading) continue;
    const kernel_op& op = a.ops[l.op];
    reader_lane& r = reader_of(a, s);
    const std::uint64_t offset = l.item;  // readers run whole frames
    l.compute = 0;
    if (r.fresh) start_source_frame<List>(a, l, op, r);
    if (r.computed) {  // last round computed the stage over its pages
      fetch_release(a.files, r.item);
      r.computed = 0;
      r.fetching = 0;
      ++r.stage;
    }
    if (!r.fetching) {
      read_list list;
      const read_step step = dispatch_reads(List{}, op.type, op.element, reader_call(a, l, op, r, nullptr), list);
      if (step == read_step::done) {
        l.ready = 1;  // every stage ran: published this round
        continue;
      }
      if (list.overflowed()) {
        report_failure(a, fault_read_list, l.op, offset, 0, {}, r.stage);
        continue;
      }
      list.shift_files(op.first_file);
      const range_check check = check_ranges(list, a.files.file_size, op.first_file, op.file_count);
      if (check.problem != range_problem::none) {
        report_failure(a, fault_read_range, l.op, offset, 0, list[check.index], static_cast<std::uint32_t>(check.problem));
        continue;
      }
      std::uint64_t pages = 0;
      for (std::uint32_t i = 0; i < list.size(); ++i) pages += fetch_item::pages_in(list[i], a.files.page_shift);
      const std::uint32_t room = a.block_room < a.entries_per_lane ? a.block_room : a.entries_per_lane;
      if (pages > room) {  // it would never resolve
        report_failure(a, fault_stage_pages, l.op, offset, pages, file_range{0, 0, room}, r.stage);
        continue;
      }
      r.item.begin(list.data(), list.size(),
                   a.reader_entries + (std::uint64_t{blockIdx.x} * a.item_count + s) * a.entries_per_lane,
                   a.files.page_shift);
      if (op.reader == reader_source) {
        r.item.ahead_limit_file = r.ahead_limit_file;
        r.item.ahead_end_page = r.ahead_end_page;
      }
      r.fetching = 1;
    }
    const fetch_status status = fetch_step(a.files, block, r.item, l.op, offset, counters, moves);
    if (status == fetch_status::resolved) {
      l.compute = 1;
      r.computed = 1;
    } else if (status == fetch_status::failed) {
      report_failure(a, fault_read_failed, l.op, offset, 0, {}, r.stage);
    }
  }
}

}  // namespace kernel_detail
}  // namespace xf
