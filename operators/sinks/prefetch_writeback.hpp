// prefetch_writeback: the write-back half of the prefetch source (the BigKernel paper's K-means cluster
// id): frames of fields computed on the GPU travel back and CPU threads store them into the records they
// came from, in the memory-mapped dataset; the file holds every written field when the run ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "framework/operator.hpp"
#include "framework/operator_schema.hpp"
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
/// (msync). Frames may arrive on any number of threads: each touches only its own records.
class prefetch_writeback final : public cpu_sink {
 public:
  struct params {
    std::string path;
    std::uint64_t record_bytes = 0;
    std::string fields;
    std::int64_t item_bytes = 4;
    std::int64_t records = 0;
    std::int64_t records_per_frame = 0;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
         "writes fields computed downstream of a prefetch_source back into its dataset's records "
         "(memory-mapped, "
         "synced to the file at the end)")
        .not_replayable();
    s.param(&params::path, "path", "the prefetch source's dataset file (mapped read-write)", required);
    s.bytes(&params::record_bytes, "record_bytes", "bytes per record (the source's)", required, 1);
    s.param(&params::fields, "fields", "the fields written, 'OFFSET:BYTES,…' in offset order", required)
        .check(prefetch::field_list_problem);
    s.param(&params::item_bytes, "item_bytes", "bytes of one item (1, 2, 4, 8 or 16)", params{}.item_bytes, 1,
            16);
    s.param(&params::records, "records", "records the source streams (its records parameter)",
            params{}.records, 0);
    s.param(&params::records_per_frame, "records_per_frame",
            "records per frame: the source's (its stats counter records_per_frame); must be set",
            params{}.records_per_frame, 0);
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

  params params_;
  std::string name_;
  std::string topic_;
  mapped_file dataset_;
  prefetch::record_frames frames_;
  thread_slots<write_counts> counts_;
};

}  // namespace xf
