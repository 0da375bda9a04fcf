// prefetch_writeback: the write-back half of the prefetch source (the BigKernel paper's K-means cluster
// id): frames of fields computed on the GPU travel back and CPU threads store them into the records they
// came from, in the memory-mapped dataset; the file holds every written field when the run ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/thread_slots.hpp"
#include "operators/sources/mapped_file.hpp"
#include "operators/sources/prefetch/record_frames.hpp"

namespace xf {

/// Frame o carries the written fields of records [o·R, min((o+1)·R, records)) laid out as the prefetch
/// source lays out what it reads — item i of record r at (i·n + r)·item_bytes, n the frame's records — in
/// its first n · (written bytes per record) bytes (a GPU map's output frame is as long as its input: the
/// rest is not the sink's). R and `records` must be the prefetch source's, so that frame o is the same
/// records on both sides; a frame too short for its records, or past the last record, is a run_error naming
/// the operator, topic and offset. The fields written must not be fields the source reads (the source's
/// replay, which verify sinks use, would see the new values). on_stop writes the mapping to the file
/// (msync). Frames may arrive on any number of threads: each touches only its own records. Over several
/// passes (`passes`) only the last pass's frames are written. The dataset is updated in place: it is the
/// source's input, not an output made visible at the end, and a failed or interrupted run leaves the
/// records of the frames it stored updated and the others as they were. on_start refuses parameters whose
/// frames are not the upstream stream's (records_per_frame, records or passes other than the source's), when
/// a replayable upstream can tell.
class prefetch_writeback final : public cpu_sink {
 public:
  using params = prefetch::record_dataset_params;

  static void describe(operator_schema<params>& s) {
    s.describe(
         "writes fields computed downstream of a prefetch_source back into its dataset's records "
         "(memory-mapped, synced to the file at the end)")
        .not_replayable();
    prefetch::describe_record_params(s, prefetch::dataset_side::writes);
  }

  explicit prefetch_writeback(const params& p) : params_(p) {}

  /// Maps the dataset read-write; run_error naming the operator and topic when it cannot.
  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in) override;
  /// Syncs the written records to the file; run_error when the system reports a failure.
  void on_stop() override;
  /// {records_written, bytes_written}.
  operator_counters counters() const override;

 private:
  struct alignas(cache_line_bytes) write_counts {
    std::atomic<std::uint64_t> records{0};  // written by the owning thread only
  };

  /// Throws when the stream upstream (its frame count, its last frame's length) cannot be the frames of
  /// records these parameters make.
  void check_upstream_frames(const frame_reference* upstream) const;

  params params_;
  std::string name_;
  std::string topic_;
  std::uint64_t frame_bytes_ = 0;
  element_type element_ = element_type::u8;
  mapped_file dataset_;
  prefetch::record_frames frames_;
  thread_slots<write_counts> counts_;
};

}  // namespace xf
