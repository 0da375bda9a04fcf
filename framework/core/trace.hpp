// The run's timeline, for `--trace`: spans and instants recorded by every layer's threads (CPU operators'
// hooks, the copy engines' bridges, the file cache's I/O threads, the kernel's rounds drained from the GPU)
// into per-thread buffers, and read once at the end into the Chrome trace event format
// (framework/runtime/trace_file.hpp). Off unless started: a hook then costs one relaxed load. Bounded: past
// `max_events` events are counted, not kept. On the host threads each span is also an NVTX range (CUDA
// builds), so Nsight Systems shows the same spans without --trace.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace xf::trace {

/// What a track is (a Chrome trace "thread"): its name and where it sorts.
struct track {
  std::string name;
  std::uint32_t id = 0;
  std::uint32_t order = 0;  ///< smaller first in the viewer
};

struct event {
  std::uint64_t start_ns = 0;     ///< host steady clock
  std::uint64_t duration_ns = 0;  ///< 0 with instant
  std::uint64_t arg = 0;          ///< the offset, the round, … (named by the name's arg_name)
  std::uint32_t name = 0;         ///< index into names()
  std::uint32_t track = 0;        ///< a track's id
  bool instant = false;
  bool has_arg = false;
};

struct name_entry {
  std::string name;
  std::string category;  ///< "operator", "round", "copy", "io", "tuning"
  std::string arg_name;  ///< what event::arg is ("offset", "round", "bytes"); empty: none
};

/// Whether recording is on (one relaxed load: what every hook checks first).
bool enabled() noexcept;

/// Starts recording: clears what an earlier run left, keeps at most `max_events` events, and records one
/// CPU operator frame in `sample_every` (and the kernel's rounds of one block in `sample_every`).
void start(std::uint64_t max_events, std::uint32_t sample_every);
/// Stops recording (what was recorded stays until the next start).
void stop();
std::uint32_t sample_every() noexcept;

/// A name events refer to, made once (not per event): same name and category, same index.
std::uint32_t intern(const std::string& name, const std::string& category, const std::string& arg_name = "");
/// A track of its own for something that is not one host thread (a kernel block, a copy stream).
std::uint32_t new_track(const std::string& name, std::uint32_t order);
/// Names the calling thread's track (a CPU operator's worker, an I/O thread).
void name_this_thread(const std::string& name, std::uint32_t order);
/// The calling thread's track.
std::uint32_t this_thread_track();

/// Records a span on the calling thread's track, or on `track` (a drained kernel block's).
void span(std::uint32_t name, std::uint64_t start_ns, std::uint64_t end_ns, std::uint64_t arg, bool has_arg,
          std::uint32_t track = 0);
void instant(std::uint32_t name, std::uint64_t at_ns, std::uint64_t arg, bool has_arg,
             std::uint32_t track = 0);

/// NVTX: a range on the calling thread for Nsight Systems (CUDA builds; nothing otherwise).
void nvtx_push(const char* name) noexcept;
void nvtx_pop() noexcept;

/// Host steady-clock nanoseconds, the events' clock.
std::uint64_t now_ns() noexcept;

/// Everything recorded (events in no particular order), the names, the tracks, and how many events did
/// not fit.
struct recording {
  std::vector<event> events;
  std::vector<name_entry> names;
  std::vector<track> tracks;
  std::uint64_t dropped = 0;
  std::uint32_t sample_every = 1;
};
recording collect();

}  // namespace xf::trace
