// prefetch_varlen_source: the prefetch source for datasets of variable-length records (the BigKernel
// paper's MasterCard Affinity): the records are found by scanning their length fields or through an index
// file of their offsets, and CPU threads gather the declared fields of R records per frame, field item by
// field item, exactly as prefetch_source lays out fixed-length records. Only the fields cross PCIe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/thread_slots.hpp"
#include "operators/sources/mapped_file.hpp"
#include "operators/sources/prefetch/record_layout.hpp"
#include "operators/sources/replayable_source.hpp"

namespace xf {

/// Record starts come from `index` (a file of u64 byte offsets, one per record, in stream order) or, with no
/// index, from a scan at start: record k+1 starts record_length(k) bytes after record k, the length a u32
/// at `length_offset` in each record (the one thread that scans reads those bytes only). `min_record_bytes`
/// is the least any record has, and the fields must lie within it. Frame o holds records
/// [o·R, min((o+1)·R, N)); item i of record r at (i·n + r)·item_bytes, n the frame's records.
/// Errors (run_error naming the operator and its topic): files that cannot be mapped, a bad field list, a
/// record shorter than min_record_bytes or running past the end (scan), an index entry leaving no whole
/// record inside the file or a truncated index — each with the byte offset at fault. The files must not
/// change while the source streams (mapped: truncation is SIGBUS). produce is a pure function of the offset.
class prefetch_varlen_source final : public replayable_source {
 public:
  struct params {
    std::string path;
    std::string index;
    std::uint64_t length_offset = 0;
    std::uint64_t min_record_bytes = 0;
    std::string fields;
    std::int64_t item_bytes = 4;
    std::int64_t records_per_frame = 0;
  };

  static void describe(operator_schema<params>& s);

  explicit prefetch_varlen_source(const params& p) : params_(p) {}

  void on_start(const operator_setup& setup) override;
  /// {records, records_per_frame, bytes_gathered, dataset_bytes (the data file's), index_bytes}.
  operator_counters counters() const override;

  std::optional<std::uint64_t> frame_count() const override { return frames_; }

 private:
  bool fill(std::uint64_t offset, frame_out& out) const override;
  void produced(std::uint64_t offset, const frame_out& out) override;
  std::uint64_t records_in(std::uint64_t offset) const;
  [[noreturn]] void fail(const std::string& reason) const;

  struct alignas(cache_line_bytes) gather_counts {
    std::atomic<std::uint64_t> records{0};  // written by the owning thread only
  };

  params params_;
  std::string name_;
  std::string topic_;
  mapped_file data_;
  mapped_file index_file_;
  std::vector<std::uint64_t> scanned_;     // record starts found by the scan (no index)
  std::span<const std::uint64_t> starts_;  // the index's entries or scanned_
  prefetch::record_layout layout_;
  std::uint64_t records_per_frame_ = 0;
  std::uint64_t frames_ = 0;
  thread_slots<gather_counts> counts_;
};

}  // namespace xf
