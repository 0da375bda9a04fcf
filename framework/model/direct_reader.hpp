// A file reader's frame run stage by stage with direct reads — no cache, a pread per range: how a reader
// placed `on: cpu` runs, and how verify sinks replay a reader the kernel's blocks ran through the cache
// (the same operator code, so a replay is an independent check of the cache's bytes).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/files/direct_reads.hpp"
#include "framework/files/file_table.hpp"
#include "framework/model/host_kernel_op.hpp"

namespace xf {

class direct_reader {
 public:
  /// Opens the reader's files (buffered: a replay must not evict what the run reads O_DIRECT, and a CPU
  /// reader is served by the kernel's page cache). Throws run_error at `site` for a file it cannot open.
  direct_reader(const host_kernel_op& reader, const fault_site& site);
  direct_reader(const direct_reader&) = delete;
  direct_reader& operator=(const direct_reader&) = delete;

  /// Runs every stage of the frame at `offset` into `out` (out.bytes set by the caller). Errors (a range
  /// past a file's end, a failed read, frame_failed from compute) propagate; reads name `site` with the
  /// offset. Thread-safe: each call borrows a set of read buffers.
  void run(const frame_in& in, frame_out& out, std::uint64_t offset, const fault_site& site) const;

  /// The reader's files' sizes at open, in its files() order.
  const std::uint64_t* file_sizes() const { return sizes_.data(); }

 private:
  const host_kernel_op& reader_;
  file_table files_;
  std::vector<std::uint64_t> sizes_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<direct_reads>> pool_;  ///< read buffers not in use
};

}  // namespace xf
