// A GPU operator's compute, reads and contract as host code calls them: the host executor's blocks (the
// same round as the kernel's, framework/kernel/round_steps.hpp), the reference chain and the adapters that
// place a GPU operator `on: cpu`. Made by the registry (registry.hpp) from the operator's type.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "framework/core/frame.hpp"
#include "framework/files/file_api.hpp"
#include "framework/files/file_list.hpp"
#include "framework/model/operator.hpp"

namespace xf {

/// The frame_call of a whole frame: `in` (null data for a file source), `out` (null for a sink), one
/// virtual thread. `reading`: a file reader's stage fields (files, stage, carry, file_sizes), else null.
inline frame_call whole_frame_call(const frame_in& in, const frame_out* out, std::uint64_t offset) {
  frame_call c;
  c.in = in.data;
  c.out = out != nullptr ? out->data : nullptr;
  c.bytes = in.data != nullptr ? in.bytes : out != nullptr ? out->bytes : 0;
  c.offset = offset;
  c.out_capacity = out != nullptr ? out->capacity : 0;
  return c;
}

/// A GPU operator as host code calls it. Const and thread-safe: every host block calls it concurrently
/// (a sink's accumulator is updated with atomics, as on the GPU).
class host_kernel_op {
 public:
  virtual ~host_kernel_op() = default;
  /// Runs virtual threads [thread_begin, thread_end) of call.thread_count over the item `call` describes,
  /// elements of type `element` (a warp's lanes, in kernel terms). A failure is recorded in
  /// *call.failure, as frame_task::fail does on the GPU; a GPU sink folds into its own accumulator.
  virtual void run(const frame_call& call, element_type element, std::uint32_t thread_begin,
                   std::uint32_t thread_end) const = 0;
  /// File readers (operator.hpp: gpu_file_reader): whether this is one, and its files in file_id order.
  virtual bool reads_files() const { return false; }
  virtual file_list files() const { return {}; }
  /// File readers: adds the ranges of stage `call.stage` of the item (`more`), or says it is done (the
  /// call's files are null here). Ids are the operator's own. A list that overflowed is the caller's to
  /// check (read_list::overflowed).
  virtual read_step reads(const frame_call&, element_type, read_list&) const { return read_step::done; }
  /// File sources (operator.hpp: gpu_file_source): whether this is one, its frames and each one's bytes,
  /// for its files of `file_sizes` and output frames of `capacity` bytes.
  virtual bool is_source() const { return false; }
  virtual std::uint64_t frame_count(const std::uint64_t*, std::uint64_t) const { return 0; }
  virtual std::uint64_t frame_bytes(const std::uint64_t*, std::uint64_t, std::uint64_t) const { return 0; }
  /// Columnar readers that declare pages_read (operator.hpp): whether this is one, and the byte ranges of
  /// an indexed frame in host memory it reads — the index pages, then the data pages that may match —
  /// appended in frame order, adjacent pages merged. The copy engines carry only those (dma topics).
  virtual bool reads_pages() const { return false; }
  virtual void pages_read(const std::byte* /*frame*/, std::vector<frame_range>& /*out*/) const {}
  /// Page readers that declare pages_bound: the most pages_read can keep of a frame, found without
  /// reading its index (the index pages and every page of the columns it reads), appended as pages_read
  /// appends; false (nothing appended) for a reader that cannot say.
  virtual bool pages_bound(const std::byte* /*frame*/, std::vector<frame_range>& /*out*/) const {
    return false;
  }
  /// The operator's phases (map_phases): from `Op::phases(params)` when the operator type declares it.
  virtual map_phases phases() const { return {}; }
  /// A map's output frame bytes for an input frame of `input_bytes` (operator.hpp: output_numerator).
  virtual std::uint64_t output_bytes(std::uint64_t input_bytes) const { return input_bytes; }
  /// A GPU sink's accumulator on the host, zeroed and prepared (Op::prepare) at construction; empty for
  /// maps. The device executor starts the kernel's accumulator from it and copies the kernel's back into it
  /// before finish().
  virtual std::span<std::byte> accumulator() { return {}; }
  /// A GPU sink's accumulator bytes that hold its result, read from the first accumulator_head_bytes()
  /// (operator.hpp: trimmed_sink); every byte unless the operator says otherwise.
  virtual std::uint64_t accumulator_head_bytes() const { return 0; }
  virtual std::uint64_t accumulator_bytes_used(std::span<const std::byte> /*head*/) const {
    return accumulator_size();
  }
  virtual std::uint64_t accumulator_size() const { return 0; }
  /// Whether the accumulator holds anything but zeros before the first frame (a sink's Op::prepare).
  virtual bool accumulator_prepared() const { return true; }
  /// A GPU sink's Op::finish over accumulator(); maps have nothing to finish.
  virtual operator_counters finish() const { return {}; }

  /// Runs the whole frame on `threads` virtual threads, one after the other (`reading`: a reader's stage
  /// fields, else null); throws frame_failed when compute failed it. For callers outside a round: the
  /// reference chain, `on: cpu`, tests.
  void run_frame(const frame_in& in, frame_out* out, std::uint64_t offset,
                 const frame_call* reading = nullptr, std::uint32_t threads = 1) const {
    frame_call c = whole_frame_call(in, out, offset);
    c.thread_count = threads;
    if (reading != nullptr) {
      c.files = reading->files;
      c.stage = reading->stage;
      c.carry = reading->carry;
      c.file_sizes = reading->file_sizes;
    }
    std::uint64_t failure = 0;
    c.failure = &failure;
    run(c, in.data != nullptr || out == nullptr ? in.element : out->element, 0, threads);
    if (failure != 0) throw frame_failed{failure_code(failure)};
  }
};

}  // namespace xf
