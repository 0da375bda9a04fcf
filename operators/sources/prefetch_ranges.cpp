// prefetch_ranges: sizing the dataset and writing each frame's record range.
#include "operators/sources/prefetch_ranges.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include "framework/core/errors.hpp"
#include "operators/sources/mapped_file.hpp"
#include "operators/sources/prefetch/range_frame.hpp"
#include "operators/sources/prefetch/record_frames.hpp"
#include "operators/sources/stream_geometry.hpp"

namespace xf {

void prefetch_ranges::on_start(const operator_setup& setup) {
  const topic_info& out = source_output_topic(setup);
  name_ = setup.name;
  topic_ = out.name;
  const auto fail = [&](const std::string& reason) {
    throw run_error({setup.name, out.name, std::nullopt}, "dataset '" + params_.path + "': " + reason);
  };
  if (out.element != element_type::u64)
    fail("record ranges are u64, not " + std::string(name_of(out.element)) + " (topic '" + out.name + "')");
  if (params_.records_per_frame <= 0) fail("records_per_frame must be set (the address generator's frame)");
  std::uint64_t file_bytes = 0;
  try {
    mapped_file file = mapped_file::open(params_.path);  // a file, or memory a program handed over
    file_bytes = file.size();
    if (params_.words) text_ = std::move(file);
  } catch (const dataset_error& e) {
    throw run_error({setup.name, out.name, std::nullopt}, e.what());
  }
  if (params_.words) {
    if (params_.record_bytes != 1) fail("words mode reads a text: record_bytes must be 1");
    if (params_.separators.empty()) fail("separators is empty: the text would be one word");
    const auto r = static_cast<std::uint64_t>(params_.records_per_frame);
    if (r <= params_.max_word_bytes)
      fail("records_per_frame " + std::to_string(r) + " is not above max_word_bytes (" +
           std::to_string(params_.max_word_bytes) + "): a frame must hold a word and more");
    std::span<const std::byte> text = text_.bytes();
    if (params_.records > 0) text = text.first(std::min<std::uint64_t>(text.size(), params_.records));
    cuts_ = word_cuts(text, params_.separators, r - params_.max_word_bytes, params_.max_word_bytes);
    records_ = text.size();
    per_frame_ = r;
    frames_ = cuts_.frames();
    return;
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
  std::uint64_t first = offset * per_frame_;
  std::uint64_t count = records_ - first < per_frame_ ? records_ - first : per_frame_;
  if (params_.words) {
    std::optional<word_cuts::long_word> too_long;
    const word_cuts::range r = cuts_.frame(offset, too_long);
    if (too_long)
      throw run_error({name_, topic_, offset}, "dataset '" + params_.path + "': byte offset " +
                                                   std::to_string(too_long->start) + ": a word of " +
                                                   std::to_string(too_long->bytes) +
                                                   " bytes, longer than max_word_bytes (" +
                                                   std::to_string(params_.max_word_bytes) + ")");
    first = r.begin;
    count = r.end - r.begin;
  }
  const std::uint64_t range[prefetch::range_frame_words] = {prefetch::range_frame_magic, first, count};
  XF_EXPECTS(out.capacity >= sizeof range, "a frame must hold a record range");
  std::memcpy(out.data, range, sizeof range);
  std::memset(out.data + sizeof range, 0, out.capacity - sizeof range);
  out.bytes = out.capacity;
  return true;
}

}  // namespace xf
