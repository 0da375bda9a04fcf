// text_source: cutting a mapped text file into frames of whole words.
#include "operators/sources/text_source.hpp"

#include <cstring>

#include "framework/errors.hpp"
#include "operators/sources/stream_geometry.hpp"

namespace xf {

text_source::text_source(const params& p) : params_(p) {
  for (const char c : params_.separators) is_separator_[static_cast<unsigned char>(c)] = true;
}

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
  stride_ = out.frame_bytes - params_.max_word_bytes;
  frames_ = (text_.size() + stride_ - 1) / stride_;
}

std::uint64_t text_source::cut(std::uint64_t p) const {
  const std::span<const std::byte> text = text_.bytes();
  if (p >= text.size()) return text.size();
  while (p > 0 && p < text.size() && !separator(text[p - 1])) ++p;
  return p;
}

bool text_source::fill(std::uint64_t offset, frame_out& out) const {
  if (offset >= frames_) return false;
  const std::uint64_t begin = cut(offset * stride_);
  const std::uint64_t nominal_end = std::min<std::uint64_t>((offset + 1) * stride_, text_.size());
  const std::uint64_t end = cut(nominal_end);
  // cut() walked to the end of the word under nominal_end: that word started before it, so its length is at
  // least what was walked.
  if (end - nominal_end >= params_.max_word_bytes) {
    std::uint64_t start = nominal_end;
    while (start > 0 && !separator(text_.bytes()[start - 1])) --start;
    throw run_error({name_, topic_, offset},
                    "dataset '" + params_.path + "': byte offset " + std::to_string(start) + ": a word of " +
                        std::to_string(end - start) + " bytes, longer than max_word_bytes (" +
                        std::to_string(params_.max_word_bytes) + ")");
  }
  XF_EXPECTS(out.capacity >= end - begin, "a source's output frame must hold the topic's frame size");
  if (end > begin) std::memcpy(out.data, text_.bytes().data() + begin, end - begin);
  out.bytes = end - begin;
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
