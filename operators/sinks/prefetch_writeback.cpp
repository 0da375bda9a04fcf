// prefetch_writeback: mapping the dataset read-write and storing each frame's fields into its records.
#include "operators/sinks/prefetch_writeback.hpp"

#include "framework/core/errors.hpp"
#include "framework/core/page_buffer.hpp"
#include "operators/sources/prefetch/gather.hpp"

namespace xf {

void prefetch_writeback::on_start(const operator_setup& setup) {
  name_ = setup.name;
  if (setup.inputs.empty())
    throw run_error({name_, "", std::nullopt}, "a write-back sink needs an input topic");
  topic_ = setup.inputs.front().name;
  frame_bytes_ = setup.inputs.front().frame_bytes;
  element_ = setup.inputs.front().element;
  const auto fail = [&](const std::string& reason) {
    throw run_error({name_, topic_, std::nullopt}, "dataset '" + params_.path + "': " + reason);
  };
  if (params_.records_per_frame <= 0)
    fail("records_per_frame must be set to the prefetch source's (its stats counter records_per_frame)");
  prefetch::record_frames frames;
  if (const std::string problem = prefetch::layout_of(params_, frames.layout); !problem.empty())
    fail(problem);
  // In place, unlike an output file written aside and renamed: the write-back updates fields of the
  // records the source read (BigKernel's write-back), and a copy of a dataset of many GiB on every run
  // would cost more than the run. A failed or interrupted run leaves the frames it stored updated.
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
  check_upstream_frames(setup.input_references.empty() ? nullptr : setup.input_references.front());
}

void prefetch_writeback::check_upstream_frames(const frame_reference* upstream) const {
  // Frame o must be the same records on both sides. The stream upstream tells its frame count, and its
  // frames' lengths are proportional to their records (the source's layout, through maps that keep the
  // length): with the same count, the last frame's share of a full one is n_last / R on each side only
  // when R is the same. Without a replayable upstream this cannot be checked here.
  if (upstream == nullptr) return;
  const std::optional<std::uint64_t> count = upstream->frame_count();
  const auto wrong = [&](const std::string& what) {
    throw run_error({name_, topic_, std::nullopt},
                    what + ": records_per_frame (" + std::to_string(frames_.records_per_frame) +
                        "), records (" + std::to_string(frames_.records) +
                        ") and passes must be the source's (its stats "
                        "counters records_per_frame and records), or results go into the wrong records");
  };
  if (!count) return;
  if (*count != frames_.frame_count())
    wrong("the stream upstream has " + std::to_string(*count) + " frames, but this sink's parameters make " +
          std::to_string(frames_.frame_count()));
  const std::uint64_t last = frames_.frames_per_pass() - 1;
  if (last == 0) return;
  page_buffer buffer(frame_bytes_);
  frame_out first{buffer.data(), frame_bytes_, 0, element_};
  if (!upstream->expected(0, first)) return;
  const std::uint64_t first_bytes = first.bytes;
  frame_out tail{buffer.data(), frame_bytes_, 0, element_};
  if (!upstream->expected(last, tail)) return;
  // bytes(last) / bytes(0) == records_in(last) / R, cross-multiplied.
  if (tail.bytes * frames_.records_per_frame != first_bytes * frames_.records_in(last))
    wrong("frame " + std::to_string(last) + " upstream holds " + std::to_string(tail.bytes) +
          " bytes against " + std::to_string(first_bytes) + " in frame 0, not the share of its " +
          std::to_string(frames_.records_in(last)) + " records this sink expects");
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
