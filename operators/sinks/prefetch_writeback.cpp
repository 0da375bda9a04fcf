// prefetch_writeback: mapping the dataset read-write and storing each frame's fields into its records.
#include "operators/sinks/prefetch_writeback.hpp"

#include "framework/core/errors.hpp"
#include "operators/sources/prefetch/gather.hpp"

namespace xf {

void prefetch_writeback::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (setup.inputs.empty())
    throw run_error({name_, "", std::nullopt}, "a write-back sink needs an input topic");
  topic_ = setup.inputs.front().name;
  const auto fail = [&](const std::string& reason) {
    throw run_error({name_, topic_, std::nullopt}, "dataset '" + params_.path + "': " + reason);
  };
  if (params_.records_per_frame <= 0)
    fail("records_per_frame must be set to the prefetch source's (its stats counter records_per_frame)");
  prefetch::record_frames frames;
  if (const std::string problem = prefetch::layout_of(params_, frames.layout); !problem.empty())
    fail(problem);
  try {
    dataset_ = mapped_file::open(params_.path, map_access::read_write);
  } catch (const dataset_error& e) {
    throw run_error({name_, topic_, std::nullopt}, e.what());
  }
  // Frames come from upstream: only the record counts matter here, not what a frame of this topic holds.
  const std::uint64_t per_record = frames.layout.bytes_read_per_record();
  const auto r = static_cast<std::uint64_t>(params_.records_per_frame);
  if (const std::string problem =
          prefetch::plan_record_frames(dataset_.size(), static_cast<std::uint64_t>(params_.records), r,
                                       r * per_record, per_record, frames);
      !problem.empty())
    fail(problem);
  frames.passes = static_cast<std::uint64_t>(params_.passes);
  frames_ = frames;
}

void prefetch_writeback::on_frame(std::uint64_t offset, const frame_in& in) {
  // Over several passes only the last one's frames are written: frames of two passes that hold the same
  // records may be in flight at once on different threads, and the file must end as the last pass left it.
  if (offset / frames_.frames_per_pass() + 1 < frames_.passes) return;
  const std::uint64_t n = frames_.records_in(offset);
  if (n == 0)
    throw run_error({name_, topic_, offset}, "frame past the dataset's last record (" +
                                                 std::to_string(frames_.frame_count()) + " frames of " +
                                                 std::to_string(frames_.records_per_frame) + " records)");
  const std::uint64_t bytes = n * frames_.layout.bytes_read_per_record();
  if (in.bytes < bytes)
    throw run_error({name_, topic_, offset}, "frame of " + std::to_string(in.bytes) +
                                                 " bytes cannot hold the written fields of its " +
                                                 std::to_string(n) + " records (" + std::to_string(bytes) +
                                                 " bytes): is records_per_frame the source's?");
  prefetch::scatter_records(dataset_.writable_bytes(), frames_.layout, frames_.first_record(offset), n,
                            {in.data, bytes});
  std::atomic<std::uint64_t>& records = counts_.local().records;
  records.store(records.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

void prefetch_writeback::on_stop() {
  try {
    dataset_.sync();
  } catch (const dataset_error& e) {
    throw run_error({name_, topic_, std::nullopt}, e.what());
  }
}

operator_counters prefetch_writeback::counters() const {
  std::uint64_t records = 0;
  counts_.for_each([&](const write_counts& c) { records += c.records.load(std::memory_order_relaxed); });
  return {{"records_written", records}, {"bytes_written", records * frames_.layout.bytes_read_per_record()}};
}

}  // namespace xf
