// text_source: cutting a mapped text file into frames of whole words.
#include "operators/sources/text_source.hpp"

#include <cstring>

#include "framework/core/errors.hpp"
#include "operators/sources/stream_geometry.hpp"

namespace xf {

text_source::text_source(const params& p) : params_(p) {}

void text_source::on_start(const operator_setup& setup) {
  name_ = setup.name;
  const topic_info& out = source_output_topic(setup);
  topic_ = out.name;
  if (params_.separators.empty())
    throw run_error({name_, topic_, std::nullopt}, "separators is empty: the text would be one word");
  if (out.frame_bytes <= params_.max_word_bytes)
    throw run_error({name_, topic_, std::nullopt},
                    "topic '" + out.name + "' has frames of " + std::to_string(out.frame_bytes) +
                        " bytes, not above max_word_bytes (" + std::to_string(params_.max_word_bytes) +
                        "): a frame must hold a word and more");
  try {
    text_ = mapped_file::open(params_.path);
  } catch (const dataset_error& e) {
    throw run_error({name_, topic_, std::nullopt}, e.what());
  }
  cuts_ = word_cuts(text_.bytes(), params_.separators, out.frame_bytes - params_.max_word_bytes,
                    params_.max_word_bytes);
}

bool text_source::fill(std::uint64_t offset, frame_out& out) const {
  if (offset >= cuts_.frames()) return false;
  std::optional<word_cuts::long_word> too_long;
  const word_cuts::range r = cuts_.frame(offset, too_long);
  if (too_long)
    throw run_error({name_, topic_, offset}, "dataset '" + params_.path + "': byte offset " +
                                                 std::to_string(too_long->start) + ": a word of " +
                                                 std::to_string(too_long->bytes) +
                                                 " bytes, longer than max_word_bytes (" +
                                                 std::to_string(params_.max_word_bytes) + ")");
  XF_EXPECTS(out.capacity >= r.end - r.begin, "a source's output frame must hold the topic's frame size");
  if (r.end > r.begin) std::memcpy(out.data, text_.bytes().data() + r.begin, r.end - r.begin);
  out.bytes = r.end - r.begin;
  return true;
}

void text_source::produced(std::uint64_t, const frame_out& out) {
  copy_counts& c = counts_.local();
  c.frames.store(c.frames.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  c.bytes.store(c.bytes.load(std::memory_order_relaxed) + out.bytes, std::memory_order_relaxed);
}

operator_counters text_source::counters() const {
  std::uint64_t frames = 0, bytes = 0;
  counts_.for_each([&](const copy_counts& c) {
    frames += c.frames.load(std::memory_order_relaxed);
    bytes += c.bytes.load(std::memory_order_relaxed);
  });
  return {{"frames", frames}, {"bytes", bytes}, {"file_bytes", text_.size()}};
}

}  // namespace xf
