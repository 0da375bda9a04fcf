// Checkpoints of a run (xeflow-run --checkpoint / --resume): every interval, the offsets each sink has
// durably finished — the contiguous prefix of its stream it received and made durable — are committed to a
// file, atomically; a resumed run restarts every source from the smallest committed offset downstream of it
// and replays from there (at-least-once delivery to sinks whose output is idempotent per offset).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "framework/plan/plan.hpp"

namespace xf {

class run_context;

/// The checkpoint file's format version; a file of another version is refused.
inline constexpr std::uint32_t checkpoint_format_version = 1;

/// What a checkpoint file holds (JSON, checkpoint_json). Sinks and sources by name, in the plan's order.
struct checkpoint_state {
  /// topology_hash() of the effective topology (after --set overrides): a resume of another is refused.
  std::string topology_hash;
  std::string topology_name;
  /// The run completed every stream: there is nothing left to resume.
  bool complete = false;
  struct source_entry {
    std::string name;
    std::string stream;  ///< its output topic
    std::uint64_t restart_offset =
        0;  ///< where a resume restarts it: the smallest committed offset downstream
  };
  struct sink_entry {
    std::string name;
    std::string topic;            ///< its input topic
    std::uint64_t committed = 0;  ///< every offset below it was received and made durable
  };
  std::vector<source_entry> sources;
  std::vector<sink_entry> sinks;
};

/// A 64-bit FNV-1a hash of `text` (the effective topology as to_yaml writes it), as 16 hex digits.
std::string topology_hash(const std::string& text);

/// The state as one JSON document (format, version, identity, sources, sinks).
std::string checkpoint_json(const checkpoint_state& state);
/// Parses checkpoint_json's form; throws std::runtime_error saying what is wrong (not JSON, another
/// format or version, a missing or mistyped field).
checkpoint_state parse_checkpoint(const std::string& text);
/// Reads and parses a checkpoint file; std::runtime_error naming the file when it cannot.
checkpoint_state read_checkpoint(const std::string& path);
/// Writes `state` to `path` atomically: to `path`.tmp, fsync, rename onto `path`, fsync of the directory.
/// A crash at any moment leaves either the previous checkpoint or this one. Throws std::runtime_error
/// naming the file and the system's reason.
void write_checkpoint(const std::string& path, const checkpoint_state& state);

/// Why the planned topology cannot be checkpointed and resumed, every operator at fault named, or nullopt
/// when it can: a sink that folds the stream into state of its own (a GPU sink's accumulator, a CPU sink
/// that does not declare itself resumable), shared objects (their versions follow the stream), a run over
/// several ranks.
std::optional<std::string> checkpoint_refusal(const plan& p);

/// The plan's sinks (operator indices, plan order) and sources, as a checkpoint names them.
std::vector<std::size_t> sink_operators(const plan& p);

/// Each topic's first offset when resuming `p` from `state`: the smallest committed offset of the sinks
/// connected to it (a source, its maps and its sinks share one stream of offsets; an operator joins its
/// inputs' and outputs' streams). Throws std::runtime_error when `state` names other sinks than `p` has.
std::vector<std::uint64_t> resume_offsets(const plan& p, const checkpoint_state& state);

/// What a checkpointed run is given (run_options::checkpoint).
struct checkpoint_options {
  std::string path;
  std::chrono::milliseconds interval{1000};
  std::string topology_hash;
  std::string topology_name;
  /// A resumed run: each sink's offset committed before (plan order of sink_operators; empty: none). A
  /// sink that was ahead of the restart point keeps at least that: its frames below it are still durable.
  std::vector<std::uint64_t> committed_before;
};

/// Commits a running topology's progress (checkpoint.hpp's header comment). For each sink, the offsets its
/// group released in one contiguous run from the stream's first offset — each released only after the
/// sink's on_frame returned — are asked to be made durable (cpu_sink::make_durable), then committed. Reads
/// only the topics' release words (acquire: the sink's writes happened before), so nothing on a frame's
/// path waits for it.
class checkpointer {
 public:
  /// `first_offsets`: each topic's first offset (empty: 0 everywhere).
  checkpointer(run_context& run, const checkpoint_options& options, std::vector<std::uint64_t> first_offsets);
  ~checkpointer();
  checkpointer(const checkpointer&) = delete;
  checkpointer& operator=(const checkpointer&) = delete;

  /// Commits once, then starts the thread that commits every interval (after the sinks' on_start).
  void start();
  /// Stops and joins it (before the sinks' on_stop: make_durable is never called after it).
  void stop() noexcept;
  /// One commit from the calling thread, once the thread stopped: `complete` once every stream ended and
  /// every sink's on_stop succeeded. A failure to make durable or to write fails the run (unless it
  /// already failed) and returns false.
  bool commit(bool complete);

 private:
  void loop();
  /// Moves each sink's prefix over the offsets its group released since the last look.
  void advance();
  checkpoint_state state_of(bool complete) const;

  run_context& run_;
  checkpoint_options options_;
  std::vector<std::uint64_t> first_offsets_;
  std::vector<std::size_t> sinks_;        ///< operator indices
  std::vector<std::uint64_t> released_;   ///< per sink: offsets below it released by its group
  std::vector<std::uint64_t> committed_;  ///< per sink: what the file holds
  bool written_ = false;                  ///< a commit reached the file
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace xf
