// versioned_object: a shared object of a topology — named state one CPU operator (the writer) publishes in
// versions by stream position, and CPU and GPU operators (the readers) read as of their frame's offset
// (version_table.hpp has the readers' side and the words' protocol; DESIGN.md "Objects in topologies").
//
// The writer writes a working copy, a shared object of the paper's library (object_space) under the
// object's protocol: publishing is its release point, so the protocol decides what moves — batch update the
// whole object every time, lazy update the object only if it was written, rolling update the blocks written
// (found by the fault handler, never by comparing bytes). What moves lands in the object space's
// accelerator copy, which here is the last published content; the new version's buffer is then brought up
// to date with the blocks that changed since the version it held (rotating through `versions` buffers, a
// buffer is `versions` publishes behind), on the host and, where GPU operators read, in device memory
// (a version_replica), before the version's entry and the horizon are stored.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "framework/shared/coherence.hpp"
#include "framework/shared/object_space.hpp"
#include "framework/shared/version_table.hpp"

namespace xf::shared {

/// Where the GPU readers' copies of an object's version buffers live (device memory), filled from the
/// host's buffers at each publish.
class version_replica {
 public:
  virtual ~version_replica() = default;
  /// [versions × stride] bytes, as kernels address them.
  virtual const std::byte* buffers() const = 0;
  /// Host bytes to replica bytes [at, at + bytes); may return before they moved, but `host` stays unchanged
  /// until finish() returns.
  virtual void copy(std::uint64_t at, const std::byte* host, std::uint64_t bytes) = 0;
  /// Returns once every copy issued so far has landed.
  virtual void finish() = 0;
};

struct versioned_object_config {
  std::string name;
  std::uint64_t bytes = 0;     ///< > 0
  std::uint32_t versions = 2;  ///< 1 … max_object_versions
  protocol proto = protocol::rolling;
  std::uint64_t block_bytes = 4096;    ///< rolling update's block (a multiple of the page size)
  std::span<const std::byte> initial;  ///< version 0's bytes (empty: zeros)
  bool written = true;                 ///< false: no writer (the horizon is open from the start)
};

/// What publishing cost, since the object was made.
struct versioned_object_counters {
  std::uint64_t versions = 0;       ///< published (the initial one not counted)
  std::uint64_t bytes_moved = 0;    ///< into version buffers (each reader side counted once)
  std::uint64_t bytes_written = 0;  ///< of those, what the protocol found written since the last publish
  std::uint64_t wait_ns = 0;        ///< the writer waited for readers to leave a buffer
  std::uint64_t publish_ns = 0;     ///< the writer spent in publish, waiting included
};

class versioned_object {
 public:
  /// `words` is where the version table lives (host memory, sizeof(version_words), pinned and mapped
  /// where a GPU reads it): the caller owns it, and it must outlive the object.
  versioned_object(versioned_object_config config, version_words* words);
  ~versioned_object();
  versioned_object(const versioned_object&) = delete;
  versioned_object& operator=(const versioned_object&) = delete;

  const std::string& name() const noexcept { return config_.name; }
  std::uint64_t bytes() const noexcept { return config_.bytes; }
  std::uint32_t versions() const noexcept { return config_.versions; }

  /// GPU readers' buffers, before the readers start and while nothing publishes: the versions so far are
  /// copied in at once.
  void attach_replica(std::unique_ptr<version_replica> replica);
  /// The readers' view on the host, and on the replica's side (the host's without a replica).
  version_table_view host_view() const;
  version_table_view replica_view() const;
  /// The host buffers (to pin for a replica's copies): [versions × stride].
  std::span<std::byte> host_buffers() noexcept { return {buffers_, stride_ * config_.versions}; }

  /// The writer's working copy.
  std::span<std::byte> working_copy() const noexcept { return {working_, config_.bytes}; }

  /// Publishes the working copy as the version of frames from `offset` on; `wait_for_readers(below)` must
  /// return once every reader released every frame below `below` (it may throw to abandon the publish: a
  /// failed run). Throws std::invalid_argument for an offset below the horizon. Returns the version's number.
  std::uint64_t publish(std::uint64_t offset, const std::function<void(std::uint64_t)>& wait_for_readers);
  /// No version below `offset` will be published. A written object's horizon starts at 0 (frame 0 waits):
  /// the writer may publish at offset 0 until it promises 1 (the runtime does once the writer started).
  void promise(std::uint64_t offset);
  /// The writer finished its frame at `offset` (void frames too): once every frame below f is finished,
  /// versions below f + 1 are final (the writer publishes for frames after the one it handles).
  void finished_frame(std::uint64_t offset);
  /// The writer is done: every version is final.
  void close();
  std::uint64_t horizon() const;

  versioned_object_counters counters() const;

 private:
  class dirty_log;
  void raise_horizon(std::uint64_t h);  // horizon_mutex_ held

  versioned_object_config config_;
  version_words* words_;
  std::uint64_t stride_ = 0;
  std::uint64_t block_bytes_ = 0;
  std::uint32_t blocks_ = 0;
  std::byte* buffers_ = nullptr;    // host buffers [versions × stride], page-aligned
  std::unique_ptr<dirty_log> log_;  // the object space's accelerator: what each publish moved
  std::unique_ptr<object_space> space_;
  std::byte* working_ = nullptr;
  std::unique_ptr<version_replica> replica_;
  /// Per block, the last version that changed it (0: the initial one).
  std::vector<std::uint64_t> block_version_;
  std::mutex publish_mutex_;  // one publish at a time; never held while taking horizon_mutex_ for long
  std::atomic<std::uint64_t> published_{0};
  std::vector<std::uint64_t> first_of_;  // [versions]: first offset of the version each buffer holds
  mutable std::mutex horizon_mutex_;
  std::uint64_t horizon_ = 0;
  std::uint64_t frontier_ = 0;        // every writer frame below it finished
  std::set<std::uint64_t> finished_;  // finished frames at or above the frontier
  std::atomic<std::uint64_t> bytes_moved_{0}, bytes_written_{0}, wait_ns_{0}, publish_ns_{0};
};

}  // namespace xf::shared
