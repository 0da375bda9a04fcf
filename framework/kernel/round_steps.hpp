// The virtualised kernel's round, written once: the per-lane steps that both drivers run — the device's
// persistent kernel (framework/gpu/persistent_kernel.cuh: warp 0's lanes at once, ballots, one fence per
// round) and the host executor's blocks (framework/runtime/host_kernel_executor.cpp: one thread a block,
// lanes in turn). The host executor is therefore an oracle for the device: the same topology gives the
// same per-offset results on both.
//
// A round of one block, for each lane (work item) of its operators:
//   1. subscribe_lane   — take an offset from the operator's subscriber group and poll its input; once
//                         published, reserve the output slot (backpressure waits for a later round), read
//                         the input slot, bound the item's part and prepare the output slot's fields. A file
//                         source's lane claims runs of offsets instead and reserves each offset's slot.
//   2. advance_readers  — file readers only: release the pages of the stage computed last round, ask the
//                         operator's `reads` for the next stage, step the fetch (never waiting).
//      place_round_warps — the warps each computing item runs on this round: its own (the partition's), or,
//                         spreading, all of the block's shared among the items that compute.
//   3. compute          — the driver runs the operator's virtual threads over the item (frame_call).
//   4. finish_item      — a failed item fails the run (fail_item); a part counts towards its frame; the
//                         lane that finishes a frame publishes it —
//   5. publish_item     — commit the output at the input's offset (after the driver's one release fence
//                         on the GPU, with release stores on the host), release the input, count the
//                         frame; retire_item returns the lane to idle.
// Nothing in a round waits: an item that is not ready waits for a later round, so blocks that feed each
// other through topics never deadlock.
//
// `Dispatch` gives a file reader's `reads` and a file source's `frame_bytes` for kernel operator k:
//   read_step reads(const kernel_op&, std::uint32_t k, const frame_call&, read_list&) const;
//   std::uint64_t frame_bytes(const kernel_op&, std::uint32_t k, const frame_call&) const;
// (static dispatch over the fused kernel's type list on the GPU, host_kernel_op on the host).
#pragma once

#include <bit>
#include <cstdint>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"
#include "framework/files/file_api.hpp"
#include "framework/files/file_fetch.hpp"
#include "framework/kernel/kernel_catalog.hpp"
#include "framework/model/operator.hpp"
#include "topics/topic_view.hpp"

namespace xf {

/// Polls that find an input pending between two reads of the topic's end word (a remote read each).
inline constexpr std::uint32_t end_check_interval = 8;

/// A file reader's state for lane `lane` of block `block`.
XF_HOST_DEVICE XF_FORCE_INLINE reader_lane& reader_of(const kernel_args& a, std::uint32_t block,
                                                      std::uint32_t lane) {
  return a.readers[std::uint64_t{block} * a.item_count + lane];
}

/// Fails the run: the first failure of any block is recorded (operator, offset, what), and every block
/// stops at its next round. `range` and `problem`: a file reader's (kernel_failure).
XF_HOST_DEVICE inline void fail_item(const kernel_args& a, std::uint32_t kind, std::uint32_t op,
                                     std::uint64_t offset, std::uint64_t detail, file_range range = {},
                                     std::uint32_t problem = 0) {
  kernel_atomic_ref<std::uint32_t> claim(*a.fail_claim);
  std::uint32_t expected = 0;
  if (claim.compare_exchange_strong(expected, 1u, mo::memory_order_relaxed)) {
    a.failure->kind = kind;
    a.failure->op = op;
    a.failure->offset = offset;
    a.failure->detail = detail;
    a.failure->range = range;
    a.failure->problem = problem;
    store_release(a.failure->failed, std::uint64_t{1});  // the fields above before the flag
  }
  kernel_atomic_ref<std::uint32_t>(*a.device_abort).store(1u, mo::memory_order_relaxed);
}

/// The lanes of a block at the start of a run: lane s serves the operator whose items include s.
XF_HOST_DEVICE inline lane_state initial_lane(const kernel_args& a, std::uint32_t s) {
  lane_state l{};
  for (std::uint32_t k = 0; k < a.op_count; ++k) {
    const kernel_op& op = a.ops[k];
    if (s >= op.first_item && s < op.first_item + op.items) {
      l.op = k;
      l.index = s - op.first_item;
      item_warp_range(op.first_warp, op.warps, op.items, l.index, &l.first_warp, &l.item_warps);
      l.stage_bits = (op.stage ? stage_input_bit : 0u) | (op.stage_output ? stage_output_bit : 0u);
      l.reader = op.reader;
    }
  }
  l.phase = lane_idle;
  return l;
}

/// The subscribing lane starts a reader's item at stage 0 with a zero carry.
XF_HOST_DEVICE XF_FORCE_INLINE void start_reading(lane_state& l, reader_lane& r, bool source) {
  r.stage = 0;
  r.fetching = 0;
  r.computed = 0;
  r.fresh = source ? 1u : 0u;
  for (std::byte& b : r.carry) b = std::byte{0};
  l.phase = lane_reading;
}

/// Subscribe step of a file source's lane: claim a run of offsets when the last one is used up (none once
/// the stream's frames are all claimed, or the run drains: the lane is done and the block closes the
/// output with one past the last offset it published), then wait for the next offset's output slot.
XF_HOST_DEVICE inline void subscribe_source(const kernel_args& a, lane_state& l, reader_lane& r) {
  const kernel_op& op = a.ops[l.op];
  const topic_view& vo = a.topics[op.output];
  if (l.phase == lane_idle) {
    if (r.next == r.run_end) {
      const bool draining = kernel_atomic_ref<std::uint32_t>(*a.drain).load(mo::memory_order_relaxed) != 0;
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
  start_reading(l, r, true);
}

/// The versions of its operator's shared objects the lane's item at `offset` reads (item_context::objects):
/// those it resolved last when `offset` lies where they hold, else the version tables' (a read of host
/// memory each, over PCIe from the GPU). False while a writer has not made the version final: the lane looks
/// again in a later round.
XF_HOST_DEVICE inline bool resolve_objects(const kernel_args& a, const kernel_op& op, lane_state& l,
                                           std::uint64_t offset) {
  if (offset >= l.object_lo && offset < l.object_hi) return true;
  std::uint64_t lo = 0, hi = ~std::uint64_t{0};
  for (std::uint32_t i = 0; i < op.object_count; ++i) {
    if (op.objects[i] == no_kernel_object) {
      l.object_data[i] = nullptr;
      continue;
    }
    const shared::version_table_view& v = a.objects[op.objects[i]];
    const std::uint64_t horizon = v.horizon();
    if (offset >= horizon) return false;
    const shared::version_table_view::choice c = v.choose(offset, horizon);
    l.object_data[i] = v.data(c.buffer);
    v.saw(v.number(c.buffer));
    lo = c.first > lo ? c.first : lo;
    hi = c.next < hi ? c.next : hi;
  }
  l.object_lo = lo;
  l.object_hi = hi;
  return true;
}

/// Subscribe step of lane `lane` of block `block`: take and poll, then reserve the output. `ops_closed[k]`
/// counts the block's lanes of operator k that saw the end of its input: the last one closes the output,
/// so each block closes each output once, as the topic's publisher count expects. `block_scratch`: the
/// block's staging areas (null where no operator stages).
XF_HOST_DEVICE inline void subscribe_lane(const kernel_args& a, lane_state& l, std::uint32_t block,
                                          std::uint32_t lane, std::byte* block_scratch,
                                          std::uint32_t* ops_closed) {
  l.ready = 0;
  l.compute = 0;
  // A file reader's item in its stages is advanced by advance_readers.
  if (l.phase == lane_done || l.phase == lane_reading) return;
  const kernel_op& op = a.ops[l.op];
  if (op.input == no_input_topic) {
    subscribe_source(a, l, reader_of(a, block, lane));
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
  if (l.phase == lane_wait_input || l.phase == lane_wait_version) {
    if (l.skip != 0) {
      --l.skip;
      return;
    }
  }
  if (l.phase == lane_wait_input) {
    if (!vi.published(offset)) {
      // Each poll of a host-resident slot is a PCIe read: a lane whose input keeps lagging polls less
      // often (every 1, 2, 4 … up to poll_skip_max rounds), so idle lanes leave the link to the data.
      const std::uint32_t exponent = l.misses / 4 < 5 ? l.misses / 4 : 5;
      l.skip = ((1u << exponent) - 1) < a.poll_skip_max ? (1u << exponent) - 1 : a.poll_skip_max;
      // Pending, or past the end. The end word is stored after every publish below it, so reading it
      // after a pending seq is exact; it is read only every few misses (it is a remote load).
      if (++l.misses % end_check_interval == 0 && offset >= vi.end()) {
        l.phase = lane_done;
        const std::uint32_t closed =
            kernel_atomic_ref<std::uint32_t>(ops_closed[l.op]).fetch_add(1u, mo::memory_order_relaxed);
        if (closed + 1 == op.items && vo != nullptr) vo->close(vi.end());
      }
      return;
    }
    l.phase = op.object_count != 0 ? lane_wait_version : lane_wait_output;
  }
  if (l.phase == lane_wait_version) {
    if (!resolve_objects(a, op, l, offset)) {
      l.skip = a.poll_skip_max;  // each look at a horizon is a read of host memory
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
  if (!l.is_void && vo != nullptr &&
      l.bytes * op.output_numerator / op.output_denominator > vo->frame_bytes) {
    fail_item(a, fault_bad_bytes, l.op, offset, l.bytes);
    return;
  }
  l.item_bytes = 0;
  if (!l.is_void) {
    l.first = op.shares ? 0 : (l.item % op.parts) * op.part_bytes;
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
  // The output slot is ours (slot_free): its fields are prepared now and committed by publish_item,
  // after the driver's release fence.
  if (l.is_void)
    vo->prepare_void(offset);
  else
    vo->prepare_slot(offset, vo->slot_frame(offset), l.bytes * op.output_numerator / op.output_denominator,
                     l.tag, 0, l.born_ns);
  if (op.reader != reader_none && !l.is_void) {
    start_reading(l, reader_of(a, block, lane), false);  // its stages run from the next advance_readers on
    return;
  }
  l.ready = 1;
  l.compute = 1;
}

/// The index of the lowest set bit of a non-zero mask.
XF_HOST_DEVICE XF_FORCE_INLINE std::uint32_t lowest_bit(std::uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__ffs(static_cast<int>(mask)) - 1);
#else
  return static_cast<std::uint32_t>(std::countr_zero(mask));
#endif
}

/// The warps each item of `computing` (a bit per lane) runs on this round: round_first_warp, round_warps.
/// An item has its own warps, the partition's. A block holds one item per operator (or a few), and in a
/// round only the items whose input arrived compute: with many operators on one topic (sibling queries) a
/// busy round may run 1-3 items on a sixth of the block's warps while the others wait at the barrier.
/// Spreading, such a round gives every one of the block's `block_warps` warps to the computing items, in
/// proportion to their own warps (the partition's ratios hold) and never fewer than their own, each a
/// contiguous range in lane order. Operators take any thread count (their loops stride by it), and an
/// item's warps may differ from one round to the next.
XF_HOST_DEVICE inline void place_round_warps(lane_state* lanes, std::uint32_t computing,
                                             std::uint32_t block_warps, bool spread) {
  std::uint32_t own = 0;
  for (std::uint32_t items = computing; items != 0; items &= items - 1) {
    lane_state& l = lanes[lowest_bit(items)];
    l.round_first_warp = l.first_warp;
    l.round_warps = l.item_warps;
    own += l.item_warps;
  }
  if (!spread || own == 0 || own >= block_warps) return;
  std::uint32_t given = 0;
  for (std::uint32_t items = computing; items != 0; items &= items - 1)
    given += block_warps * lanes[lowest_bit(items)].item_warps / own;
  std::uint32_t extra = block_warps - given, next = 0;  // the floors' remainder: one more to the first items
  for (std::uint32_t items = computing; items != 0; items &= items - 1) {
    lane_state& l = lanes[lowest_bit(items)];
    l.round_first_warp = next;
    l.round_warps = block_warps * l.item_warps / own + (extra != 0 ? 1u : 0u);
    extra -= extra != 0 ? 1u : 0u;
    next += l.round_warps;
  }
}

/// The frame_call of a lane's item (without thread ids, failure word and sink state, which the driver
/// sets): for a file reader's lane, its stage, carry and files' sizes (files: the stage's pages, or null).
XF_HOST_DEVICE inline frame_call item_call(const kernel_args& a, const lane_state& l, const kernel_op& op,
                                           const reader_lane* r, const file_pages* files) {
  frame_call c;
  c.in = l.in;
  c.out = l.out;
  c.bytes = l.item_bytes;
  c.first_byte = l.first;
  c.offset = l.item / op.parts;
  c.part = static_cast<std::uint32_t>(l.item % op.parts);
  c.parts = op.parts;
  c.state = op.state;
  if (r != nullptr) {
    c.files = files;
    c.stage = r->stage;
    c.carry = const_cast<std::byte*>(r->carry);
    c.file_sizes = a.files.file_size + op.first_file;
  }
  c.out_capacity = op.output != no_output_topic ? a.topics[op.output].frame_bytes : 0;
  c.objects = op.object_count != 0 ? l.object_data : nullptr;
  return c;
}

/// A file source's new frame: its bytes, its output slot's fields (committed by publish_item after the
/// driver's fence), and for a new run, where the run's readahead stops: the end of the last range the
/// run's last frame reads at stage 0 (reads is a pure function of the frame).
XF_EXEC_CHECK_DISABLE
template <class Dispatch>
XF_HOST_DEVICE void start_source_frame(const kernel_args& a, lane_state& l, std::uint32_t k, reader_lane& r,
                                       const Dispatch& dispatch) {
  const kernel_op& op = a.ops[k];
  const topic_view& vo = a.topics[op.output];
  frame_call c = item_call(a, l, op, &r, nullptr);
  l.bytes = dispatch.frame_bytes(op, k, c);
  l.item_bytes = l.bytes;
  vo.prepare_slot(l.item, vo.slot_frame(l.item), l.bytes, l.item);
  if (r.run_limit_pending) {
    r.run_limit_pending = 0;
    r.ahead_limit_file = ~std::uint32_t{0};
    r.ahead_end_page = 0;
    alignas(16) std::byte zero_carry[frame_task<std::uint32_t>::carry_bytes] = {};
    c.offset = r.run_end - 1;
    c.bytes = dispatch.frame_bytes(op, k, c);
    c.stage = 0;
    c.carry = zero_carry;
    read_list list;
    if (dispatch.reads(op, k, c, list) == read_step::more && list.size() > 0) {
      const file_range& last = list[list.size() - 1];
      r.ahead_limit_file = last.file + op.first_file;
      r.ahead_end_page = (last.offset + last.bytes + a.files.page_bytes() - 1) >> a.files.page_shift;
    }
  }
  r.fresh = 0;
}

/// Advances every reading lane of block `block` as far as its pages allow (one thread of the block): for
/// each, release the pages of the stage computed last round, ask the operator's `reads` for the next
/// stage's ranges (or learn the item is done: published this round), and step the fetch. Nothing waits:
/// pages not resident yet are asked for and looked at again next round, while the block's other lanes
/// run. `moves` moves the bytes (page_moves.hpp: at once on the host, queued for the block on the GPU).
XF_EXEC_CHECK_DISABLE
template <class Dispatch, class Moves>
XF_HOST_DEVICE void advance_readers(const kernel_args& a, lane_state* lanes, std::uint32_t block,
                                    const Dispatch& dispatch, Moves& moves, fetch_counters& counters,
                                    std::uint64_t round) {
  fetch_block& share = a.fetch_blocks[block];
  // The lanes take turns at going first: readers sharing the block's request slots and readahead buffer
  // (a fill waits for a round in which no page was taken from the buffer before it) all get their turn.
  const auto first = static_cast<std::uint32_t>(round % a.item_count);
  for (std::uint32_t n = 0; n < a.item_count; ++n) {
    const std::uint32_t s = first + n < a.item_count ? first + n : first + n - a.item_count;
    lane_state& l = lanes[s];
    if (l.phase != lane_reading) continue;
    const kernel_op& op = a.ops[l.op];
    reader_lane& r = reader_of(a, block, s);
    const std::uint64_t offset = l.item;  // readers run whole frames
    l.compute = 0;
    if (r.fresh) start_source_frame(a, l, l.op, r, dispatch);
    if (r.computed) {  // last round computed the stage over its pages
      fetch_release(a.files, r.item);
      r.computed = 0;
      r.fetching = 0;
      ++r.stage;
    }
    if (!r.fetching) {
      read_list list;
      const read_step step = dispatch.reads(op, l.op, item_call(a, l, op, &r, nullptr), list);
      if (step == read_step::done) {
        l.ready = 1;  // every stage ran: published this round
        continue;
      }
      if (list.overflowed()) {
        fail_item(a, fault_read_list, l.op, offset, 0, {}, r.stage);
        continue;
      }
      list.shift_files(op.first_file);
      const range_check check = check_ranges(list, a.files.file_size, op.first_file, op.file_count);
      if (check.problem != range_problem::none) {
        fail_item(a, fault_read_range, l.op, offset, 0, list[check.index],
                  static_cast<std::uint32_t>(check.problem));
        continue;
      }
      std::uint64_t pages = 0;
      for (std::uint32_t i = 0; i < list.size(); ++i)
        pages += fetch_item::pages_in(list[i], a.files.page_shift);
      const std::uint32_t room = a.block_room < a.entries_per_lane ? a.block_room : a.entries_per_lane;
      if (pages > room) {  // it would never resolve
        fail_item(a, fault_stage_pages, l.op, offset, pages, file_range{0, 0, room}, r.stage);
        continue;
      }
      r.item.begin(list.data(), list.size(),
                   a.reader_entries + (std::uint64_t{block} * a.item_count + s) * a.entries_per_lane,
                   a.files.page_shift);
      if (op.reader == reader_source) {
        r.item.ahead_limit_file = r.ahead_limit_file;
        r.item.ahead_end_page = r.ahead_end_page;
      }
      r.fetching = 1;
    }
    const fetch_status status = fetch_step(a.files, share, r.item, l.op, offset, counters, moves);
    if (status == fetch_status::resolved) {
      l.compute = 1;
      r.computed = 1;
    } else if (status == fetch_status::failed) {
      fail_item(a, fault_read_failed, l.op, offset, 0, {}, r.stage);
    }
  }
}

/// After compute, for lane `lane`: a file reader's stage that failed fails the run; a finished item
/// that failed fails the run; otherwise a part counts towards its frame. Returns whether this lane
/// publishes its frame this round (the last part finished) — publish_item, after the driver's fence.
XF_HOST_DEVICE inline bool finish_item(const kernel_args& a, lane_state& l) {
  // A file reader's stage computed this round: a failure is the frame's (it is published in a later
  // round, if at all).
  if (l.reader != reader_none && l.compute && l.failure != 0)
    fail_item(a, fault_frame_failed, l.op, l.item, failure_code(l.failure));
  if (!l.ready) return false;
  const kernel_op& op = a.ops[l.op];
  const std::uint64_t offset = l.item / op.parts;
  if (offset == op.inject_fail_at && !l.is_void) {
    fail_item(a, fault_injected, l.op, offset, 0);
    return false;
  }
  if (l.failure != 0) {
    fail_item(a, fault_frame_failed, l.op, offset, failure_code(l.failure));
    return false;
  }
  if (op.parts == 1) return true;
  // acq_rel: this block's (fenced) writes of its part happen before the last finisher's publish.
  const topic_view& vi = a.topics[op.input];
  kernel_atomic_ref<std::uint32_t> done(op.parts_done[vi.slot_of(offset)]);
  const bool last = done.fetch_add(1u, mo::memory_order_acq_rel) + 1 == op.parts;
  if (last) done.store(0u, mo::memory_order_relaxed);  // before the release below reuses it
  return last;
}

/// How publish_item orders its stores: `fenced` — the driver issued one release fence for the round's
/// publishes (the GPU: a system-scope fence is a PCIe round trip, one a round instead of one a store), so
/// relaxed stores suffice; `release` — each store is a release (the host: free on x86, and what
/// ThreadSanitizer can see; it does not model fences).
enum class publish_order : std::uint8_t { fenced, release };

/// Publishes lane `lane`'s finished frame: commits the output at the input's offset, releases the input,
/// and counts the frame. The order (see publish_order) puts the frame's bytes, the slot fields prepared at
/// subscribe and the block's reads of its input before these stores.
XF_HOST_DEVICE inline void publish_item(const kernel_args& a, const lane_state& l, std::uint32_t block,
                                        std::uint32_t lane, publish_order order) {
  const kernel_op& op = a.ops[l.op];
  const std::uint64_t offset = l.item / op.parts;
  if (op.output != no_output_topic) {
    if (order == publish_order::fenced)
      a.topics[op.output].commit_relaxed(offset);
    else
      a.topics[op.output].commit(offset);
  }
  if (op.input != no_input_topic) {
    if (order == publish_order::fenced)
      a.topics[op.input].release_relaxed(op.group, offset);
    else
      a.topics[op.input].release(op.group, offset);
  } else
    reader_of(a, block, lane).published_end = offset + 1;  // a file source closes its output with it
  if (!l.is_void) {
    kernel_atomic_ref<std::uint64_t>(a.counters[l.op].frames).fetch_add(1u, mo::memory_order_relaxed);
    kernel_atomic_ref<std::uint64_t>(a.counters[l.op].bytes).fetch_add(l.bytes, mo::memory_order_relaxed);
  }
}

/// A lane whose item was finished (published, or one part of a frame counted) holds no item any more.
XF_HOST_DEVICE XF_FORCE_INLINE void retire_item(lane_state& l) {
  l.phase = lane_idle;
  l.ready = 0;
}

}  // namespace xf
