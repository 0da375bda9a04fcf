// xeflow-bridge-bench: a topic carried between two MPI ranks (framework/mpi/topic_link.hpp, the bridge of
// ranked runs) against raw MPI of the same library, on the same two ranks, in the same run. For each frame
// size, interleaved size by size and repeated:
//   mpi_stream      rank 0 Isends `frames` messages of the frame size keeping `capacity` of them in flight
//                   (one buffer each), rank 1 keeps `capacity` Irecvs posted and checks each message's
//                   first and last 8 bytes (its index) as it completes
//   bridge_stream   rank 0: a publisher thread reserves and publishes `frames` frames into a host topic of
//   session_stream  that capacity (whole frames valid, only their first and last 8 bytes written, so that
//                   neither contender touches the data) while the main thread runs the link's sending end
//                   on the topic's one group; rank 1: the link's receiving end publishes into a topic of
//                   the same capacity and a subscriber thread takes, checks and releases every offset. The
//                   link ends are stepped by mpi::run_link (bridge_stream) or as the launcher's session
//                   thread steps them (session_stream)
//   mpi_one_way     MPI_Send/MPI_Recv ping-pong, round trip / 2, at 8 bytes and at the frame size
//   bridge_one_way  two topics of `latency-capacity` slots, one carried each way; rank 0's thread
//                   publishes offset k on the first and waits for offset k on the second, rank 1's thread
//                   takes k from the first and publishes it on the second; each rank's main thread steps
//                   both of its link ends
// Streams are timed from a barrier to each rank's last completion, the slower rank counting; one-way times
// are rank 0's. Every message and frame is checked (order, count, size, its stamped index), and a bridge
// measurement has a deadline: a wrong frame or a hang ends the job with the reason and exit code 1. Exit
// code 3: a bad command line, not two ranks, or an MPI library without MPI_THREAD_FUNNELED.
//
//   mpirun -n 2 build-rel/bench/ranks/xeflow-bridge-bench --json bridge.json
//   python3 bench/ranks/plot_bridge.py bridge.json        # bridge.png next to it
#include <mpi.h>
#if XF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/common/json_output.hpp"
#include "framework/core/backoff.hpp"
#include "framework/core/errors.hpp"
#include "framework/core/page_buffer.hpp"
#include "framework/core/timer_slack.hpp"
#include "framework/core/units.hpp"
#include "framework/core/worker_team.hpp"
#include "framework/mpi/mpi_error.hpp"
#include "framework/mpi/topic_link.hpp"
#include "topics/topic.hpp"
#include "topics/topic_driver.hpp"

namespace xf::mpi::bench {
namespace {

using json = nlohmann::json;
using u64 = std::uint64_t;

constexpr const char* program = "xeflow-bridge-bench";
constexpr int exit_failed = 1, exit_usage = 3;
constexpr int stream_tag = 1, pingpong_tag = 2;

/// How the main thread drives a streaming link end: mpi::run_link (one wait_until over the whole stream,
/// whose backoff never starts again: after its first few hundred steps every step is followed by a sleep),
/// or the launcher's session loop (framework/launch/mpi_rank_session.cpp: the backoff starts again after
/// every step that moved a frame or a credit). Both are measured by default, since they differ at small
/// frames.
enum class link_loop { run_link, session };

struct options {
  std::vector<u64> sizes;
  std::uint32_t capacity = 64;
  u64 bytes = GiB;
  int repeats = 3;
  int round_trips = 2000, min_round_trips = 100, warmup = 50;
  std::uint32_t latency_capacity = 2;
  std::uint32_t timer_slack_us = 1;
  double deadline_s = 120;
  std::vector<link_loop> loops{link_loop::run_link, link_loop::session};
  bool quick = false;
  std::string json_path, commit;

  /// Frames of one streaming measurement: --bytes of them, and at least two windows so the window fills.
  u64 frames(u64 frame_bytes) const {
    return std::max<u64>((bytes + frame_bytes - 1) / frame_bytes, 2 * u64{capacity});
  }
  /// Round trips at a size: --round-trips up to 64 KiB, fewer in proportion above (large frames' round
  /// trips are long and vary little), never below --min-round-trips.
  int round_trips_at(u64 frame_bytes) const {
    const u64 scaled = u64(round_trips) * std::min<u64>(frame_bytes, 64 * KiB) / frame_bytes;
    return static_cast<int>(std::max<u64>(scaled, u64(min_round_trips)));
  }
};

u64 now_ns() {
  return static_cast<u64>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now().time_since_epoch())
                              .count());
}

/// A run that went wrong: frames out of order, a wrong count or size, a stamp that did not arrive.
class run_failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- what each message and frame carries ------------------------------------------------------------

/// Writes the index into the first 8 bytes and its complement into the last 8: a message or frame moved
/// whole and in order keeps both, and nothing else of it is touched (the contenders move bytes, not make
/// them).
void stamp(std::byte* data, u64 bytes, u64 index) {
  const u64 last = ~index;
  std::memcpy(data, &index, 8);
  if (bytes >= 16) std::memcpy(data + bytes - 8, &last, 8);
}

bool stamped(const std::byte* data, u64 bytes, u64 index) {
  u64 first = 0, last = ~index;
  std::memcpy(&first, data, 8);
  if (bytes >= 16) std::memcpy(&last, data + bytes - 8, 8);
  return first == index && last == ~index;
}

/// Page-aligned bytes written once before use, so that no contender pays for first-touch page faults in
/// its timing (host_topic_memory clears a topic's frames the same way).
page_buffer cleared(u64 bytes) {
  page_buffer b(bytes);
  std::memset(b.data(), 0, bytes);
  return b;
}

// ---- threads and link ends --------------------------------------------------------------------------

/// The first failure among the threads of one measurement; recording it stops the others (the abort
/// flag unwinds every topic wait and the link loops).
class first_failure {
 public:
  explicit first_failure(std::atomic<bool>& abort) : abort_(abort) {}

  /// Runs body, recording what escapes it under `who`. run_aborted is another thread's failure.
  template <class Body>
  void guard(const std::string& who, Body&& body) {
    try {
      body();
    } catch (const run_aborted&) {
      if (!abort_.load()) record(who + ": aborted");
    } catch (const std::exception& e) {
      record(who + ": " + e.what());
    } catch (...) {
      record(who + ": unknown exception");
    }
  }
  void record(std::string what) {
    {
      std::lock_guard lock(mutex_);
      if (first_.empty()) first_ = std::move(what);
    }
    abort_.store(true);
  }
  /// Throws run_failure naming `measurement` when a thread failed.
  void rethrow(const std::string& measurement) {
    std::lock_guard lock(mutex_);
    if (!first_.empty()) throw run_failure(measurement + ": " + first_);
  }

 private:
  std::atomic<bool>& abort_;
  std::mutex mutex_;
  std::string first_;
};

/// Runs the threads of one bridge measurement: `link` (the link ends) on this thread, the only one that
/// calls MPI, `worker` (the topic's publisher or reader) on the team's second, and on its third a watchdog
/// that fails the measurement when they are not done within `deadline_s`: a bridge that lost a frame
/// would otherwise leave both ranks waiting for ever. Returns when the later of the two finished (now_ns),
/// which is the end of a timing: the team's own return comes a wake-up later. Throws run_failure naming
/// `what` and the first thread that failed; the bodies' waits must give up once `abort` is set.
template <class Link, class Worker>
u64 run_threads(worker_team& team, std::atomic<bool>& abort, double deadline_s, const std::string& what,
                const std::string& link_name, Link&& link, const std::string& worker_name, Worker&& worker) {
  first_failure failure(abort);
  std::mutex mutex;
  std::condition_variable finished;
  int running = 2;
  u64 done_ns = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             std::chrono::duration<double>(deadline_s));
  team.run([&](unsigned thread) {
    if (thread == 2) {
      std::unique_lock lock(mutex);
      if (!finished.wait_until(lock, deadline, [&] { return running == 0; }))
        failure.record("not done within " + std::to_string(static_cast<int>(deadline_s)) +
                       " s (--deadline-s): a frame lost, or a wait that never ends");
      return;
    }
    if (thread == 0)
      failure.guard(link_name, link);
    else
      failure.guard(worker_name, worker);
    const u64 now = now_ns();
    {
      std::lock_guard lock(mutex);
      if (--running == 0) done_ns = now;
    }
    finished.notify_one();
  });
  failure.rethrow(what);
  return done_ns;
}

/// Steps one link end unless it is done; true when the step moved a frame or a credit, or finished.
template <class End>
bool step_end(End& end, bool& done) {
  if (done) return false;
  const link_counters before = end.counters();
  done = end.step();
  const link_counters& after = end.counters();
  return done || after.frames != before.frames || after.credit_messages != before.credit_messages;
}

/// Steps every end until all are done, as the launcher's session thread steps a rank's bridges: a step
/// that moved something starts the backoff again, so a busy link is stepped without sleeping and an idle
/// one costs little. Throws run_aborted once `abort` is set.
template <class... Ends>
void step_until_done(const std::atomic<bool>& abort, Ends&... ends) {
  std::array<bool, sizeof...(Ends)> done{};
  backoff idle;
  for (;;) {
    bool moved = false;
    std::size_t i = 0;
    ((moved |= step_end(ends, done[i++])), ...);
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; })) return;
    if (abort.load(std::memory_order_relaxed)) throw run_aborted();
    if (moved)
      idle = backoff{};
    else
      idle.pause();
  }
}

template <class End>
void drive(link_loop loop, End& end, const std::atomic<bool>& abort) {
  if (loop == link_loop::run_link)
    run_link(end, abort);
  else
    step_until_done(abort, end);
}

topic_config host_topic(std::string name, u64 frame_bytes, std::uint32_t capacity) {
  topic_config c;
  c.name = std::move(name);
  c.frame_bytes = frame_bytes;
  c.capacity = capacity;
  c.groups = 1;      // the link's sending end, or the reading thread on the receiving side
  c.publishers = 1;  // the writing thread, or the link's receiving end
  return c;
}

// ---- the measurements -------------------------------------------------------------------------------

struct ranks {
  int rank = 0;
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_Comm raw = MPI_COMM_NULL;     ///< raw MPI's streams and ping-pongs
  MPI_Comm stream = MPI_COMM_NULL;  ///< the streaming link
  MPI_Comm there = MPI_COMM_NULL;   ///< the latency link 0 → 1
  MPI_Comm back = MPI_COMM_NULL;    ///< the latency link 1 → 0

  int peer() const { return 1 - rank; }
  call_site site(int tag = -1) const { return call_site{rank, peer(), tag}; }
};

/// The slower rank's seconds, on rank 0 (and rank 1's own on rank 1).
double slower(const ranks& r, double seconds) {
  double max = 0;
  XF_MPI_TRY(MPI_Reduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, 0, r.world), r.site());
  return r.rank == 0 ? max : seconds;
}

/// Raw MPI streaming: seconds for `frames` messages with `window` in flight.
double mpi_stream(const ranks& r, u64 frame_bytes, u64 frames, std::uint32_t window,
                  const std::string& what) {
  page_buffer buffers = cleared(frame_bytes * window);
  const auto buffer = [&](u64 i) { return buffers.data() + (i % window) * frame_bytes; };
  std::vector<MPI_Request> requests(window, MPI_REQUEST_NULL);
  const int count = static_cast<int>(frame_bytes);
  const call_site site = r.site(stream_tag);
  XF_MPI_TRY(MPI_Barrier(r.world), r.site());
  const u64 start = now_ns();
  if (r.rank == 0) {
    for (u64 i = 0; i < frames; ++i) {
      MPI_Request& request = requests[i % window];
      XF_MPI_TRY(MPI_Wait(&request, MPI_STATUS_IGNORE), site);  // the buffer's previous message has left
      stamp(buffer(i), frame_bytes, i);
      XF_MPI_TRY(MPI_Isend(buffer(i), count, MPI_BYTE, 1, stream_tag, r.raw, &request), site);
    }
    XF_MPI_TRY(MPI_Waitall(static_cast<int>(window), requests.data(), MPI_STATUSES_IGNORE), site);
  } else {
    for (u64 i = 0; i < std::min<u64>(window, frames); ++i)
      XF_MPI_TRY(MPI_Irecv(buffer(i), count, MPI_BYTE, 0, stream_tag, r.raw, &requests[i]), site);
    for (u64 i = 0; i < frames; ++i) {
      MPI_Request& request = requests[i % window];
      MPI_Status status;
      XF_MPI_TRY(MPI_Wait(&request, &status), site);
      int got = 0;
      XF_MPI_TRY(MPI_Get_count(&status, MPI_BYTE, &got), site);
      if (got != count || !stamped(buffer(i), frame_bytes, i))
        throw run_failure(what + ": message " + std::to_string(i) + " arrived with " + std::to_string(got) +
                          " bytes" + (got == count ? " and another message's stamp" : ""));
      if (i + window < frames)
        XF_MPI_TRY(MPI_Irecv(buffer(i), count, MPI_BYTE, 0, stream_tag, r.raw, &request), site);
    }
  }
  return slower(r, static_cast<double>(now_ns() - start) * 1e-9);
}

/// What the bridge's ends counted in one stream.
struct bridge_stream_result {
  double seconds = 0;
  u64 credit_messages = 0;  ///< sent by rank 1's end
  u64 credit_wait_ns = 0;   ///< rank 0's end: published frames waiting for rank 1's credit
};

/// The bridge streaming `frames` frames from rank 0's topic to rank 1's.
bridge_stream_result bridge_stream(const ranks& r, worker_team& team, const options& o, link_loop loop,
                                   u64 frame_bytes, u64 frames, const std::string& what) {
  host_topic_memory memory;
  std::atomic<bool> abort{false};
  topic t(host_topic(r.rank == 0 ? "stream" : "stream (carried)", frame_bytes, o.capacity), memory);
  const topic_view& v = t.view();
  link_counters counters;
  double seconds = 0;
  if (r.rank == 0) {
    topic_link_sender link(v, 0, r.stream, 1);
    XF_MPI_TRY(MPI_Barrier(r.world), r.site());
    const u64 start = now_ns();
    const u64 end = run_threads(
        team, abort, o.deadline_s, what, "rank 0's link end", [&] { drive(loop, link, abort); },
        "rank 0's publisher",
        [&] {
          for (u64 offset = 0; offset < frames; ++offset) {
            const publish_ticket ticket = reserve_at(v, t.name(), offset, abort);
            stamp(ticket.data, frame_bytes, offset);
            publish_frame(v, ticket, frame_bytes, offset);
          }
          v.close(frames);
        });
    seconds = static_cast<double>(end - start) * 1e-9;
    counters = link.counters();
  } else {
    topic_link_receiver link(v, t.name(), r.stream, 0);
    XF_MPI_TRY(MPI_Barrier(r.world), r.site());
    const u64 start = now_ns();
    const u64 end = run_threads(
        team, abort, o.deadline_s, what, "rank 1's link end", [&] { drive(loop, link, abort); },
        "rank 1's subscriber",
        [&] {
          for (u64 expected = 0;; ++expected) {
            const delivery d = next_frame(v, 0, abort);
            if (d.ended) {
              if (d.offset != frames || expected != frames)
                throw run_failure("the stream ended at offset " + std::to_string(d.offset) + " after " +
                                  std::to_string(expected) + " frames of " + std::to_string(frames));
              return;
            }
            if (d.offset != expected)
              throw run_failure("offset " + std::to_string(d.offset) + " arrived where " +
                                std::to_string(expected) + " was next");
            if (d.is_void() || d.slot->bytes != frame_bytes || !stamped(d.data(v), frame_bytes, d.offset))
              throw run_failure(
                  "offset " + std::to_string(d.offset) + " arrived with " +
                  (d.is_void() ? std::string("no frame")
                               : std::to_string(d.slot->bytes) + " bytes" +
                                     (d.slot->bytes == frame_bytes ? " and another offset's stamp" : "")));
            v.release(0, d.offset);
          }
        });
    seconds = static_cast<double>(end - start) * 1e-9;
    counters = link.counters();
  }
  if (counters.frames != frames)
    throw run_failure(what + ": rank " + std::to_string(r.rank) + "'s link end counted " +
                      std::to_string(counters.frames) + " frames of " + std::to_string(frames));
  bridge_stream_result result;
  result.seconds = slower(r, seconds);
  // Rank 1's credit count joins rank 0's credit wait on rank 0.
  u64 mine[2] = {counters.credit_messages, counters.credit_wait_ns}, both[2][2] = {};
  XF_MPI_TRY(MPI_Gather(mine, 2, MPI_UINT64_T, both, 2, MPI_UINT64_T, 0, r.world), r.site());
  result.credit_messages = both[1][0];
  result.credit_wait_ns = both[0][1];
  return result;
}

/// One repeat's one-way times (round trip / 2, µs): their median, best and 90th percentile.
struct one_way {
  double median_us = 0, min_us = 0, p90_us = 0;
};

one_way summarize(std::vector<double> us) {
  if (us.empty()) return {};
  std::sort(us.begin(), us.end());
  const std::size_t n = us.size();
  return one_way{n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2, us.front(),
                 us[std::min(n - 1, n * 9 / 10)]};
}

/// MPI_Send/MPI_Recv ping-pong of `bytes`; rank 0's one-way times (rank 1's are empty). As in the
/// bridge's ping-pong, each rank receives into one buffer and sends from another, rank 1 stamping the
/// round trip's index into what it sends back; both check what arrived.
std::vector<double> mpi_pingpong(const ranks& r, u64 bytes, int round_trips, int warmup,
                                 const std::string& what) {
  page_buffer in = cleared(bytes), out = cleared(bytes);
  const int count = static_cast<int>(bytes);
  const call_site site = r.site(pingpong_tag);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(round_trips));
  const auto check = [&](const MPI_Status& status, u64 k) {
    int got = 0;
    XF_MPI_TRY(MPI_Get_count(&status, MPI_BYTE, &got), site);
    if (got != count || !stamped(in.data(), bytes, k))
      throw run_failure(what + ": round trip " + std::to_string(k) + "'s message arrived with " +
                        std::to_string(got) + " bytes" +
                        (got == count ? " and another round trip's stamp" : ""));
  };
  XF_MPI_TRY(MPI_Barrier(r.world), r.site());
  for (int k = 0; k < warmup + round_trips; ++k) {
    MPI_Status status;
    if (r.rank == 0) {
      const u64 start = now_ns();
      stamp(out.data(), bytes, u64(k));
      XF_MPI_TRY(MPI_Send(out.data(), count, MPI_BYTE, 1, pingpong_tag, r.raw), site);
      XF_MPI_TRY(MPI_Recv(in.data(), count, MPI_BYTE, 1, pingpong_tag, r.raw, &status), site);
      const u64 end = now_ns();
      check(status, u64(k));
      if (k >= warmup) us.push_back(static_cast<double>(end - start) * 1e-3 / 2);
    } else {
      XF_MPI_TRY(MPI_Recv(in.data(), count, MPI_BYTE, 0, pingpong_tag, r.raw, &status), site);
      check(status, u64(k));
      stamp(out.data(), bytes, u64(k));
      XF_MPI_TRY(MPI_Send(out.data(), count, MPI_BYTE, 0, pingpong_tag, r.raw), site);
    }
  }
  return us;
}

/// The bridge's ping-pong: topic "there" carried 0 → 1, "back" carried 1 → 0, `frame_bytes` frames of
/// `capacity` slots. Rank 0's one-way times.
std::vector<double> bridge_pingpong(const ranks& r, worker_team& team, const options& o, u64 frame_bytes,
                                    int round_trips, int warmup, const std::string& what) {
  host_topic_memory memory;
  std::atomic<bool> abort{false};
  const bool writes_there = r.rank == 0;
  topic there(host_topic(writes_there ? "there" : "there (carried)", frame_bytes, o.latency_capacity),
              memory);
  topic back(host_topic(writes_there ? "back (carried)" : "back", frame_bytes, o.latency_capacity), memory);
  const topic_view &out = writes_there ? there.view() : back.view(),
                   &in = writes_there ? back.view() : there.view();
  const topic& out_topic = writes_there ? there : back;
  const u64 total = u64(warmup + round_trips);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(round_trips));

  // Takes offset k from `in` and checks it; the caller releases it.
  const auto take = [&](u64 k) {
    const delivery d = next_frame(in, 0, abort);
    if (d.ended || d.offset != k)
      throw run_failure((d.ended ? "the stream ended at offset " : "offset ") + std::to_string(d.offset) +
                        (d.ended ? " before " : " arrived where ") + std::to_string(k) +
                        (d.ended ? "" : " was next"));
    if (d.is_void() || d.slot->bytes != frame_bytes || !stamped(d.data(in), frame_bytes, k))
      throw run_failure("offset " + std::to_string(k) + " arrived changed");
  };
  const auto give = [&](u64 k) {
    const publish_ticket ticket = reserve_at(out, out_topic.name(), k, abort);
    stamp(ticket.data, frame_bytes, k);
    publish_frame(out, ticket, frame_bytes, k);
  };
  const auto expect_end = [&] {
    const delivery d = next_frame(in, 0, abort);
    if (!d.ended || d.offset != total)
      throw run_failure("offset " + std::to_string(d.offset) + (d.ended ? " ended" : " arrived") +
                        " where the stream should have ended at " + std::to_string(total));
  };

  topic_link_sender sending(out, 0, writes_there ? r.there : r.back, r.peer());
  topic_link_receiver receiving(in, writes_there ? back.name() : there.name(),
                                writes_there ? r.back : r.there, r.peer());
  XF_MPI_TRY(MPI_Barrier(r.world), r.site());
  // Rank 0's thread times each round trip; rank 1's answers it.
  const auto ping = [&] {
    for (u64 k = 0; k < total; ++k) {
      const u64 start = now_ns();
      give(k);
      take(k);
      in.release(0, k);
      const u64 end = now_ns();
      if (k >= u64(warmup)) us.push_back(static_cast<double>(end - start) * 1e-3 / 2);
    }
    out.close(total);
    expect_end();
  };
  const auto echo = [&] {
    for (u64 k = 0; k < total; ++k) {
      take(k);
      in.release(0, k);  // before publishing back: the slot's credit travels while the echo does
      give(k);
    }
    out.close(total);
    expect_end();
  };
  const std::string rank = "rank " + std::to_string(r.rank);
  run_threads(
      team, abort, o.deadline_s, what, rank + "'s link ends",
      [&] { step_until_done(abort, sending, receiving); }, rank + (r.rank == 0 ? "'s pinger" : "'s echo"),
      [&] { r.rank == 0 ? ping() : echo(); });
  return us;
}

// ---- the stamp ----------------------------------------------------------------------------------------

/// /proc/cpuinfo's first "model name", or "unknown CPU".
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      const auto model = colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
      if (model != std::string::npos) return line.substr(model);
    }
  return "unknown CPU";
}

/// The first GPU's name where the build has CUDA and the machine a GPU; empty otherwise.
std::string gpu_name() {
#if XF_HAVE_CUDA
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    return "";
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return prop.name;
#else
  return "";
#endif
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  XF_MPI_TRY(MPI_Get_library_version(text, &length), call_site{});
  std::string s(text, static_cast<std::size_t>(length));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

/// Both ranks' host names, on rank 0.
std::vector<std::string> host_names(const ranks& r) {
  char mine[MPI_MAX_PROCESSOR_NAME] = {}, both[2][MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  XF_MPI_TRY(MPI_Get_processor_name(mine, &length), r.site());
  XF_MPI_TRY(
      MPI_Gather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, both, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, r.world),
      r.site());
  return {both[0], both[1]};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// A streaming contender's repeats: seconds, and for the bridge what its ends counted.
struct stream_samples {
  std::vector<double> seconds, credit_per_frame, credit_wait_ms;
};

/// The median rate of the repeats and every repeat's numbers.
json stream_json(const stream_samples& s, u64 moved) {
  std::vector<double> gbps;
  for (double seconds : s.seconds) gbps.push_back(static_cast<double>(moved) / seconds * 1e-9);
  json out{{"gbps", median(gbps)}, {"samples_gbps", gbps}, {"samples_s", s.seconds}};
  if (!s.credit_per_frame.empty()) {
    out["samples_credit_messages_per_frame"] = s.credit_per_frame;
    out["samples_credit_wait_ms"] = s.credit_wait_ms;
  }
  return out;
}

/// A latency contender's repeats: the median of their medians, and each repeat's summary.
json latency_json(const std::vector<one_way>& repeats) {
  std::vector<double> medians, mins, p90s;
  for (const one_way& w : repeats) {
    medians.push_back(w.median_us);
    mins.push_back(w.min_us);
    p90s.push_back(w.p90_us);
  }
  return {{"one_way_us", median(medians)},
          {"samples_median_us", medians},
          {"samples_min_us", mins},
          {"samples_p90_us", p90s}};
}

// ---- the program ------------------------------------------------------------------------------------

int run(int argc, char** argv, int thread_level) {
  ranks r;
  int size = 0;
  XF_MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &r.rank), call_site{});
  XF_MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &size), call_site{r.rank});

  options o;
  std::string sizes = "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB", bytes, loop = "both";
  CLI::App app{"xeflow-bridge-bench: a topic carried between two MPI ranks against raw MPI (mpirun -n 2)"};
  app.add_option("--sizes", sizes,
                 "frame sizes, multiples of 4 KiB (default 4KiB,16KiB,64KiB,256KiB,1MiB,4MiB)");
  app.add_option("--capacity", o.capacity, "the stream topics' capacity = raw MPI's window (default 64)")
      ->check(CLI::Range(1u, 1u << 16));
  auto* bytes_option = app.add_option("--bytes", bytes, "bytes a streaming measurement moves (default 1GiB)");
  app.add_option("--repeats", o.repeats, "measurements of each kind at each size (default 3)")
      ->check(CLI::Range(1, 1000));
  auto* trips_option =
      app.add_option("--round-trips", o.round_trips,
                     "ping-pong round trips up to 64 KiB, fewer in proportion above (default 2000)")
          ->check(CLI::Range(1, 10'000'000));
  auto* min_trips_option = app.add_option("--min-round-trips", o.min_round_trips,
                                          "round trips at least, at any size (default 100)")
                               ->check(CLI::Range(1, 10'000'000));
  auto* warmup_option =
      app.add_option("--warmup", o.warmup, "untimed round trips before each ping-pong (default 50)")
          ->check(CLI::Range(0, 1'000'000));
  app.add_option("--latency-capacity", o.latency_capacity,
                 "the bridge ping-pong's topics' capacity (default 2; at large frames each slot is one "
                 "more frame the ping-pong cycles through, where MPI's cycles through one a side)")
      ->check(CLI::Range(1u, 1u << 16));
  app.add_option("--timer-slack-us", o.timer_slack_us,
                 "the threads' timer slack, as a run's runtime.timer_slack_us (default 1; 0 leaves it)")
      ->check(CLI::Range(0u, 1000u));
  app.add_option(
         "--link-loop", loop,
         "how the bridge stream's link ends are stepped: run_link (mpi::run_link), session (the "
         "launcher's loop, the backoff restarted on progress) or both (default); the ping-pong always "
         "uses session")
      ->check(CLI::IsMember({"run_link", "session", "both"}));
  app.add_option("--deadline-s", o.deadline_s,
                 "a bridge measurement not done by then fails the run (default 120)")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_flag("--quick", o.quick,
               "a smoke run: 16MiB a stream, 200 round trips (at least 20), 10 warm-up, unless given");
  app.add_option("--json", o.json_path, "write the results here (rank 0)");
  app.add_option("--commit", o.commit,
                 "the commit to stamp (default: git rev-parse of the working directory)");
  try {
    app.parse(argc, argv);
    std::stringstream list(sizes);
    for (std::string item; std::getline(list, item, ',');) {
      const auto v = parse_bytes(item);
      if (!v) throw CLI::ValidationError("--sizes", bytes_syntax_problem(item));
      if (*v == 0 || *v % (4 * KiB) != 0 || *v > u64(INT_MAX))
        throw CLI::ValidationError("--sizes",
                                   item + " is not a frame size (a multiple of 4 KiB, below 2 GiB)");
      o.sizes.push_back(*v);
    }
    if (o.sizes.empty()) throw CLI::ValidationError("--sizes", "no size given");
    if (o.quick) {
      o.bytes = 16 * MiB;
      if (trips_option->count() == 0) o.round_trips = 200;
      if (min_trips_option->count() == 0) o.min_round_trips = 20;
      if (warmup_option->count() == 0) o.warmup = 10;
    }
    if (bytes_option->count() != 0) {
      const auto v = parse_bytes(bytes);
      if (!v || *v == 0)
        throw CLI::ValidationError("--bytes", v ? "must be positive" : bytes_syntax_problem(bytes));
      o.bytes = *v;
    }
    if (loop != "both") o.loops = {loop == "session" ? link_loop::session : link_loop::run_link};
  } catch (const CLI::ParseError& e) {
    if (r.rank == 0) app.exit(e);  // the help or the error, once
    return e.get_exit_code() == 0 ? 0 : exit_usage;
  }
  if (size != 2) {
    if (r.rank == 0) std::fprintf(stderr, "%s: run it with mpirun -n 2 (got %d ranks)\n", program, size);
    return exit_usage;
  }
  if (thread_level < MPI_THREAD_FUNNELED) {
    // The link ends run on the main thread while the topics' threads run beside it.
    if (r.rank == 0)
      std::fprintf(stderr, "%s: the MPI library gives MPI_THREAD %d, the link needs MPI_THREAD_FUNNELED\n",
                   program, thread_level);
    return exit_usage;
  }

  // One communicator per link, as ranked runs have, and one for raw MPI; each measurement leaves none of
  // its messages unmatched, so the next one can use the same.
  for (MPI_Comm* c : {&r.raw, &r.stream, &r.there, &r.back}) {
    XF_MPI_TRY(MPI_Comm_dup(MPI_COMM_WORLD, c), r.site());
    XF_MPI_TRY(MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN), r.site());
  }
  // The threads inherit the slack from this one (worker_team starts them now).
  const scoped_timer_slack slack(u64{o.timer_slack_us} * 1000);
  worker_team team(3);  // this thread steps the link ends; a topic's thread; a watchdog (run_threads)

  const std::string cpu = cpu_model(), gpu = r.rank == 0 ? gpu_name() : "";
  const std::string library = library_version();
  const std::vector<std::string> hosts = host_names(r);
  const std::string device =
      cpu + " (host frames" + (gpu.empty() ? "" : "; GPU " + gpu + " present, not used") + ")";
  if (r.rank == 0) {
    std::printf(
        "%s\nMPI library %s\nranks on %s and %s; capacity %u (raw MPI's window), %s a stream at least, "
        "%d repeats, the bridge stream's link stepped by %s%s\n",
        device.c_str(), library.substr(0, library.find(',')).c_str(), hosts[0].c_str(), hosts[1].c_str(),
        o.capacity, format_bytes(o.bytes).c_str(), o.repeats, loop.c_str(), o.quick ? "; --quick" : "");
    std::printf("\n%9s %9s %11s %10s %12s %11s %11s %10s %10s %9s %12s\n", "frame", "MPI GB/s", "bridge GB/s",
                "bridge/MPI", "session GB/s", "session/MPI", "MPI 8 B us", "MPI S us", "bridge us",
                "added us", "added/MPI 8B");
    std::fflush(stdout);
  }

  json rows = json::array();
  const u64 start = now_ns();
  for (const u64 frame_bytes : o.sizes) {
    const u64 frames = o.frames(frame_bytes);
    const int trips = o.round_trips_at(frame_bytes);
    const std::string at = format_bytes(frame_bytes) + " frames";
    stream_samples mpi, bridge, session;
    std::vector<one_way> mpi_small, mpi_at, bridge_at;
    for (int rep = 0; rep < o.repeats; ++rep) {
      const std::string which = ", repeat " + std::to_string(rep + 1);
      mpi.seconds.push_back(
          mpi_stream(r, frame_bytes, frames, o.capacity, "raw MPI stream of " + at + which));
      for (const link_loop loop : o.loops) {
        const bool by_run_link = loop == link_loop::run_link;
        const bridge_stream_result b = bridge_stream(
            r, team, o, loop, frame_bytes, frames,
            std::string("bridge stream (") + (by_run_link ? "run_link" : "session") + ") of " + at + which);
        stream_samples& into = by_run_link ? bridge : session;
        into.seconds.push_back(b.seconds);
        into.credit_per_frame.push_back(static_cast<double>(b.credit_messages) / static_cast<double>(frames));
        into.credit_wait_ms.push_back(static_cast<double>(b.credit_wait_ns) * 1e-6);
      }
      mpi_small.push_back(
          summarize(mpi_pingpong(r, 8, o.round_trips, o.warmup, "MPI ping-pong of 8 B" + which)));
      mpi_at.push_back(
          summarize(mpi_pingpong(r, frame_bytes, trips, o.warmup, "MPI ping-pong of " + at + which)));
      bridge_at.push_back(summarize(
          bridge_pingpong(r, team, o, frame_bytes, trips, o.warmup, "bridge ping-pong of " + at + which)));
    }
    if (r.rank != 0) continue;
    const u64 moved = frames * frame_bytes;
    json row{{"frame_bytes", frame_bytes},
             {"frames", frames},
             {"stream_bytes", moved},
             {"round_trips", trips},
             {"round_trips_8B", o.round_trips},
             {"mpi_stream", stream_json(mpi, moved)},
             {"mpi_one_way_8B", latency_json(mpi_small)},
             {"mpi_one_way", latency_json(mpi_at)},
             {"bridge_one_way", latency_json(bridge_at)}};
    const double mpi_rate = row["mpi_stream"]["gbps"];
    // "-" in the table, null in the JSON, for a loop not measured (--link-loop).
    struct bridge_column {
      const char* key;
      const stream_samples& samples;
      int width;  ///< of the GB/s column in the table; the percentage's is one less
    };
    std::string rates;
    for (const bridge_column& c :
         {bridge_column{"bridge", bridge, 11}, bridge_column{"session", session, 12}}) {
      const std::string stream = std::string(c.key) + "_stream",
                        percent = std::string(c.key) + "_vs_mpi_percent";
      char cell[64];
      if (c.samples.seconds.empty()) {
        row[stream] = row[percent] = nullptr;
        std::snprintf(cell, sizeof cell, " %*s %*s", c.width, "-", c.width - 1, "-");
      } else {
        row[stream] = stream_json(c.samples, moved);
        const double rate = row[stream]["gbps"];
        row[percent] = 100 * rate / mpi_rate;
        std::snprintf(cell, sizeof cell, " %*.2f %*.1f%%", c.width, rate, c.width - 2, 100 * rate / mpi_rate);
      }
      rates += cell;
    }
    const double small_us = row["mpi_one_way_8B"]["one_way_us"], mpi_us = row["mpi_one_way"]["one_way_us"],
                 bridge_us = row["bridge_one_way"]["one_way_us"];
    row["added_us"] = bridge_us - mpi_us;
    row["added_vs_mpi_8B"] = (bridge_us - mpi_us) / small_us;
    std::printf("%9s %9.2f%s %11.2f %10.2f %10.2f %9.2f %11.1fx\n", format_bytes(frame_bytes).c_str(),
                mpi_rate, rates.c_str(), small_us, mpi_us, bridge_us, bridge_us - mpi_us,
                (bridge_us - mpi_us) / small_us);
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }
  for (MPI_Comm* c : {&r.raw, &r.stream, &r.there, &r.back}) XF_MPI_TRY(MPI_Comm_free(c), r.site());
  if (r.rank != 0) return 0;
  std::printf("\n%zu sizes, every frame and message checked, %.1f s\n", rows.size(),
              static_cast<double>(now_ns() - start) * 1e-9);

  if (!o.json_path.empty()) {
    json doc = ::xf::bench::stamped(program, device, o.commit, argc, argv);
    doc["cpu"] = cpu;
    doc["gpu"] = gpu.empty() ? json(nullptr) : json(gpu);
    doc["frames_in"] = "host memory (host_topic_memory; page-aligned host buffers for raw MPI)";
    doc["mpi_library"] = library;
    doc["mpi_thread_level"] = thread_level;
    doc["hosts"] = hosts;
    doc["options"] = {{"sizes", o.sizes},
                      {"capacity", o.capacity},
                      {"bytes", o.bytes},
                      {"repeats", o.repeats},
                      {"round_trips", o.round_trips},
                      {"min_round_trips", o.min_round_trips},
                      {"warmup", o.warmup},
                      {"latency_capacity", o.latency_capacity},
                      {"timer_slack_us", o.timer_slack_us},
                      {"deadline_s", o.deadline_s},
                      {"link_loop", loop},
                      {"quick", o.quick}};
    doc["timing"] = {
        {"stream",
         "barrier, then each rank's time to its last completion; the slower rank's; GB/s = 1e9 bytes/s; "
         "the median of the repeats"},
        {"one_way",
         "round trip / 2 on rank 0's wall clock; each repeat's median (and min, p90) over its round "
         "trips; the median of the repeats' medians"},
        {"bridge_stream", "the link ends stepped by mpi::run_link"},
        {"session_stream",
         "the link ends stepped as the launcher's session thread does (backoff restarted "
         "on progress)"},
        {"bridge_one_way",
         "both link ends of a rank stepped in one loop as the launcher's session thread "
         "does"},
        {"added_us", "bridge_one_way - mpi_one_way at the frame size"},
        {"added_vs_mpi_8B", "added_us / mpi_one_way_8B"}};
    doc["results"] = rows;
    if (!::xf::bench::write_json(o.json_path, doc, program)) return exit_failed;
  }
  return 0;
}

}  // namespace
}  // namespace xf::mpi::bench

// MPI at MPI_THREAD_FUNNELED (the topics' threads run beside the main thread, which alone calls MPI); an
// exception on either rank ends the whole job, since the other may be waiting for a message that will not
// come (bench/mpi/mpi_program.hpp does the same at MPI_THREAD_SINGLE).
int main(int argc, char** argv) {
  using namespace xf::mpi::bench;
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "%s: MPI_Init_thread failed\n", program);
    return exit_failed;
  }
  int rank = -1, code = exit_failed;
  try {
    XF_MPI_TRY(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), xf::mpi::call_site{});
    XF_MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &rank), xf::mpi::call_site{});
    code = run(argc, argv, provided);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %d: %s\n", program, rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_failed);
  }
  MPI_Finalize();
  return code;
}
