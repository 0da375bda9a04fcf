// query: filter, project and aggregate a columnar topic on the GPU (a GPU sink). Each frame is walked by
// the pages of the query's narrowest column: for every row range that lies in one page of each column
// the query names, the index pages say whether a row there may match (zones, bloom filters), and only
// then are its data pages read — rows of a range that may not match are never touched, so with mapped
// transfer their pages never cross PCIe. Matching rows fold into the accumulator in device memory:
// aggregates (COUNT(*), SUM, MIN, MAX, optionally per group) or the projected rows; it comes back once,
// at the end, where finish() writes the result as CSV (or JSON for a .json path).
//
// Work split: a frame may be shared by several items (the kernel's blocks, when the topic holds fewer
// frames than it has blocks), each walking a contiguous share of its pages. Within an item, virtual
// threads form teams of up to 32 consecutive ids (a warp on the GPU); a team takes whole pages of the
// walking column and its members take consecutive rows, so their loads coalesce, and each member
// evaluates the index for the range it shares with its team (same addresses: one load). A member judges
// row_batch of its rows at once, a team's width apart, so that its loads overlap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "framework/core/exec_space.hpp"
#include "framework/core/system_atomic.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/olap/query_program.hpp"
#include "operators/olap/query_text.hpp"
#include "operators/sinks/result_file.hpp"

namespace xf {

struct query_op {
  static constexpr char class_name[] = "query";
  /// A columnar topic's frames are bytes (u8) to the dispatch: compiled once.
  static constexpr element_set elements{element_type::u8};

  /// Rows a member of a team judges at once (rows_match): four loads in flight a predicate term.
  static constexpr std::uint32_t row_batch = 4;

  static constexpr std::uint32_t bad_frame = 1;
  static constexpr std::uint32_t result_full = 2;
  static constexpr std::uint32_t groups_full = 3;

  struct params {
    olap::where_text where;
    olap::select_text select;
    olap::column_text group_by;
    path_text result;
    std::uint32_t max_rows = 1u << 20;
    std::uint32_t max_groups = 1024;
    olap::page_skip skip = olap::page_skip::blooms;
    olap::query_program program;  ///< compiled from the texts when the operator binds to its topic
  };

  /// The accumulator: this header, then the groups' table (group_by), or the projected rows.
  struct header {
    std::uint64_t rows_matched;
    std::uint64_t result_rows;  ///< projected rows taken, or groups claimed
    std::uint64_t frames;
    std::uint64_t rows_scanned;
    std::uint64_t pages_total[olap::max_slots];
    std::uint64_t pages_skipped[olap::max_slots];
    std::uint64_t values[olap::max_outputs];  ///< without group_by: integer sums, min/max keys
    double real_sums[olap::max_outputs];      ///< without group_by: floating sums
  };
  /// One group: its key (the column's value + 1; 0 while free), rows, and the aggregates.
  struct group_slot {
    std::uint64_t key;
    std::uint64_t rows;
    std::uint64_t values[olap::max_outputs];
    double real_sums[olap::max_outputs];
  };

  static void describe(operator_schema<params>& s);
  static const char* failure_reason(std::uint32_t code) {
    switch (code) {
      case bad_frame:
        return "the frame is not an indexed columnar frame of the topic's columns";
      case result_full:
        return "more matching rows than max_rows (raise it)";
      case groups_full:
        return "more groups than max_groups (raise it)";
      default:
        return nullptr;
    }
  }
  static std::optional<param_problem> bind(params& p, const topic_info& input) {
    auto problem = olap::compile_query(p.where.str(), p.select.str(), p.group_by.str(), input, p.program);
    p.program.skip = p.skip;
    return problem;
  }

  XF_HOST_DEVICE static bool projects(const params& p) {
    return p.program.output_count > 0 && p.program.outputs[0].kind == olap::output_kind::column &&
           !p.program.has_group;
  }
  /// Bytes of one projected row: frame offset, row, then each column's value (8 bytes a scalar, a
  /// character value rounded up to 8).
  XF_HOST_DEVICE static std::uint64_t record_bytes(const params& p) {
    std::uint64_t bytes = 16;
    for (std::uint32_t k = 0; k < p.program.output_count; ++k) {
      const column_layout& l = p.program.column_of(p.program.outputs[k].slot).layout;
      bytes += l.chars != 0 ? (l.chars + 7u) / 8u * 8u : 8u;
    }
    return bytes;
  }
  static std::uint64_t state_bytes(const params& p) {
    if (p.program.has_group) return sizeof(header) + std::uint64_t{p.max_groups} * sizeof(group_slot);
    if (projects(p)) return sizeof(header) + std::uint64_t{p.max_rows} * record_bytes(p);
    return sizeof(header);
  }
  /// The accumulator's bytes that hold a result: the header, and a projection's rows taken (the room
  /// for max_rows is mostly empty and stays on the device).
  static constexpr std::uint64_t state_head_bytes = sizeof(header);
  static std::uint64_t state_bytes_used(const params& p, std::span<const std::byte> head) {
    if (!projects(p)) return state_bytes(p);
    std::uint64_t taken;
    std::memcpy(&taken, head.data() + offsetof(header, result_rows), sizeof taken);
    return sizeof(header) + std::min<std::uint64_t>(taken, p.max_rows) * record_bytes(p);
  }
  static operator_counters finish(const params& p, std::span<const std::byte> state);
  /// The index pages, then each page of a named column that may hold a match (host code: the copy
  /// engines' selection; compute's row ranges lie inside these pages).
  static void pages_read(const params& p, const std::byte* frame, std::vector<frame_range>& out);
  /// Every page pages_read could keep: the index pages and the named columns' pages of the frame's rows.
  static void pages_bound(const params& p, const std::byte* frame, std::vector<frame_range>& out);

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    const olap::query_program& q = p.program;
    const auto* frame = reinterpret_cast<const std::byte*>(task.in);
    auto& head = *reinterpret_cast<header*>(task.state);
    const columnar_frame_header& h = columnar_header(frame);
    if (h.magic != columnar_magic || (h.flags & columnar_frame_header::index_valid) == 0 ||
        h.rows > q.frame.rows_per_frame || h.column_count != q.frame.column_count ||
        task.count * sizeof(T) < q.frame.frame_bytes()) {
      task.fail(bad_frame);
      return;
    }
    const std::uint32_t rows = h.rows;
    const std::uint32_t team_size = task.thread_count < 32 ? task.thread_count : 32;
    const std::uint32_t teams = task.thread_count / team_size;
    const std::uint32_t team = task.thread_id / team_size, lane = task.thread_id % team_size;
    if (team < teams) {
      folder f(p, task, head);
      if (q.slot_count == 0) {
        if (task.thread_id == 0 && task.part == 0) f.count = rows;
      } else {
        const std::uint32_t per_page = q.column_of(q.driving_slot).rows_per_page;
        const std::uint32_t pages = (rows + per_page - 1) / per_page;
        // This item's share of the frame's pages (the frame may be shared by task.parts items).
        const auto share_edge = [&](std::uint32_t part) {
          return static_cast<std::uint32_t>(std::uint64_t{pages} * part / task.parts);
        };
        const std::uint32_t end_page = share_edge(task.part + 1);
        for (std::uint32_t page = share_edge(task.part) + team; page < end_page && !f.failed; page += teams) {
          std::uint32_t r = page * per_page;
          const std::uint32_t end = rows - r < per_page ? rows : r + per_page;
          while (r < end && !f.failed) {
            const std::uint32_t next = olap::next_boundary(q, r, end);
            const bool may = olap::rows_may_match(q, frame, r, next);
            if (q.uniform_pages && lane == 0) count_page(q, may, head);
            if (may)
              for (std::uint32_t row = r + lane; row < next && !f.failed; row += team_size * row_batch) {
                const std::uint32_t hits = olap::rows_match<row_batch>(q, frame, row, team_size, next);
                for (std::uint32_t k = 0; k < row_batch && !f.failed; ++k)
                  if ((hits >> k) & 1u) f.take(frame, row + k * team_size);
              }
            r = next;
          }
        }
      }
      f.flush();
    }
    // With uniform pages the walk above counted them (a range is a page of each column); else every page
    // of every named column is judged on its own.
    if (!q.uniform_pages)
      count_pages(q, frame, rows, task.part, task.parts, task.thread_id, task.thread_count, head);
    if (task.thread_id == 0 && task.part == 0) {
      accumulator_atomic_ref<std::uint64_t>(head.frames).fetch_add(1, mo::memory_order_relaxed);
      accumulator_atomic_ref<std::uint64_t>(head.rows_scanned).fetch_add(rows, mo::memory_order_relaxed);
    }
  }

  /// Orders a value's bits so that unsigned comparison is the value's order (MIN/MAX keep keys).
  template <class V>
  XF_HOST_DEVICE static std::uint64_t order_key(V v) {
    if constexpr (std::is_floating_point_v<V>) {
      const double d = v == V(0) ? 0.0 : static_cast<double>(v);
      std::uint64_t bits;
      std::memcpy(&bits, &d, 8);
      return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
    } else if constexpr (std::is_signed_v<V>) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) ^ (std::uint64_t{1} << 63);
    } else {
      return static_cast<std::uint64_t>(v);
    }
  }

 private:
  XF_HOST_DEVICE static void atomic_max(std::uint64_t& word, std::uint64_t value) {
    accumulator_atomic_ref<std::uint64_t> ref(word);
    std::uint64_t seen = ref.load(mo::memory_order_relaxed);
    while (seen < value && !ref.compare_exchange_weak(seen, value, mo::memory_order_relaxed)) {
    }
  }

  /// A page of each named column (uniform pages: one row range of the walk), counted, and skipped unless
  /// it may match.
  XF_HOST_DEVICE static void count_page(const olap::query_program& q, bool may, header& head) {
    for (std::uint32_t s = 0; s < q.slot_count; ++s) {
      accumulator_atomic_ref<std::uint64_t>(head.pages_total[s]).fetch_add(1, mo::memory_order_relaxed);
      if (!may)
        accumulator_atomic_ref<std::uint64_t>(head.pages_skipped[s]).fetch_add(1, mo::memory_order_relaxed);
    }
  }

  /// Whether each page of each named column may hold a match, from the index: pages that may not are
  /// counted skipped (what the kernel reads by rows is a subset of what these pages hold). `thread` of
  /// `threads` of part `part` of the frame's `parts`.
  XF_HOST_DEVICE static void count_pages(const olap::query_program& q, const std::byte* frame,
                                         std::uint32_t rows, std::uint32_t part, std::uint32_t parts,
                                         std::uint32_t thread, std::uint32_t threads, header& head) {
    // Part p of the frame takes the p-th share of its pages in order, whatever its thread count: the
    // parts of one frame may run on different thread counts (other blocks, other rounds).
    std::uint64_t total = 0;
    for (std::uint32_t s = 0; s < q.slot_count; ++s) {
      const std::uint32_t per_page = q.column_of(s).rows_per_page;
      total += (rows + per_page - 1) / per_page;
    }
    const std::uint64_t first = total * part / parts, end = total * (part + 1) / parts;
    std::uint64_t index = 0;
    for (std::uint32_t s = 0; s < q.slot_count && index < end; ++s) {
      const std::uint32_t per_page = q.column_of(s).rows_per_page;
      const std::uint32_t pages = (rows + per_page - 1) / per_page;
      for (std::uint32_t page = 0; page < pages; ++page, ++index) {
        if (index < first || index >= end || (index - first) % threads != thread) continue;
        const std::uint32_t first_row = page * per_page;
        const std::uint32_t last = rows - first_row < per_page ? rows : first_row + per_page;
        accumulator_atomic_ref<std::uint64_t>(head.pages_total[s]).fetch_add(1, mo::memory_order_relaxed);
        if (!olap::rows_may_match(q, frame, first_row, last))
          accumulator_atomic_ref<std::uint64_t>(head.pages_skipped[s]).fetch_add(1, mo::memory_order_relaxed);
      }
    }
  }

  /// One virtual thread's fold over its rows: counts and aggregates kept locally and added to the
  /// accumulator once (without group_by); groups and projected rows go straight to it.
  template <class T>
  struct folder {
    const params& p;
    const frame_task<T>& task;
    header& head;
    std::uint64_t count = 0;
    std::uint64_t values[olap::max_outputs];
    double real_sums[olap::max_outputs];
    bool failed = false;

    XF_HOST_DEVICE folder(const params& params_, const frame_task<T>& task_, header& head_)
        : p(params_), task(task_), head(head_) {
      for (std::uint32_t k = 0; k < olap::max_outputs; ++k) {
        values[k] = 0;
        real_sums[k] = 0;
      }
    }

    /// Folds output k's column value at `row` into (value word, real sum).
    XF_HOST_DEVICE void fold(const std::byte* frame, std::uint32_t row, std::uint32_t k, std::uint64_t& word,
                             double& real, bool atomic) const {
      const olap::query_program& q = p.program;
      const olap::output_item& o = q.outputs[k];
      const std::byte* at = frame + q.frame.value_offset(q.slots[o.slot].column, row);
      visit_element(q.column_of(o.slot).layout.element, [&](auto zero) {
        using V = decltype(zero);
        V v;
        std::memcpy(&v, at, sizeof(V));
        if (o.kind == olap::output_kind::sum) {
          if constexpr (std::is_floating_point_v<V>) {
            if (atomic)
              accumulator_atomic_ref<double>(real).fetch_add(static_cast<double>(v),
                                                             mo::memory_order_relaxed);
            else
              real += static_cast<double>(v);
          } else {
            const auto add = static_cast<std::uint64_t>(
                static_cast<std::conditional_t<std::is_signed_v<V>, std::int64_t, std::uint64_t>>(v));
            if (atomic)
              accumulator_atomic_ref<std::uint64_t>(word).fetch_add(add, mo::memory_order_relaxed);
            else
              word += add;
          }
        } else if (o.kind == olap::output_kind::min || o.kind == olap::output_kind::max) {
          const std::uint64_t key = o.kind == olap::output_kind::min ? ~order_key(v) : order_key(v);
          if (atomic)
            atomic_max(word, key);
          else if (word < key)
            word = key;
        }
      });
    }

    XF_HOST_DEVICE void take(const std::byte* frame, std::uint32_t row) {
      const olap::query_program& q = p.program;
      if (q.has_group) return take_group(frame, row);
      if (projects(p)) return take_projected(frame, row);
      ++count;
      for (std::uint32_t k = 0; k < q.output_count; ++k)
        if (q.outputs[k].kind != olap::output_kind::count_rows)
          fold(frame, row, k, values[k], real_sums[k], false);
    }

    XF_HOST_DEVICE void take_group(const std::byte* frame, std::uint32_t row) {
      const olap::query_program& q = p.program;
      const std::byte* at = frame + q.frame.value_offset(q.slots[q.group_slot].column, row);
      std::uint64_t key = 0;  // the value as 0 … 2^32 − 1 in its order (columns of at most 32 bits)
      visit_element(q.column_of(q.group_slot).layout.element, [&](auto zero) {
        using V = decltype(zero);
        V v;
        std::memcpy(&v, at, sizeof(V));
        if constexpr (std::is_signed_v<V>)
          key = static_cast<std::uint64_t>(static_cast<std::int64_t>(v) + 0x80000000ll);
        else
          key = static_cast<std::uint64_t>(v);
      });
      auto* slots = reinterpret_cast<group_slot*>(task.state + sizeof(header));
      std::uint64_t i = (((key + 1) * 0x9e3779b97f4a7c15ull) >> 32) % p.max_groups;
      for (std::uint64_t probe = 0; probe < p.max_groups; ++probe, i = i + 1 == p.max_groups ? 0 : i + 1) {
        group_slot& s = slots[i];
        accumulator_atomic_ref<std::uint64_t> owner(s.key);
        std::uint64_t seen = owner.load(mo::memory_order_relaxed);
        if (seen == 0) {
          std::uint64_t expected = 0;
          if (owner.compare_exchange_strong(expected, key + 1, mo::memory_order_relaxed)) {
            accumulator_atomic_ref<std::uint64_t>(head.result_rows).fetch_add(1, mo::memory_order_relaxed);
            seen = key + 1;
          } else {
            seen = expected;
          }
        }
        if (seen == key + 1) {
          accumulator_atomic_ref<std::uint64_t>(s.rows).fetch_add(1, mo::memory_order_relaxed);
          accumulator_atomic_ref<std::uint64_t>(head.rows_matched).fetch_add(1, mo::memory_order_relaxed);
          for (std::uint32_t k = 0; k < q.output_count; ++k)
            if (q.outputs[k].kind != olap::output_kind::count_rows &&
                q.outputs[k].kind != olap::output_kind::column)
              fold(frame, row, k, s.values[k], s.real_sums[k], true);
          return;
        }
      }
      task.fail(groups_full);
      failed = true;
    }

    XF_HOST_DEVICE void take_projected(const std::byte* frame, std::uint32_t row) {
      const olap::query_program& q = p.program;
      const std::uint64_t at =
          accumulator_atomic_ref<std::uint64_t>(head.result_rows).fetch_add(1, mo::memory_order_relaxed);
      if (at >= p.max_rows) {
        task.fail(result_full);
        failed = true;
        return;
      }
      ++count;
      std::byte* record = task.state + sizeof(header) + at * record_bytes(p);
      std::memcpy(record, &task.offset, 8);
      std::memcpy(record + 8, &row, 4);
      std::byte* out = record + 16;
      for (std::uint32_t k = 0; k < q.output_count; ++k) {
        const column_layout& l = q.column_of(q.outputs[k].slot).layout;
        const std::uint32_t width = l.chars != 0 ? l.chars : static_cast<std::uint32_t>(size_of(l.element));
        const std::uint32_t room = l.chars != 0 ? (l.chars + 7u) / 8u * 8u : 8u;
        for (std::uint32_t b = 0; b < room; ++b) out[b] = std::byte{0};
        std::memcpy(out, frame + q.frame.value_offset(q.slots[q.outputs[k].slot].column, row), width);
        out += room;
      }
    }

    /// Adds this thread's fold to the accumulator.
    XF_HOST_DEVICE void flush() {
      const olap::query_program& q = p.program;
      if (q.has_group) return;
      if (count == 0) return;
      accumulator_atomic_ref<std::uint64_t>(head.rows_matched).fetch_add(count, mo::memory_order_relaxed);
      if (projects(p)) return;
      for (std::uint32_t k = 0; k < q.output_count; ++k) {
        const olap::output_item& o = q.outputs[k];
        if (o.kind == olap::output_kind::sum) {
          accumulator_atomic_ref<std::uint64_t>(head.values[k])
              .fetch_add(values[k], mo::memory_order_relaxed);
          if (real_sums[k] != 0)
            accumulator_atomic_ref<double>(head.real_sums[k])
                .fetch_add(real_sums[k], mo::memory_order_relaxed);
        } else if (o.kind == olap::output_kind::min || o.kind == olap::output_kind::max) {
          atomic_max(head.values[k], values[k]);
        }
      }
    }
  };
};

}  // namespace xf
