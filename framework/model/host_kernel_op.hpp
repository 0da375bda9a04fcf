// A GPU operator's compute as the host executor's blocks call it (host_kernel_op), with what a file
// reader's stages add (reader_stage). Made by the registry (registry.hpp) from the operator's type.
#pragma once

#include <cstdint>
#include <span>

#include "framework/files/file_api.hpp"
#include "framework/files/file_list.hpp"
#include "framework/model/operator.hpp"

namespace xf {

/// A file reader's stage as its compute sees it (frame_task's files, stage and carry).
struct reader_stage {
  const file_pages* files = nullptr;
  std::uint32_t stage = 0;
  std::byte* carry = nullptr;                  ///< frame_task::carry_bytes
  const std::uint64_t* file_sizes = nullptr;  ///< the operator's files' sizes at open
};

/// A GPU operator's compute as the host executor calls it: runs virtual threads
/// [thread_begin, thread_end) of `thread_count` over one frame (a warp's lanes, in kernel terms).
/// For a GPU sink `out` is null and the virtual threads fold the frame into the accumulator
/// (`accumulator()`, concurrently from every host block). A file reader (reads_files()) runs in stages:
/// `reads` gives each stage's ranges, the executor makes them resident in the file cache and `run` computes
/// with `reading` over them; for every other operator `reading` is null.
class host_kernel_op {
 public:
  virtual ~host_kernel_op() = default;
  virtual void run(const frame_in& in, frame_out* out, std::uint64_t offset, std::uint32_t thread_begin,
                   std::uint32_t thread_end, std::uint32_t thread_count,
                   const reader_stage* reading = nullptr) const = 0;
  /// File readers (operator.hpp: gpu_file_reader): whether this is one, and its files in file_id order.
  virtual bool reads_files() const { return false; }
  virtual file_list files() const { return {}; }
  /// File readers: adds the ranges of stage `reading.stage` of the frame at `offset` (`more`), or says
  /// the frame is done (reading.files is null here). `out`: the output frame (a source's frames' length).
  /// Ids are the operator's own.
  virtual read_step reads(const frame_in&, const frame_out*, std::uint64_t, const reader_stage&, read_list&) const {
    return read_step::done;
  }
  /// File sources (operator.hpp: gpu_file_source): whether this is one, its frames and each one's bytes,
  /// for its files of `file_sizes` and output frames of `capacity` bytes.
  virtual bool is_source() const { return false; }
  virtual std::uint64_t frame_count(const std::uint64_t*, std::uint64_t) const { return 0; }
  virtual std::uint64_t frame_bytes(const std::uint64_t*, std::uint64_t, std::uint64_t) const { return 0; }
  /// The operator's phases (map_phases): from `Op::phases(params)` when the operator type declares it.
  virtual map_phases phases() const { return {}; }
  /// A map's output frame bytes for an input frame of `input_bytes` (operator.hpp: output_numerator).
  virtual std::uint64_t output_bytes(std::uint64_t input_bytes) const { return input_bytes; }
  /// A GPU sink's accumulator on the host, zeroed and prepared (Op::prepare) at construction; empty for
  /// maps. The device executor starts the kernel's accumulator from it and copies the kernel's back into it
  /// before finish().
  virtual std::span<std::byte> accumulator() { return {}; }
  /// A GPU sink's Op::finish over accumulator(); maps have nothing to finish.
  virtual operator_counters finish() const { return {}; }
};

}  // namespace xf
