// The copy engines' path across PCIe: one host thread carries each bridged topic's frames and publishes.
#include "framework/gpu/copy_bridge.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>

#include "framework/core/backoff.hpp"
#include "framework/core/part_stacks.hpp"
#include "framework/core/system_atomic.hpp"
#include "framework/core/trace.hpp"

namespace xf {
// Named, not anonymous: copy_bridge::lane (declared in the header) holds these types, and a type with
// external linkage may not hold one of an anonymous namespace (g++: -Wsubobject-linkage in a unity build).
namespace copy_bridge_detail {

/// Largest copy the bridge issues: a run stops growing here so the first frames of a long backlog are
/// not held back behind the last (8 MiB takes ~170 µs on the link).
constexpr std::uint64_t max_run_bytes = 8 * 1024 * 1024;
/// A selecting route's run is sized by the bytes it is expected to copy (its frames' bytes times the share
/// of them the previous run kept), not by its frames' bytes: a run of 2 frames of 3.2 MiB whose index kept
/// 2 % of their pages costs its calls, its choice and its seq words for 130 KB, and a table pass paid that
/// ~300 times (H200, steady pass of Q3A's 7 queries on dma: 12.5 ms sized by frames, 3.1 ms sized by
/// copies; Q1 21.1 → 10.5 ms). At most this many frames, so choosing a run's parts overlaps the copies of
/// the run before.
constexpr std::uint64_t max_selecting_run_frames = 64;
/// Bytes kept in this many consecutive frames of a selecting run go as one 2-D copy. On the engines a 2-D
/// copy is always the cheaper (H100, the same 201 MB as 4 KiB pieces of 64 frames: 33.9 GB/s as 2-D copies,
/// 7.0 batched, 1.6 one call each; 64 KiB pieces: 53.1, 48.2, 17.2), but the bridge's thread spends about
/// 2.3 µs issuing a 2-D copy and 0.6 µs a batched part, and it sets a resident table's pace.
constexpr std::uint64_t min_stack_frames = 4;
/// A run smaller than this waits while it still grows: each run costs the engines a fixed few µs besides
/// its bytes (its seq words' copy, the gap between copies), which 64 KiB-frame runs issued
/// as soon as they were published paid ~13 times per MiB (measured on the H100: 24.5 GB/s against 39.7
/// for 4 MiB copies). A run that stopped growing goes after run_linger, so a slow stream's frames are
/// held only that long. 4 MiB (max 8 MiB, 8 streams) against 1 MiB (max 4 MiB, 4 streams), C(G)1C scale,
/// alternated on two H100 instances, medians of 9 runs: 64 KiB 39.13 vs 38.45 GB/s, 256 KiB 40.42 vs 40.32,
/// 1 MiB 40.23 vs 39.57; on a slower instance 36.8 vs 33.7–35.8 and 38.7 vs 33.3–35.7.
constexpr std::uint64_t min_run_bytes = 4 * 1024 * 1024;
/// How long a run below min_run_bytes that stopped growing still waits for more (a 64 KiB frame is
/// published every ~1.6 µs at 40 GB/s: one look finds the run unchanged too often).
constexpr auto run_linger = std::chrono::microseconds(5);
/// Streams per bridged topic, used in turn: one run's small copies overlap another's frames. Measured at
/// 64 KiB frames both ways (H100, 2026-11-23): 1 stream 32.9 GB/s, 4 streams 35.8, 8 37.0 with a slot copy
/// per run; without it, 1 MiB runs: 4 streams 39.2 and 8 37.4; 4 MiB runs: 8 streams (above).
constexpr std::size_t streams_per_route = 8;
/// Copies a to-host route has in flight at once (each waits for its event before its frames are published).
constexpr std::size_t max_copies_in_flight = 64;
/// The thread's wait when no route moved: it serves a stream running at tens of GB/s (a 64 KiB frame every
/// ~2 µs), so it spins long before it sleeps, and never sleeps long.
/// Threads per selecting route that choose its frames' parts ahead of the bridge's thread, as the frames
/// are published: choosing on the bridge's own thread (with helpers woken for each run) held its pace,
/// busy 95-99 % of every Set Query family's stream (H100, 10 M rows, dma).
constexpr unsigned choosing_threads = 3;
constexpr backoff_policy idle_wait{.spins = 4096, .yields = 4096, .first_sleep_us = 10, .max_sleep_us = 10};

/// A frame's parts chosen ahead, kept by slot: valid for the offset `ready` - 1. The slot's next offset is
/// published only after every group released this one, so the bridge has read these parts by then.
struct chosen_parts {
  std::vector<frame_range> parts;
  std::atomic<std::uint64_t> ready{0};
};

/// When a batch that grows between looks goes — a run of frames to copy, a row of releases to mirror: at
/// once when it reached `min_bytes` or cannot grow, else once it has not grown for run_linger. Each batch
/// costs a few µs of CUDA calls and engine gaps besides its bytes; one per frame was the bridge's pace at
/// 64 KiB frames, so small batches wait for company, but never longer than the linger.
struct batch_gate {
  std::uint64_t seen = 0;                       ///< the batch's length at the last look
  std::chrono::steady_clock::time_point since;  ///< when it last grew

  bool ready(std::uint64_t count, std::uint64_t bytes, std::uint64_t min_bytes, bool can_grow) {
    if (bytes < min_bytes && can_grow) {
      const auto now = std::chrono::steady_clock::now();
      if (count != seen) {  // still growing: look again before it goes
        seen = count;
        since = now;
        return false;
      }
      if (now - since < run_linger) return false;
    }
    seen = 0;
    return true;
  }
};

/// A selecting run's parts (every kept page range of every frame of the run), host to device: issued as
/// one cudaMemcpyBatchAsync a chunk, since a part is often a single 4 KiB page and a call a part would
/// cost more in calls than in bytes. Where the driver lacks batches, a call a part.
struct part_batch {
  static constexpr std::size_t max_chunk = 4096;
  std::vector<void*> dsts;
  std::vector<const void*> srcs;
  std::vector<std::size_t> sizes;
  bool batches_unsupported = false;

  void clear() {
    dsts.clear();
    srcs.clear();
    sizes.clear();
  }
  void add(std::byte* dst, const std::byte* src, std::uint64_t bytes) {
    dsts.push_back(dst);
    srcs.push_back(src);
    sizes.push_back(bytes);
  }
  /// Issues the parts on `stream`, in its order with what comes before and after; returns the CUDA calls.
  std::uint64_t issue(cudaStream_t stream) {
    std::uint64_t calls = 0;
    for (std::size_t first = 0; first < sizes.size(); first += max_chunk) {
      const std::size_t n = std::min(max_chunk, sizes.size() - first);
      if (n > 1 && !batches_unsupported) {
        // Stream order for the sources: a part's host bytes are its frame's as published before this run.
        cudaMemcpyAttributes attrs{};
        attrs.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
        std::size_t attrs_index = 0;
        const cudaError_t e = cudaMemcpyBatchAsync(dsts.data() + first, srcs.data() + first,
                                                   sizes.data() + first, n, &attrs, &attrs_index, 1, stream);
        ++calls;
        if (e == cudaSuccess) continue;
        if (e != cudaErrorNotSupported && e != cudaErrorCallRequiresNewerDriver) XF_CUDA_TRY(e);
        (void)cudaGetLastError();
        batches_unsupported = true;
      }
      for (std::size_t i = first; i < first + n; ++i, ++calls)
        XF_CUDA_TRY(cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyHostToDevice, stream));
    }
    return calls;
  }
};

/// Copies `count` consecutive frames between the replicas, from byte `at` of each: `width` bytes of every
/// frame (the longest frame's published bytes), `last_width` of the last. One CUDA call either way: all
/// but the last frame full is one plain copy, shorter frames one 2D copy at the frames' pitch — so a map
/// that publishes a third of its frame moves a third of it across PCIe, not the whole frame. Returns the
/// bytes copied (0: nothing to copy, no call made).
std::uint64_t copy_frames(std::byte* dst, const std::byte* src, std::uint64_t at, std::uint64_t count,
                          std::uint64_t frame_bytes, std::uint64_t width, std::uint64_t last_width,
                          cudaMemcpyKind kind, cudaStream_t stream) {
  if (count == 0 || width == 0) return 0;
  if (width == frame_bytes || count == 1) {
    const std::uint64_t bytes = (count - 1) * frame_bytes + (count == 1 ? width : last_width);
    XF_CUDA_TRY(cudaMemcpyAsync(dst + at, src + at, bytes, kind, stream));
    return bytes;
  }
  XF_CUDA_TRY(cudaMemcpy2DAsync(dst + at, frame_bytes, src + at, frame_bytes, width, count, kind, stream));
  return width * count;
}

}  // namespace copy_bridge_detail

using namespace copy_bridge_detail;

struct copy_bridge::lane {
  std::size_t topic = 0;
  bool to_device = false;
  topic_view host{};                        ///< the topic's own view: its host replica and index
  std::vector<std::uint32_t> host_groups;   ///< to the host: the subscriber groups on the CPU
  device_buffer<std::byte> frames;          ///< the device replica, frame for frame
  device_buffer<std::uint64_t> device_seq;  ///< to the device: the seq words the kernel polls
  device_buffer<padded_word> device_end;    ///< to the device: the end of stream the kernel reads
  /// To the device: the values copied into device_seq (offset + 1 per slot), then the end at [capacity];
  /// to the host: the seq words the kernel publishes.
  pinned_buffer<std::uint64_t> pinned_seq;
  /// To the host: the release words the kernel reads (CPU groups' rows copied in by the bridge, GPU
  /// groups' rows written by the kernel), and the staging of the copied values.
  device_buffer<std::uint64_t> device_released;
  pinned_buffer<std::uint64_t> released_staging;
  std::vector<cuda_stream> streams = std::vector<cuda_stream>(streams_per_route);  ///< runs go in turn
  std::size_t next_stream = 0;
  cuda_stream release_stream;  ///< to the host: the releases, beside the frames' copies
  std::vector<cuda_event>
      events;  ///< to the host: one per copy in flight (round-robin); to the device: one per stream
  /// The run being gathered from `next`, kept between looks: a published offset's slot does not change
  /// before the bridge carried it, so each look only reads the offsets published since the last.
  struct run_scan {
    std::uint64_t count = 0;
    std::uint64_t width = 0;       ///< the longest frame's published bytes (what copy_frames copies of each)
    std::uint64_t last_width = 0;  ///< the last frame's
    std::uint32_t first_frame = no_frame;
    bool void_run = false;
    bool closed = false;  ///< it cannot grow: the ring wraps, max_run_bytes, or the next frame breaks it
  };
  run_scan scan;
  batch_gate run_gate;
  std::uint64_t release_scan = 0;  ///< to the host: offsets past `released` every CPU group released
  bool release_closed = false;     ///< the release row reached the ring's wrap
  batch_gate release_gate;
  std::uint64_t min_batch_bytes = 0;  ///< min_run_bytes, or a quarter of the ring if that is less
  /// A selecting route: the share of its published bytes the last run copied (the estimate that sizes the
  /// next run); 1 for a route that copies whole frames.
  double kept_share = 1.0;
  /// The bytes a run of `count` frames is expected to copy.
  std::uint64_t expected_bytes(std::uint64_t count, std::uint64_t frame_bytes) const {
    return static_cast<std::uint64_t>(static_cast<double>(count * frame_bytes) * kept_share);
  }
  struct copy_in_flight {
    std::uint64_t first;
    std::uint64_t count;
    std::size_t event;
  };
  std::deque<copy_in_flight> in_flight;
  frame_selector select;                   ///< to the device: the parts of a frame to copy (empty: all of it)
  std::unique_ptr<chosen_parts[]> chosen;  ///< a selecting route's choices, by slot
  std::atomic<std::uint64_t> next_to_choose{0};       ///< the next offset a choosing thread takes
  std::vector<std::vector<frame_range>> frame_parts;  ///< a selecting run's parts, frame by frame
  part_stacker stacker;
  std::vector<part_stack> stacks;                    ///< parts repeated down the run: one 2-D copy each
  std::vector<std::vector<frame_range>> lone_parts;  ///< the other parts, frame by frame
  part_batch parts;                                  ///< the lone parts, copied together
  bool two_d = true;                                 ///< the frames' pitch is one cudaMemcpy2DAsync takes
  std::size_t next_event = 0;
  std::uint64_t next = 0;       ///< the first offset not carried across yet
  std::uint64_t delivered = 0;  ///< to the host: offsets published in the host index
  std::uint64_t released = 0;   ///< to the host: offsets whose release the device has been told of
  bool done = false;
  std::atomic<std::uint64_t> copies{0}, bytes{0}, carried{0}, cuda_calls{0}, busy_ns{0}, bytes_skipped{0},
      choice_wait_ns{0};
  bool worked = false;  ///< this look issued CUDA work or published (for busy_ns)
  /// Counts a CUDA call of this look (the counters are read for stats only: relaxed).
  void called(std::uint64_t n = 1) {
    cuda_calls.fetch_add(n, std::memory_order_relaxed);
    worked = true;
  }
};

copy_bridge::copy_bridge(const std::vector<topic>& topics, std::vector<route> routes, int device)
    : topics_(topics), routes_(std::move(routes)), device_(device) {
  for (const route& r : routes_) {
    auto l = std::make_unique<lane>();
    const topic& t = topics_.at(r.topic);
    const std::uint32_t capacity = t.config().capacity;
    l->topic = r.topic;
    l->to_device = r.to_device;
    l->select = r.select;
    l->host = t.view();
    l->min_batch_bytes = std::min(min_run_bytes, t.config().frame_bytes * capacity / 4);
    if (l->select) {
      int max_pitch = 0;
      XF_CUDA_TRY(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device_));
      l->two_d = t.config().frame_bytes <= static_cast<std::uint64_t>(max_pitch);
      l->chosen = std::make_unique<chosen_parts[]>(capacity);
    }
    l->frames = device_buffer<std::byte>(device_bytes(t.config()));
    if (r.to_device) {
      l->device_seq = device_buffer<std::uint64_t>(capacity);
      l->device_end = device_buffer<padded_word>(1);
      l->pinned_seq = pinned_buffer<std::uint64_t>(capacity + 1);
      l->events = std::vector<cuda_event>(streams_per_route);  // to order the end after every stream
      const padded_word open{no_offset, {}};
      XF_CUDA_TRY(cudaMemcpy(l->device_end.get(), &open, sizeof open, cudaMemcpyHostToDevice));
    } else {
      l->pinned_seq = pinned_buffer<std::uint64_t>(capacity);
      for (std::uint32_t g = 0; g < t.config().groups; ++g)
        if (g >= t.config().groups_on_gpu.size() || !t.config().groups_on_gpu[g]) l->host_groups.push_back(g);
      l->device_released = device_buffer<std::uint64_t>(std::uint64_t{t.config().groups} * capacity);
      l->released_staging = pinned_buffer<std::uint64_t>(std::uint64_t{t.config().groups} * capacity);
      l->events = std::vector<cuda_event>(max_copies_in_flight);
      // A stream that starts past 0 (a resumed run) starts with release words that say the offsets below
      // it were released (topic::start_at): the kernel's replica of them must say the same, or its
      // slot_free never sees the first slots free.
      if (t.config().first_offset != 0)
        XF_CUDA_TRY(cudaMemcpy(l->device_released.get(), l->host.released,
                               sizeof(std::uint64_t) * t.config().groups * capacity, cudaMemcpyHostToDevice));
    }
    // Offsets below the stream's first were carried (and released) by an earlier run.
    l->next = l->delivered = l->released = t.config().first_offset;
    l->next_to_choose.store(t.config().first_offset, std::memory_order_relaxed);
    lanes_.push_back(std::move(l));
  }
}

copy_bridge::~copy_bridge() {
  stop();
}

bool copy_bridge::routes(std::size_t topic) const {
  return std::any_of(lanes_.begin(), lanes_.end(), [&](const auto& l) { return l->topic == topic; });
}

topic_view copy_bridge::kernel_view(std::size_t topic) const {
  for (const auto& l : lanes_)
    if (l->topic == topic) {
      topic_view v = l->host;
      v.frames = l->frames.get();
      if (l->to_device) {
        v.bridge_seq = l->device_seq.get();
        v.end_offset = l->device_end.get();
      } else {
        v.bridge_seq = l->pinned_seq.get();
        v.released = l->device_released.get();
      }
      return v;
    }
  XF_EXPECTS(false, "kernel_view of a topic the bridge carries");
  return {};
}

void copy_bridge::start() {
  if (lanes_.empty()) {
    finished_.store(true, std::memory_order_release);
    return;
  }
  for (auto& l : lanes_)
    if (l->select && l->to_device)
      for (unsigned t = 0; t < choosing_threads; ++t)
        choosers_.emplace_back([this, l = l.get()] { choose_ahead(*l); });
  thread_ = std::thread([this] { loop(); });
}

void copy_bridge::stop() noexcept {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
  for (std::thread& t : choosers_)
    if (t.joinable()) t.join();
}

void copy_bridge::leak() noexcept {
  stop();
  for (auto& l : lanes_) {
    l->frames.leak();
    l->device_seq.leak();
    l->device_end.leak();
    l->pinned_seq.leak();
    l->device_released.leak();
    l->released_staging.leak();
    l->release_stream.leak();
    for (auto& st : l->streams) st.leak();
  }
}

std::optional<run_error> copy_bridge::error() const {
  std::lock_guard lock(error_mutex_);
  return error_;
}

std::vector<bridge_counters> copy_bridge::counters() const {
  std::vector<bridge_counters> out;
  for (const auto& l : lanes_)
    out.push_back({l->copies.load(std::memory_order_relaxed), l->bytes.load(std::memory_order_relaxed),
                   l->carried.load(std::memory_order_relaxed), l->cuda_calls.load(std::memory_order_relaxed),
                   l->busy_ns.load(std::memory_order_relaxed),
                   l->bytes_skipped.load(std::memory_order_relaxed),
                   l->choice_wait_ns.load(std::memory_order_relaxed)});
  return out;
}

void copy_bridge::choose_ahead(lane& l) {
  const topic_view& v = l.host;
  try {
    for (;;) {
      const std::uint64_t o = l.next_to_choose.fetch_add(1, std::memory_order_relaxed);
      backoff wait(idle_wait);
      while (!v.published(o)) {
        const std::uint64_t end = v.end();
        if (stop_.load(std::memory_order_relaxed) || (end != no_offset && o >= end)) return;
        wait.pause();
      }
      const index_slot& slot = v.slot(o);
      chosen_parts& c = l.chosen[v.slot_of(o)];
      c.parts.clear();
      if ((slot.flags & slot_void) == 0 && slot.frame != no_frame) {
        l.select(v.frames + std::uint64_t{slot.frame} * v.frame_bytes, c.parts);
        join_ranges(c.parts, 0, 0);
      }
      c.ready.store(o + 1, std::memory_order_release);
    }
  } catch (...) {
    std::lock_guard lock(error_mutex_);
    if (!choice_error_) choice_error_ = std::current_exception();
    choice_failed_.store(true, std::memory_order_release);
  }
}

void copy_bridge::loop() {
  lane* current = nullptr;
  try {
    // The current device is per thread, and a new one's is GPU 0: the copies, events and streams are the
    // run's GPU's, and a call on GPU 0 would create a context there for nothing.
    XF_CUDA_TRY(cudaSetDevice(device_));
    // --trace: one step that issued copies in trace::sample_every(), per topic, on this thread's track.
    std::vector<std::uint32_t> trace_names;
    std::uint64_t steps = 0;
    if (trace::enabled()) {
      trace::name_this_thread("copy engines, GPU " + std::to_string(device_), 5);
      for (auto& l : lanes_)
        trace_names.push_back(trace::intern(
            "copy " + topics_[l->topic].name() + (l->to_device ? " to GPU" : " to host"), "copy", "offset"));
    }
    backoff wait(idle_wait);
    while (!stop_.load(std::memory_order_relaxed)) {
      bool progress = false, all_done = true;
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        auto& l = lanes_[i];
        if (l->done) continue;
        current = l.get();
        const auto look = std::chrono::steady_clock::now();
        const std::uint64_t first = l->next;
        l->worked = false;
        progress |= l->to_device ? step_to_device(*l) : step_to_host(*l);
        if (l->worked) {
          const auto done = std::chrono::steady_clock::now();
          l->busy_ns.fetch_add(static_cast<std::uint64_t>(std::chrono::nanoseconds(done - look).count()),
                               std::memory_order_relaxed);
          if (!trace_names.empty() && steps++ % trace::sample_every() == 0)
            trace::span(trace_names[i],
                        static_cast<std::uint64_t>(std::chrono::nanoseconds(look.time_since_epoch()).count()),
                        static_cast<std::uint64_t>(std::chrono::nanoseconds(done.time_since_epoch()).count()),
                        first, true);
        }
        all_done = all_done && l->done;
      }
      if (all_done) break;
      if (progress)
        wait = backoff(idle_wait);
      else
        wait.pause();
    }
  } catch (const std::exception& e) {
    std::lock_guard lock(error_mutex_);
    const std::string name = current ? topics_[current->topic].name() : std::string();
    error_ =
        run_error(fault_site{{}, name, current ? std::optional<std::uint64_t>(current->next) : std::nullopt},
                  std::string("copying frames with the copy engines failed: ") + e.what());
  }
  finished_.store(true, std::memory_order_release);
}

bool copy_bridge::step_to_device(lane& l) {
  const topic_view& v = l.host;
  // The run: published offsets from `next`, all void or with consecutive heap frames, not past the slot
  // ring's wrap (its seq words are then contiguous), at most max_run_bytes.
  lane::run_scan& r = l.scan;
  while (!r.closed) {
    const std::uint64_t o = l.next + r.count;
    if (!v.published(o)) break;
    const index_slot& slot = v.slot(o);
    const bool is_void = (slot.flags & slot_void) != 0 || slot.frame == no_frame;
    if (r.count == 0) {
      r.void_run = is_void;
      r.first_frame = slot.frame;
    } else if (is_void != r.void_run || (!is_void && slot.frame != r.first_frame + r.count)) {
      r.closed = true;
      break;
    }
    // A frame announcing more than it holds is the kernel's to report (fault_bad_bytes); copy what fits.
    if (!is_void) {
      r.last_width = std::min(slot.bytes, v.frame_bytes);
      r.width = std::max(r.width, r.last_width);
    }
    ++r.count;
    r.closed =
        v.slot_of(o + 1) == 0 || (!is_void && (l.expected_bytes(r.count + 1, v.frame_bytes) > max_run_bytes ||
                                               (l.select && r.count == max_selecting_run_frames)));
  }
  const std::uint64_t count = r.count, width = r.width, last_width = r.last_width;
  const std::uint32_t first_frame = r.first_frame;
  if (count == 0) {
    // Nothing published at `next`: the end word is stored after every publish below it, so a pending
    // offset at or past it is beyond the stream. The device learns the end after the last seq word of
    // every stream.
    const std::uint64_t end = v.end();
    if (end != no_offset && l.next >= end) {
      cudaStream_t last = l.streams[0].get();
      for (std::size_t i = 1; i < l.streams.size(); ++i) {
        XF_CUDA_TRY(cudaEventRecord(l.events[i].get(), l.streams[i].get()));
        XF_CUDA_TRY(cudaStreamWaitEvent(last, l.events[i].get(), 0));
        l.called(2);
      }
      l.pinned_seq.get()[v.capacity] = end;
      XF_CUDA_TRY(cudaMemcpyAsync(&l.device_end.get()->value, l.pinned_seq.get() + v.capacity,
                                  sizeof(std::uint64_t), cudaMemcpyHostToDevice, last));
      l.called();
      l.done = true;
    }
    return false;
  }
  if (!l.run_gate.ready(count, l.expected_bytes(count, v.frame_bytes), l.min_batch_bytes, !r.closed))
    return true;
  r = {};
  cudaStream_t stream = l.streams[l.next_stream].get();
  l.next_stream = (l.next_stream + 1) % l.streams.size();
  // A void run has no width: nothing to copy but its seq words. A selecting route copies each frame's
  // parts the GPU subscribers read, in batches (the stream still orders them before the seq words).
  std::uint64_t copy_bytes = 0, copy_calls = 0;
  if (l.select && width != 0) {
    l.parts.clear();
    std::uint64_t published_bytes = 0;
    if (l.frame_parts.size() < count) l.frame_parts.resize(count);
    const auto published = [&](std::uint64_t k) { return k + 1 == count ? last_width : width; };
    const auto waited_since = std::chrono::steady_clock::now();
    for (std::uint64_t k = 0; k < count; ++k) {
      const chosen_parts& c = l.chosen[v.slot_of(l.next + k)];
      backoff wait(idle_wait);
      while (c.ready.load(std::memory_order_acquire) != l.next + k + 1) {
        if (choice_failed_.load(std::memory_order_acquire)) {
          std::lock_guard lock(error_mutex_);
          std::rethrow_exception(choice_error_);
        }
        if (stop_.load(std::memory_order_relaxed)) return false;
        wait.pause();
      }
      l.frame_parts[k] = c.parts;
      clip_ranges(l.frame_parts[k], published(k));
    }
    l.choice_wait_ns.fetch_add(
        static_cast<std::uint64_t>(
            std::chrono::nanoseconds(std::chrono::steady_clock::now() - waited_since).count()),
        std::memory_order_relaxed);
    // Parts at the same place in consecutive frames go as 2-D copies; the rest frame by frame, gaps of up
    // to part_gap_bytes joined (a gap is cheaper to copy than another part).
    l.stacker.split(l.frame_parts, count, l.two_d ? min_stack_frames : count + 1, l.stacks, l.lone_parts);
    const std::uint64_t run_base = std::uint64_t{first_frame} * v.frame_bytes;
    for (const part_stack& st : l.stacks) {
      const std::uint64_t at = run_base + st.first * v.frame_bytes + st.part.offset;
      XF_CUDA_TRY(cudaMemcpy2DAsync(l.frames.get() + at, v.frame_bytes, v.frames + at, v.frame_bytes,
                                    st.part.bytes, st.frames, cudaMemcpyHostToDevice, stream));
      copy_bytes += st.part.bytes * st.frames;
    }
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint64_t base = run_base + k * v.frame_bytes;
      join_ranges(l.lone_parts[k], 0, copy_bridge::part_gap_bytes);
      for (const frame_range& part : l.lone_parts[k]) {
        l.parts.add(l.frames.get() + base + part.offset, v.frames + base + part.offset, part.bytes);
        copy_bytes += part.bytes;
      }
      published_bytes += published(k);
    }
    l.bytes_skipped.fetch_add(published_bytes - copy_bytes, std::memory_order_relaxed);
    copy_calls = l.stacks.size() + l.parts.issue(stream);
    // Floored so that a run the index emptied leaves an estimate the frame cap, not a zero, bounds.
    l.kept_share = std::max(static_cast<double>(copy_bytes) / static_cast<double>(published_bytes),
                            1.0 / static_cast<double>(max_selecting_run_frames));
  } else {
    copy_bytes = copy_frames(l.frames.get(), v.frames, std::uint64_t{first_frame} * v.frame_bytes, count,
                             v.frame_bytes, width, last_width, cudaMemcpyHostToDevice, stream);
    copy_calls = copy_bytes != 0 ? 1 : 0;
  }
  const std::uint32_t first_slot = v.slot_of(l.next);
  // The flag after the data: the same stream starts this copy once the copies above have completed. A
  // staging word is rewritten only for offset + capacity, which its publisher publishes only after the
  // GPU released `offset`, i.e. after the kernel read the word this copy writes.
  for (std::uint64_t k = 0; k < count; ++k) l.pinned_seq.get()[first_slot + k] = l.next + k + 1;
  XF_CUDA_TRY(cudaMemcpyAsync(l.device_seq.get() + first_slot, l.pinned_seq.get() + first_slot,
                              count * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream));
  l.called(copy_calls + 1);
  l.next += count;
  l.copies.fetch_add(copy_calls, std::memory_order_relaxed);
  l.bytes.fetch_add(copy_bytes, std::memory_order_relaxed);
  l.carried.fetch_add(count, std::memory_order_relaxed);
  return true;
}

bool copy_bridge::step_to_host(lane& l) {
  const topic_view& v = l.host;
  bool progress = false;
  // Publish, in offset order, the runs whose copies completed.
  while (!l.in_flight.empty()) {
    const lane::copy_in_flight& c = l.in_flight.front();
    const cudaError_t status = cudaEventQuery(l.events[c.event].get());
    l.cuda_calls.fetch_add(1, std::memory_order_relaxed);  // a poll: busy only if it found the copy done
    if (status == cudaErrorNotReady) break;
    XF_CUDA_TRY(status);
    l.worked = true;
    // The kernel wrote the slots' fields into the host index itself, ordered before its seq words by
    // its publish fence; the frames are here now, so the host's seq words can say so.
    for (std::uint64_t k = 0; k < c.count; ++k) v.commit(c.first + k);
    l.delivered = c.first + c.count;
    l.in_flight.pop_front();
    progress = true;
  }
  progress |= mirror_releases(l);
  if (l.in_flight.size() == l.events.size()) return progress;
  // The run: offsets the kernel published from `next` (it fills the slot and frame, fences, then stores
  // its seq word), not past the wrap; the kernel's frame for an offset is its slot, so runs are
  // contiguous. Each frame's published bytes are in the host index (the kernel's slot fields come before
  // its seq word), so only those cross: a map publishing part of its frame sends that part.
  lane::run_scan& r = l.scan;
  while (!r.closed && load_acquire(l.pinned_seq.get()[v.slot_of(l.next + r.count)]) == l.next + r.count + 1) {
    const index_slot& slot = v.slots[v.slot_of(l.next + r.count)];
    r.last_width = (slot.flags & slot_void) != 0 ? 0 : std::min(slot.bytes, v.frame_bytes);
    r.width = std::max(r.width, r.last_width);
    ++r.count;
    r.closed = v.slot_of(l.next + r.count) == 0 || (r.count + 1) * v.frame_bytes > max_run_bytes;
  }
  const std::uint64_t count = r.count, width = r.width, last_width = r.last_width;
  if (count == 0) {
    const std::uint64_t end = v.end();
    if (end != no_offset && l.next >= end && l.in_flight.empty()) l.done = true;
    return progress;
  }
  if (!l.run_gate.ready(count, count * v.frame_bytes, l.min_batch_bytes, !r.closed)) return true;
  r = {};
  cudaStream_t stream = l.streams[l.next_stream].get();
  l.next_stream = (l.next_stream + 1) % l.streams.size();
  const std::uint32_t first_slot = v.slot_of(l.next);
  // The event still follows a run of void frames (nothing copied): their publish waits for the runs before.
  const std::uint64_t copy_bytes =
      copy_frames(v.frames, l.frames.get(), std::uint64_t{first_slot} * v.frame_bytes, count, v.frame_bytes,
                  width, last_width, cudaMemcpyDeviceToHost, stream);
  XF_CUDA_TRY(cudaEventRecord(l.events[l.next_event].get(), stream));
  l.called(copy_bytes != 0 ? 2 : 1);
  l.in_flight.push_back({l.next, count, l.next_event});
  l.next_event = (l.next_event + 1) % l.events.size();
  l.next += count;
  l.copies.fetch_add(copy_bytes != 0 ? 1 : 0, std::memory_order_relaxed);
  l.bytes.fetch_add(copy_bytes, std::memory_order_relaxed);
  l.carried.fetch_add(count, std::memory_order_relaxed);
  return true;
}

bool copy_bridge::mirror_releases(lane& l) {
  // Offsets every CPU group has released, from `released` up to what the host index has (not past the
  // wrap): their release words go to the device, where the kernel checks them before reusing a slot. A
  // staging word is rewritten only for offset + capacity, which the kernel publishes only after it read
  // the word this copy writes. Gathered like runs: one small copy per release was a CUDA call per frame.
  const topic_view& v = l.host;
  while (!l.release_closed && l.released + l.release_scan < l.delivered) {
    const std::uint64_t o = l.released + l.release_scan;
    bool all = true;
    for (std::uint32_t g : l.host_groups) all = all && v.released_by(g, o);
    if (!all) break;
    ++l.release_scan;
    l.release_closed = v.slot_of(o + 1) == 0;
  }
  const std::uint64_t count = l.release_scan;
  if (count == 0 || !l.release_gate.ready(count, count * v.frame_bytes, l.min_batch_bytes, !l.release_closed))
    return false;
  const std::uint32_t first_slot = v.slot_of(l.released);
  for (std::uint32_t g : l.host_groups) {
    const std::uint64_t row = std::uint64_t{g} * v.capacity + first_slot;
    for (std::uint64_t k = 0; k < count; ++k) l.released_staging.get()[row + k] = l.released + k + 1;
    XF_CUDA_TRY(cudaMemcpyAsync(l.device_released.get() + row, l.released_staging.get() + row,
                                count * sizeof(std::uint64_t), cudaMemcpyHostToDevice,
                                l.release_stream.get()));
    l.called();
  }
  l.released += count;
  l.release_scan = 0;
  l.release_closed = false;
  return true;
}

}  // namespace xf
