// A run's shared objects (the topology's `shared_objects:`): each one's versions (versioned_object), the
// ports its CPU operators use (object_port, operator.hpp), the writer's frame bookkeeping that moves the
// horizon, and the wait a publish makes for the readers of the buffer it reuses — read off their input
// topics' release words, so GPU readers (whose releases the round stores there) and CPU readers alike.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "framework/model/operator.hpp"
#include "framework/plan/plan.hpp"
#include "framework/runtime/run_stats.hpp"
#include "framework/shared/versioned_object.hpp"

namespace xf {

class run_context;

class run_objects {
 public:
  /// Makes every object of the plan with its version 0 (its init file's bytes, or zeros). Throws
  /// run_error naming the object for an init file it cannot read.
  explicit run_objects(run_context& run);
  ~run_objects();
  run_objects(const run_objects&) = delete;
  run_objects& operator=(const run_objects&) = delete;

  std::size_t size() const noexcept { return objects_.size(); }
  shared::versioned_object& object(std::size_t i) { return *objects_[i]; }
  /// Whether a GPU operator reads object i (it then needs the versions where the kernel runs).
  bool read_in_kernel(std::size_t i) const;
  /// The version tables as the host executor's round reads them.
  const std::vector<shared::version_table_view>& host_views() const noexcept { return host_views_; }

  /// CPU operator op's objects, in its class's slot order.
  std::vector<object_port*> ports_of(std::size_t op);

  /// The CPU workers of an operator that writes objects: before its hook for `offset` (publish checks
  /// against it), and after it (or after a void frame) — the horizon follows the writer's finished frames.
  bool writes(std::size_t op) const noexcept { return op < writes_.size() && writes_[op]; }
  void begin_frame(std::uint64_t offset);
  void finished_frame(std::size_t op, std::uint64_t offset);
  /// The writers have started (on_start returned): frame 0's version is final, the initial one or what a
  /// writer published at offset 0 in its on_start.
  void writers_started();
  /// One of the operator's workers is done; once all are, its objects' versions are all final.
  void worker_done(std::size_t op);

  std::vector<object_stats> stats() const;

 private:
  class port;
  friend class port;
  /// Returns once every reader of object i released every frame below `below` (or its stream ended
  /// before); throws run_aborted if the run ends meanwhile.
  void wait_for_readers(std::size_t i, std::uint64_t below);

  run_context& run_;
  std::vector<std::unique_ptr<shared::version_words, void (*)(shared::version_words*)>> words_;
  std::vector<std::unique_ptr<shared::versioned_object>> objects_;
  std::vector<shared::version_table_view> host_views_;
  std::vector<std::vector<std::unique_ptr<port>>> ports_;         // by operator
  std::vector<bool> writes_;                                      // by operator
  std::unique_ptr<std::atomic<std::uint32_t>[]> workers_left_;    // by operator
  std::unique_ptr<std::atomic<std::uint64_t>[]> reader_wait_ns_;  // by object
};

}  // namespace xf
