// table_source: streams a table file (columnar_table.hpp) into a columnar topic, frame by frame as the file
// holds them (their index pages included), `passes` times over; a resident table is not read again, and
// only the pages the topic's readers may touch are read when they all say which.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/sinks/thread_slots.hpp"
#include "operators/sources/columnar_table.hpp"

namespace xf {

/// Offset o is the file's frame o % F (F frames), for o < passes·F; the stream then ends. The output topic
/// must be columnar with the file's rows_per_frame and columns (names, types, bloom filters, in order).
///
/// In place: the topic's heap hands offset o the heap frame o % capacity whenever it can, and nothing but
/// its publisher writes a topic frame, so a heap frame keeps the bytes this source last read into it. The
/// source remembers, per heap frame (frame_out::frame_index), which file frame it holds, and does not read
/// a file frame into a heap frame that already holds it: with a capacity that is a multiple of F (a resident
/// table, re-read by a query service's passes) only the first pass reads the file; any other capacity
/// puts a different file frame in each heap frame on every pass, and every publish reads. The preconditions
/// are dataset_source's: the source is its topic's only publisher, and frame_index is stable for the run; a
/// frame without an index
/// (~0u: a replay, a test) is always read.
///
/// Only what the readers read: when every subscriber of the topic says which pages it reads
/// (frame_out::parts), a read takes the frame's index pages and then only the pages some subscriber may
/// touch; the others keep whatever the heap frame held, which no subscriber reads. The pages a frame needs
/// follow from its index alone, the same on every pass, so a heap frame that holds "file frame k" holds
/// what this run's readers need of it, and the in-place rule above stands. The copy engines and a mapped
/// kernel then move no more than the file reads: a query that skips 98 % of the pages skips them in the
/// page cache too.
///
/// Replay: the source is its own frame_reference (period F), so verify sinks replay it without touching the
/// in-place state or the counters.
///
/// Thread-safety: produce() and expected() are safe from any number of threads at once after on_start
/// (pread); a heap frame is held by one publishing thread at a time (the topic protocol orders the
/// hand-over), and its record is an atomic so that ThreadSanitizer sees no race either way.
class table_source final : public cpu_source, public frame_reference {
 public:
  struct params {
    std::string path;
    std::uint32_t passes = 1;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "streams a table file (xeflow-table) into a columnar topic with the file's columns and "
        "rows_per_frame, "
        "`passes` times; frames are copied as the file holds them, and a heap frame that already holds its "
        "file frame is not read again");
    s.param(&params::path, "path",
            "the table file (xeflow-table from-csv, or a program's write_columnar_table)", required);
    s.param(&params::passes, "passes",
            "times the table is streamed (offset o is frame o % frames); with a topic capacity that is a "
            "multiple of the table's frames, later passes read nothing",
            params{}.passes, 1);
  }

  explicit table_source(const params& p) : path_(p.path), passes_(p.passes) {}

  /// Opens the file and checks the output topic against it: run_error naming the operator, the topic and
  /// (for a schema mismatch) the column and both sides, or the file's problem.
  void on_start(const operator_setup& setup) override;
  bool produce(std::uint64_t offset, frame_out& out) override;
  /// {frames_read, frames_in_place, bytes_read, bytes_left}: publishes that read the file, those whose
  /// heap frame held it, the bytes read, and the bytes of the frames read that no reader needed.
  operator_counters counters() const override;

  /// The replay: always reads frame `offset % F` into out; no side effects.
  bool expected(std::uint64_t offset, frame_out& out) const override;
  std::uint64_t period() const override { return file_ ? file_->frames() : 0; }
  std::optional<std::uint64_t> frame_count() const override { return stream_frames_; }

  /// The open file, from on_start on (it stays open until the source is destroyed: verify sinks may
  /// replay through expected() until their own on_stop, which may come after this source's).
  const columnar_table_file& file() const { return *file_; }

 private:
  struct alignas(cache_line_bytes) publish_counts {
    // Written by the owning thread only, read by counters().
    std::atomic<std::uint64_t> read{0};
    std::atomic<std::uint64_t> in_place{0};
    std::atomic<std::uint64_t> bytes_read{0};
  };
  static constexpr std::uint64_t holds_nothing = ~std::uint64_t{0};

  /// Reads file frame k into out (its parts, when out says which); a failure names the operator, topic and
  /// offset. Returns the bytes read.
  std::uint64_t read_into(std::uint64_t offset, std::uint64_t k, frame_out& out) const;

  std::string path_;
  std::uint32_t passes_;
  std::string name_;
  std::string topic_;
  std::optional<columnar_table_file> file_;
  std::uint64_t stream_frames_ = 0;  ///< passes · F
  std::uint64_t held_count_ = 0;
  /// [held_count_], indexed by frame_out::frame_index: the file frame the heap frame holds. Written only
  /// by the thread publishing into that frame.
  std::unique_ptr<std::atomic<std::uint64_t>[]> held_;
  thread_slots<publish_counts> counts_;
};

}  // namespace xf
