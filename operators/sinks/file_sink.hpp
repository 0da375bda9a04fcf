// file_sink: writes a stream to a file, each frame at its own byte position, so frames may arrive out of
// order across threads and the file still comes out exact.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf {

/// Frame o is written with pwrite at byte o·frame_bytes (frame_bytes of the input topic). Only the stream's
/// last frame may be short: a short frame below another delivered offset is a run_error naming its offset.
/// Once the stream completed, on_stop truncates the file to its exact length — (highest offset)·frame_bytes
/// + its bytes — and closes it. on_frame is safe from any number of threads.
///
/// The output is written to `<path>.partial` (created or truncated at on_start) and renamed onto `path`,
/// after an fsync, only once the stream completed: a failed, interrupted or killed run leaves the
/// `.partial`, never a file that looks complete. A path that exists and is not a regular file (a device,
/// a FIFO) is written in place. Because each frame has its own place, a replayed frame rewrites the same
/// bytes: a resumed run (operator_setup::resume_offset K > 0) reopens `<path>.partial` without truncating
/// it — or `path` itself, moved back to `.partial`, when an earlier run had completed it but its checkpoint
/// did not yet say so — and writes the frames from K on. make_durable is fdatasync.
class file_sink final : public cpu_sink {
 public:
  struct params {
    std::string path;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "writes frames to a file at offset * frame size (pwrite, any order); truncates to the exact "
        "length at the end");
    s.param(&params::path, "path", "file to write (created or truncated)", required);
    s.resumable();
  }

  explicit file_sink(const params& p) : path_(p.path) {}
  ~file_sink() override;
  file_sink(const file_sink&) = delete;
  file_sink& operator=(const file_sink&) = delete;

  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in) override;
  void on_stop() override;
  /// fdatasync: every frame written before the call is on the disk when it returns.
  void make_durable() override;
  /// {frames, bytes}.
  operator_counters counters() const override;

 private:
  /// short_offset_ before any short frame arrived.
  static constexpr std::uint64_t no_short_frame = UINT64_MAX;

  [[noreturn]] void fail(std::optional<std::uint64_t> offset, const std::string& reason) const;
  /// Throws when a short frame was seen below the highest delivered offset.
  void check_short_frame_is_last() const;

  /// Opens the file a fresh or a resumed run writes (written_path_); fails naming the operator.
  void open_output(const operator_setup& setup);

  std::string path_;
  std::string written_path_;  ///< `<path>.partial`, or `path` when that is not a regular file
  bool in_place_ = false;     ///< written_path_ is path_: nothing to rename
  bool resumed_ = false;      ///< resume_offset > 0: the file holds an earlier run's frames
  const std::atomic<bool>* interrupted_ = nullptr;
  const std::atomic<bool>* aborted_ = nullptr;
  std::string name_;
  std::string topic_;
  std::uint64_t frame_bytes_ = 0;
  int fd_ = -1;
  // Shared by the writing threads. seq_cst on these two: each thread writes one and then reads both
  // (store-load, Dekker style), so of a short frame and a higher offset arriving at once, at least one
  // thread sees both and fails; on_stop checks again after all threads are done.
  std::atomic<std::uint64_t> delivered_end_{0};  ///< highest offset written + 1; 0: none
  std::atomic<std::uint64_t> short_offset_{no_short_frame};
  std::atomic<std::uint64_t> short_bytes_{0};  ///< valid bytes of the short frame; read at on_stop only
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::uint64_t> bytes_{0};
};

}  // namespace xf
