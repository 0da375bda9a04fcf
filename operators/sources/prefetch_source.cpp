// prefetch_source: mapping the dataset, planning its frames and gathering each frame's fields.
#include "operators/sources/prefetch_source.hpp"

#include "framework/core/element_type.hpp"
#include "framework/core/errors.hpp"
#include "operators/sources/prefetch/gather.hpp"
#include "operators/sources/stream_geometry.hpp"

namespace xf {

void prefetch_source::on_start(const operator_setup& setup) {
  name_ = setup.name;
  const topic_info& out = source_output_topic(setup);
  topic_ = out.name;
  const auto fail = [&](const std::string& reason) {
    throw run_error({name_, topic_, std::nullopt}, "dataset '" + params_.path + "': " + reason);
  };
  prefetch::record_frames frames;
  if (const std::string problem = prefetch::layout_of(params_, frames.layout); !problem.empty())
    fail(problem);
  if (frames.layout.item_bytes % size_of(out.element) != 0)
    fail("items of " + std::to_string(frames.layout.item_bytes) + " bytes are not whole elements of topic '" +
         out.name + "' (" + std::string(name_of(out.element)) + ")");
  try {
    dataset_ = mapped_file::open(params_.path);
  } catch (const dataset_error& e) {
    throw run_error({name_, topic_, std::nullopt}, e.what());
  }
  if (const std::string problem =
          prefetch::plan_record_frames(dataset_.size(), static_cast<std::uint64_t>(params_.records),
                                       static_cast<std::uint64_t>(params_.records_per_frame), out.frame_bytes,
                                       frames.layout.bytes_read_per_record(), frames);
      !problem.empty())
    fail(problem);
  frames.passes = static_cast<std::uint64_t>(params_.passes);
  frames_ = frames;
}

bool prefetch_source::fill(std::uint64_t offset, frame_out& out) const {
  const std::uint64_t n = frames_.records_in(offset);
  if (n == 0) return false;
  const std::uint64_t bytes = n * frames_.layout.bytes_read_per_record();
  XF_EXPECTS(out.capacity >= bytes, "a source's output frame must hold the topic's frame size");
  prefetch::gather_records(dataset_.bytes(), frames_.layout, frames_.first_record(offset), n,
                           {out.data, bytes});
  out.bytes = bytes;
  return true;
}

void prefetch_source::produced(std::uint64_t offset, const frame_out&) {
  std::atomic<std::uint64_t>& records = counts_.local().records;
  records.store(records.load(std::memory_order_relaxed) + frames_.records_in(offset),
                std::memory_order_relaxed);
}

operator_counters prefetch_source::counters() const {
  std::uint64_t records = 0;
  counts_.for_each([&](const gather_counts& c) { records += c.records.load(std::memory_order_relaxed); });
  return {{"records", records},
          {"records_per_frame", frames_.records_per_frame},
          {"bytes_gathered", records * frames_.layout.bytes_read_per_record()},
          {"dataset_bytes", records * frames_.layout.record_bytes}};
}

}  // namespace xf
