// The host I/O threads behind the file cache: they pop request slots off the request ring, read
// the bytes into each slot's staging area with pread, and answer on the slot's completion line.
//
// Work distribution is the fix of the XeFlow paper's §3.3: GPUfs gave each I/O thread a fixed range of
// request slots, so one block's large requests kept one thread busy while others idled. Here every thread
// takes the next request from the one ring, and a request larger than `chunk_bytes` is split: its taker
// reads the first chunk and leaves the rest in a chunk queue that every thread drains before it takes a new
// request; whoever reads a request's last chunk answers it. No slot number or block id ties work to a
// thread, so no thread idles while a chunk waits.
//
// Faults: a failed read answers its request with the status (the reader stops waiting) and becomes the
// run's error, naming the operator, topic and frame offset of the reader, the path, and the byte offset.
// The executor polls `poll()`, which also runs the I/O watchdog: a request older than the watchdog fails
// the run, since a waiting GPU lane keeps looping and the kernel's heartbeat cannot see a hung disk.
// After the first error, new requests are answered `stopped` at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "framework/core/errors.hpp"
#include "framework/files/file_cache_spec.hpp"
#include "framework/files/file_table.hpp"
#include "framework/files/request_ring.hpp"
#include "framework/files/request_slot.hpp"

namespace xf {

struct io_service_options {
  unsigned threads = 4;
  /// Requests longer than this are split among threads (the paper's imbalance begins near 128 KiB; why the
  /// default is longer: file_cache_spec::io_chunk). A multiple of 4096, so every chunk of a direct file
  /// starts aligned.
  std::uint64_t chunk_bytes = file_cache_spec{}.io_chunk;
  /// A request older than this fails the run; zero: no watchdog.
  std::chrono::milliseconds watchdog{0};
};

/// Counted by each I/O thread for itself.
struct io_thread_stats {
  std::uint64_t requests = 0;  ///< requests taken off the ring
  std::uint64_t chunks = 0;    ///< reads made (a request's chunks, its own or another's)
  std::uint64_t bytes = 0;     ///< bytes read
  std::uint64_t busy_ns = 0;   ///< time inside reads
};

/// The slots' memory: `slots[i]`'s bytes go to staging[i * staging_bytes, (i + 1) * staging_bytes).
struct request_slots_view {
  std::span<request_slot> slots;
  std::byte* staging = nullptr;
  std::uint64_t staging_bytes = 0;  ///< per slot: a multiple of 4096, aligned like staging
};

class io_service {
 public:
  /// Names the reader of a request in a fault: its operator (index `op`) and topic, and `frame_offset`.
  using site_of_request = std::function<fault_site(std::uint32_t op, std::uint64_t frame_offset)>;

  io_service(const file_table& files, request_ring_view ring, request_slots_view slots,
             site_of_request site_of, io_service_options options);
  ~io_service();
  io_service(const io_service&) = delete;
  io_service& operator=(const io_service&) = delete;

  void start();
  /// Joins the threads; requests still rung or in flight are answered `stopped`. Idempotent.
  void stop();

  /// The first error (a failed read, a request the watchdog gave up on), if any; runs the watchdog. Called
  /// by the executor's poll loop; thread-safe.
  std::optional<run_error> poll();

  /// Per thread; exact once stopped, a live reading before.
  std::vector<io_thread_stats> stats() const;

 private:
  struct chunk {
    std::uint64_t seq;  ///< the request it belongs to (skipped once that request was answered)
    std::uint32_t slot;
    std::uint32_t index;
  };
  /// The host's side of a slot while its request is served (its request line is the GPU's).
  struct progress {
    std::atomic<std::uint64_t> seq{0};  ///< the request being served; 0: none
    std::atomic<std::uint32_t> chunks_left{0};
    std::atomic<std::int32_t> status{0};      ///< the first failed chunk's file_status
    std::atomic<std::int64_t> started_ns{0};  ///< steady clock at take; 0 once answered
  };
  struct thread_counters {
    std::atomic<std::uint64_t> requests{0}, chunks{0}, bytes{0}, busy_ns{0};
  };

  void run(unsigned thread);
  bool take_chunk(chunk& c);
  void begin(std::uint32_t slot, thread_counters& counters);
  /// Why a request cannot be served as written (a reader's bug, not the disk's), or "".
  std::string malformed(const file_request& r) const;
  void serve(chunk c, thread_counters& counters);
  /// An armed cache_read fault for this chunk (fault_injection.hpp): fills `out` as the fault would and
  /// returns true, or returns false to read for real.
  bool injected_read(const file_request& r, chunk c, std::uint64_t first, std::uint64_t bytes,
                     read_outcome& out);
  /// Answers slot's request once: the first caller for its seq wins (a late reader after a timeout loses).
  void answer(std::uint32_t slot, std::uint64_t seq, file_status status, std::uint64_t bytes);
  void fail(run_error error);
  std::uint32_t chunks_of(const file_request& r) const;

  const file_table& files_;
  request_ring_view ring_;
  request_slots_view slots_;
  site_of_request site_of_;
  io_service_options options_;
  std::unique_ptr<progress[]> progress_;
  std::unique_ptr<thread_counters[]> counters_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::uint32_t trace_read_ = 0;  ///< --trace: a chunk's read, by name
  std::atomic<bool> failed_{false};
  std::mutex chunks_mutex_;
  std::deque<chunk> chunks_;
  mutable std::mutex error_mutex_;
  std::optional<run_error> error_;
};

}  // namespace xf
