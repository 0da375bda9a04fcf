// file_sink: writes a stream to a file, each frame at its own byte position, so frames may arrive out of
// order across threads and the file still comes out exact. The file is written as `<path>.partial` and
// renamed onto `<path>` only once the run completed, so a file under the user's name is always whole.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/seen_offsets.hpp"

namespace xf {

/// Frame o is written with pwrite at byte o·frame_bytes (frame_bytes of the input topic) of
/// `<path>.partial` (created or truncated at on_start, in the same directory). Only the stream's last frame
/// may be short: a short frame below another delivered offset is a run_error naming its offset. on_stop
/// checks that every offset below the stream's end was written exactly once (else a run_error naming the
/// first missing offset: two sources of different lengths on one topic leave holes) and truncates the file
/// to the stream's exact length — (highest offset)·frame_bytes + its bytes. on_commit, once the run
/// completed, syncs the file and renames it onto `<path>`; a failed or interrupted run leaves
/// `<path>.partial` (its errors say so). A path that exists and is not a regular file (/dev/null, a FIFO)
/// is written in place, never truncated or renamed; one that cannot seek (a FIFO) takes one thread, whose
/// frames come in stream order.
///
/// Resumable (operator_schema::resumable): each frame has its own place, so a replayed frame rewrites the
/// same bytes. A resumed run (operator_setup::resume_offset K > 0) reopens `<path>.partial` without
/// truncating it — or `path` itself, moved back to `.partial`, when an earlier run had completed it but its
/// checkpoint did not yet say so — and writes the frames from K on; the holes check covers [K, end).
/// make_durable is fdatasync. on_frame is safe from any number of threads.
class file_sink final : public cpu_sink {
 public:
  struct params {
    std::string path;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "writes frames to a file at offset * frame size (pwrite, any order) as PATH.partial; truncates to "
        "the exact length and renames it onto PATH once the run completed");
    s.param(&params::path, "path",
            "file to write (replaced once the run completed; a FIFO or device is written in place)",
            required);
    s.writes_file();
    s.resumable();
  }

  explicit file_sink(const params& p) : path_(p.path) {}
  ~file_sink() override;
  file_sink(const file_sink&) = delete;
  file_sink& operator=(const file_sink&) = delete;

  void on_start(const operator_setup& setup) override;
  void on_frame(std::uint64_t offset, const frame_in& in) override;
  void on_stop() override;
  void on_commit() override;
  /// fdatasync: every frame written before the call is on the disk when it returns.
  void make_durable() override;
  std::string uncommitted_output() const override { return special_ || committed_ ? "" : partial_; }
  /// {frames, bytes}.
  operator_counters counters() const override;
  /// Where the output is written until on_commit: `<path>.partial`, or the path itself when it is not a
  /// regular file.
  const std::string& written_path() const noexcept { return special_ ? path_ : partial_; }

 private:
  /// short_offset_ before any short frame arrived.
  static constexpr std::uint64_t no_short_frame = UINT64_MAX;

  [[noreturn]] void fail(std::optional<std::uint64_t> offset, const std::string& reason) const;
  /// Throws when a short frame was seen below the highest delivered offset.
  void check_short_frame_is_last() const;
  /// Writes all of [data, data + bytes) at byte `position` (pwrite), or at the stream's end when the file
  /// cannot seek (after checking no offset was skipped); run_error naming the byte at which it failed.
  void write_at(std::uint64_t offset, std::uint64_t position, const std::byte* data, std::uint64_t bytes);
  /// " (the output so far is in '<path>.partial')" for a regular file's errors; "" for a special file.
  std::string partial_note() const;
  bool run_cut_short() const;
  /// Opens `<path>.partial`: created or truncated in a fresh run, reopened as it is in a resumed one.
  void open_partial(const operator_setup& setup);

  std::string path_;
  std::string partial_;
  bool special_ = false;            ///< the path exists and is not a regular file: written in place
  bool committed_ = false;          ///< on_commit renamed the file (or nothing was opened)
  bool sequential_ = false;         ///< it cannot seek (a FIFO): frames are written in offset order
  bool resumed_ = false;            ///< resume_offset > 0: the partial file holds an earlier run's frames
  std::uint64_t first_offset_ = 0;  ///< operator_setup::resume_offset: the holes check starts there
  const std::atomic<bool>* interrupted_ = nullptr;
  const std::atomic<bool>* aborted_ = nullptr;
  std::uint64_t next_offset_ = 0;  ///< a file that cannot seek: the offset it takes next (one thread)
  seen_offsets written_;           ///< offsets written, for the holes check at on_stop
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
