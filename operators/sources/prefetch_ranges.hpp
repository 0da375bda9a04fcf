// prefetch_ranges: the pace of the address stage (the BigKernel paper's stage 1 on the GPU): frame o tells
// the address generators which records of a dataset frame o covers (range_frame.hpp). The CPU knows the
// dataset's size, the GPU does not: so the stream has exactly as many frames as the dataset has, and a
// frame's last records are never guessed on the GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sources/mapped_file.hpp"
#include "operators/sources/replayable_source.hpp"
#include "operators/sources/word_cuts.hpp"

namespace xf {

/// Frame o (u64) carries the range (o·R, n), n = min(R, records − o·R), R = records_per_frame, as
/// range_frame.hpp lays it out (zeros after it, to the topic's frame size); ⌈records / R⌉ frames. In words
/// mode (a text, record_bytes 1) the ranges are text_source's frames of whole words instead (word_cuts.hpp,
/// stride R − max_word_bytes), so each is at most R bytes long; a longer word fails its frame, named.
/// `records` 0 streams every record of the file, which must then hold whole records (a text is records of 1
/// byte). Errors (run_error naming the operator and its topic): a file that cannot be looked at,
/// records_per_frame not set, a partial record at the end, a topic that is not u64. The file is not read,
/// only its size counts — except in words mode, which reads the bytes around each cut.
///
/// Replay: produce() is a pure function of the offset and the frame count is known: the source is its own
/// frame_reference. produce is thread-safe.
class prefetch_ranges final : public replayable_source {
 public:
  struct params {
    std::string path;
    std::uint64_t record_bytes = 0;
    std::int64_t records = 0;
    std::int64_t records_per_frame = 0;
    bool words = false;
    std::string separators = " \n";
    std::uint64_t max_word_bytes = 64;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "paces a BigKernel address stage: frame o holds (first record, records) of frame o of a dataset "
        "of fixed-length records, as u64, zeros after; as many frames as the dataset has");
    s.param(&params::path, "path", "the dataset file (only its size is used)", required);
    s.bytes(&params::record_bytes, "record_bytes", "bytes per record (1 for a text read byte by byte)",
            required, 1);
    s.param(&params::records, "records", "records to stream from the start (0: the whole dataset)",
            params{}.records, 0);
    s.param(&params::records_per_frame, "records_per_frame",
            "records per frame, R (must be set): the generator's frame (lanes x bytes_per_lane for a text)",
            params{}.records_per_frame, 0);
    s.param(
        &params::words, "words",
        "a text (record_bytes 1) cut between words as text_source cuts it: frame o's range holds the words "
        "that start in its stride of R - max_word_bytes bytes, so an operator never sees half a word",
        false);
    s.param(&params::separators, "separators", "words mode: the bytes between words", " \n");
    s.bytes(&params::max_word_bytes, "max_word_bytes", "words mode: the longest word allowed", 64, 1);
  }

  explicit prefetch_ranges(const params& p) : params_(p) {}

  /// Looks at the dataset's size and plans the frames; run_error naming the operator and topic when it
  /// cannot.
  void on_start(const operator_setup& setup) override;
  std::optional<std::uint64_t> frame_count() const override { return frames_; }

 private:
  bool fill(std::uint64_t offset, frame_out& out) const override;

  params params_;
  std::string name_;
  std::string topic_;
  std::uint64_t records_ = 0;
  std::uint64_t per_frame_ = 0;
  std::uint64_t frames_ = 0;
  mapped_file text_;  // words mode: the text, read where frames are cut
  word_cuts cuts_;
};

}  // namespace xf
