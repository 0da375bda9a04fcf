// The copy engines' path across PCIe: one host thread carries each bridged topic's frames and publishes.
#include "framework/gpu/copy_bridge.hpp"

#include <algorithm>
#include <deque>

#include "framework/system_atomic.hpp"

namespace xf {
namespace {

/// Largest copy the bridge issues: a run stops growing here so the first frames of a long backlog are
/// not held back behind the last (at ~25 GB/s per direction, 2 MiB takes ~80 µs on the link).
constexpr std::uint64_t max_run_bytes = 2 * 1024 * 1024;
/// Copies a to-host route has in flight at once (each waits for its event before its frames are published).
constexpr std::size_t max_copies_in_flight = 64;
/// The thread's wait when no route moved: spin, then yield, then short sleeps. It serves a stream running
/// at tens of GB/s (a 64 KiB frame every ~2 µs), so it spins long before it sleeps, and never sleeps long.
constexpr std::uint32_t spin_rounds = 4096;
constexpr std::uint32_t yield_rounds = 4096;
constexpr auto idle_sleep = std::chrono::microseconds(10);

}  // namespace

struct copy_bridge::lane {
  std::size_t topic = 0;
  bool to_device = false;
  topic_view host{};                        ///< the topic's own view: its host replica and index
  device_buffer<std::byte> frames;          ///< the device replica, frame for frame
  device_buffer<std::uint64_t> device_seq;  ///< to the device: the seq words the kernel polls
  /// To the device: the values copied into device_seq (offset + 1 per slot); to the host: the seq words the
  /// kernel publishes.
  pinned_buffer<std::uint64_t> pinned_seq;
  cuda_stream stream;
  std::vector<cuda_event> events;  ///< to the host: one per copy in flight, used round-robin
  struct copy_in_flight {
    std::uint64_t first;
    std::uint64_t count;
    std::size_t event;
  };
  std::deque<copy_in_flight> in_flight;
  std::size_t next_event = 0;
  std::uint64_t next = 0;  ///< the first offset not carried across yet
  bool done = false;
  std::atomic<std::uint64_t> copies{0}, bytes{0}, carried{0};

  /// The run of offsets from `next` that one copy can carry: published (by `published`), all void or all
  /// with consecutive heap frames, not past the slot ring's wrap (so its seq words are contiguous), at
  /// most max_run_bytes. Returns the count; sets the first frame and the bytes to copy.
  template <class Published>
  std::uint64_t gather(Published&& published, std::uint32_t& first_frame, std::uint64_t& copy_bytes) const {
    std::uint64_t count = 0;
    bool void_run = false;
    copy_bytes = 0;
    while (true) {
      const std::uint64_t o = next + count;
      if (!published(o)) break;
      const index_slot& slot = host.slots[host.slot_of(o)];
      const bool is_void = (slot.flags & slot_void) != 0 || slot.frame == no_frame;
      if (count == 0) {
        void_run = is_void;
        first_frame = slot.frame;
      } else if (is_void != void_run || (!is_void && slot.frame != first_frame + count)) {
        break;
      }
      // A frame announcing more than it holds is the kernel's to report (fault_bad_bytes); copy what fits.
      if (!is_void) copy_bytes = count * host.frame_bytes + std::min(slot.bytes, host.frame_bytes);
      ++count;
      if (host.slot_of(o + 1) == 0) break;
      if (!is_void && (count + 1) * host.frame_bytes > max_run_bytes) break;
    }
    return count;
  }
};

copy_bridge::copy_bridge(const std::vector<topic>& topics, std::vector<route> routes)
    : topics_(topics), routes_(std::move(routes)) {
  for (const route& r : routes_) {
    auto l = std::make_unique<lane>();
    const topic& t = topics_.at(r.topic);
    l->topic = r.topic;
    l->to_device = r.to_device;
    l->host = t.view();
    l->frames = device_buffer<std::byte>(device_bytes(t.config()));
    l->pinned_seq = pinned_buffer<std::uint64_t>(t.config().capacity);
    if (r.to_device) {
      l->device_seq = device_buffer<std::uint64_t>(t.config().capacity);
    } else {
      l->events = std::vector<cuda_event>(max_copies_in_flight);
    }
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
      v.bridge_seq = l->to_device ? l->device_seq.get() : l->pinned_seq.get();
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
  thread_ = std::thread([this] { loop(); });
}

void copy_bridge::stop() noexcept {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void copy_bridge::leak() noexcept {
  stop();
  for (auto& l : lanes_) {
    l->frames.leak();
    l->device_seq.leak();
    l->pinned_seq.leak();
    l->stream.leak();
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
                   l->carried.load(std::memory_order_relaxed)});
  return out;
}

void copy_bridge::loop() {
  lane* current = nullptr;
  try {
    std::uint32_t idle = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      bool progress = false, all_done = true;
      for (auto& l : lanes_) {
        if (l->done) continue;
        current = l.get();
        progress |= l->to_device ? step_to_device(*l) : step_to_host(*l);
        all_done = all_done && l->done;
      }
      if (all_done) break;
      if (progress) {
        idle = 0;
      } else if (++idle < spin_rounds) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      } else if (idle < spin_rounds + yield_rounds) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(idle_sleep);
      }
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
  std::uint32_t first_frame = no_frame;
  std::uint64_t copy_bytes = 0;
  const std::uint64_t count =
      l.gather([&](std::uint64_t o) { return load_acquire(v.slots[v.slot_of(o)].seq) == o + 1; }, first_frame,
               copy_bytes);
  if (count == 0) {
    // Nothing published at `next`: the end word is stored after every publish below it, so a pending
    // offset at or past it is beyond the stream.
    const std::uint64_t end = v.end();
    if (end != no_offset && l.next >= end) l.done = true;
    return false;
  }
  const std::uint64_t at = std::uint64_t{first_frame} * v.frame_bytes;
  if (copy_bytes != 0)
    XF_CUDA_TRY(cudaMemcpyAsync(l.frames.get() + at, v.frames + at, copy_bytes, cudaMemcpyHostToDevice,
                                l.stream.get()));
  // The flag after the data: the same stream starts this copy once the frames' copy has completed. A
  // staging word is rewritten only for offset + capacity, which its publisher publishes only after the
  // GPU released `offset`, i.e. after the kernel read the word this copy writes.
  const std::uint32_t first_slot = v.slot_of(l.next);
  for (std::uint64_t k = 0; k < count; ++k) l.pinned_seq.get()[first_slot + k] = l.next + k + 1;
  XF_CUDA_TRY(cudaMemcpyAsync(l.device_seq.get() + first_slot, l.pinned_seq.get() + first_slot,
                              count * sizeof(std::uint64_t), cudaMemcpyHostToDevice, l.stream.get()));
  l.next += count;
  l.copies.fetch_add(copy_bytes != 0 ? 1 : 0, std::memory_order_relaxed);
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
    if (status == cudaErrorNotReady) break;
    XF_CUDA_TRY(status);
    for (std::uint64_t k = 0; k < c.count; ++k)
      store_release(v.slots[v.slot_of(c.first + k)].seq, c.first + k + 1);
    l.in_flight.pop_front();
    progress = true;
  }
  if (l.in_flight.size() == l.events.size()) return progress;
  std::uint32_t first_frame = no_frame;
  std::uint64_t copy_bytes = 0;
  // The kernel fills the slot's fields, fences, then stores its seq word: acquiring that word shows them.
  const std::uint64_t count =
      l.gather([&](std::uint64_t o) { return load_acquire(l.pinned_seq.get()[v.slot_of(o)]) == o + 1; },
               first_frame, copy_bytes);
  if (count == 0) {
    const std::uint64_t end = v.end();
    if (end != no_offset && l.next >= end && l.in_flight.empty()) l.done = true;
    return progress;
  }
  const std::uint64_t at = std::uint64_t{first_frame} * v.frame_bytes;
  if (copy_bytes != 0)
    XF_CUDA_TRY(cudaMemcpyAsync(v.frames + at, l.frames.get() + at, copy_bytes, cudaMemcpyDeviceToHost,
                                l.stream.get()));
  XF_CUDA_TRY(cudaEventRecord(l.events[l.next_event].get(), l.stream.get()));
  l.in_flight.push_back({l.next, count, l.next_event});
  l.next_event = (l.next_event + 1) % l.events.size();
  l.next += count;
  l.copies.fetch_add(copy_bytes != 0 ? 1 : 0, std::memory_order_relaxed);
  l.bytes.fetch_add(copy_bytes, std::memory_order_relaxed);
  l.carried.fetch_add(count, std::memory_order_relaxed);
  return true;
}

}  // namespace xf
