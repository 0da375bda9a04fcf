// prefetch_ranges: sizing the dataset and writing each frame's record range.
#include "operators/sources/prefetch_ranges.hpp"

#include <cstring>

#include "framework/errors.hpp"
#include "operators/sources/mapped_file.hpp"
#include "operators/sources/prefetch/range_frame.hpp"
#include "operators/sources/prefetch/record_frames.hpp"
#include "operators/sources/stream_geometry.hpp"

namespace xf {

void prefetch_ranges::on_start(const operator_setup& setup) {
  const topic_info& out = source_output_topic(setup);
  const auto fail = [&](const std::string& reason) {
    throw run_error({setup.name, out.name, std::nullopt}, "dataset '" + params_.path + "': " + reason);
  };
  if (out.element != element_type::u64)
    fail("record ranges are u64, not " + std::string(name_of(out.element)) + " (topic '" + out.name + "')");
  if (params_.records_per_frame <= 0) fail("records_per_frame must be set (the address generator's frame)");
  std::uint64_t file_bytes = 0;
  try {
    file_bytes = mapped_file::open(params_.path).size();  // a file, or memory a program handed over
  } catch (const dataset_error& e) {
    throw run_error({setup.name, out.name, std::nullopt}, e.what());
  }
  // The records' frames as prefetch_source plans them, a frame holding R ranges' worth (1 byte a record).
  prefetch::record_frames frames;
  frames.layout.record_bytes = params_.record_bytes;
  const auto r = static_cast<std::uint64_t>(params_.records_per_frame);
  if (const std::string problem = prefetch::plan_record_frames(
          file_bytes, static_cast<std::uint64_t>(params_.records), r, r, 1, frames);
      !problem.empty())
    fail(problem);
  records_ = frames.records;
  per_frame_ = frames.records_per_frame;
  frames_ = frames.frame_count();
}

bool prefetch_ranges::fill(std::uint64_t offset, frame_out& out) const {
  if (offset >= frames_) return false;
  const std::uint64_t first = offset * per_frame_;
  const std::uint64_t range[prefetch::range_frame_words] = {
      prefetch::range_frame_magic, first, records_ - first < per_frame_ ? records_ - first : per_frame_};
  XF_EXPECTS(out.capacity >= sizeof range, "a frame must hold a record range");
  std::memcpy(out.data, range, sizeof range);
  std::memset(out.data + sizeof range, 0, out.capacity - sizeof range);
  out.bytes = out.capacity;
  return true;
}

}  // namespace xf
