// text_source: a text file in frames of whole words, for GPU operators that read every byte (the BigKernel
// paper's word count: 1-byte accesses, no record layout). CPU threads copy each frame's bytes out of the
// memory-mapped file into the topic's frame; frames are cut only where a word ends, so an operator never
// sees half a word and any number of threads can produce frames in any order.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/thread_slots.hpp"
#include "operators/sources/mapped_file.hpp"
#include "operators/sources/replayable_source.hpp"
#include "operators/sources/word_cuts.hpp"

namespace xf {

/// Frames are cut as word_cuts says, with stride S = frame_size - max_word_bytes: frame o holds exactly the
/// words that start in [o·S, (o+1)·S) plus separators, at most S + max_word_bytes bytes. Errors (run_error
/// naming the operator and its topic): a file that cannot be mapped, a frame size not above max_word_bytes,
/// and — at the frame whose cut meets it, with its file offset — a word longer than max_word_bytes (one
/// that lies inside a stride is the consumer's to refuse, as word_count does). The file must not change while
/// it streams (mapped: truncation is SIGBUS). produce is a pure function of the offset: verify sinks replay
/// the source itself.
class text_source final : public replayable_source {
 public:
  struct params {
    std::string path;
    std::string separators = " \n";
    std::uint64_t max_word_bytes = 64;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "a memory-mapped text file in frames cut between words (for GPU operators that read every byte, "
        "like word_count); CPU threads copy the frames");
    s.param(&params::path, "path", "the text file", required);
    s.param(&params::separators, "separators", "the bytes between words (each character of the text)", " \n");
    s.bytes(&params::max_word_bytes, "max_word_bytes",
            "the longest word allowed; a frame holds frame_size - max_word_bytes bytes of word starts", 64,
            1);
  }

  explicit text_source(const params& p);

  /// Maps the file; run_error naming the operator and topic when it cannot, or when the frame size is not
  /// above max_word_bytes.
  void on_start(const operator_setup& setup) override;
  /// {frames, bytes (the text copied into frames), file_bytes}.
  operator_counters counters() const override;

  std::optional<std::uint64_t> frame_count() const override { return cuts_.frames(); }

 private:
  bool fill(std::uint64_t offset, frame_out& out) const override;
  void produced(std::uint64_t offset, const frame_out& out) override;

  struct alignas(cache_line_bytes) copy_counts {
    std::atomic<std::uint64_t> frames{0};  // written by the owning thread only
    std::atomic<std::uint64_t> bytes{0};
  };

  params params_;
  std::string name_;
  std::string topic_;
  mapped_file text_;
  word_cuts cuts_;
  thread_slots<copy_counts> counts_;
};

}  // namespace xf
