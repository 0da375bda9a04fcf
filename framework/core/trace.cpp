// The run's timeline recorder (trace.hpp): per-thread buffers, a shared budget taken in chunks.
#include "framework/core/trace.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#if XF_HAVE_CUDA && __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define XF_HAVE_NVTX 1
#endif

namespace xf::trace {

namespace {

/// Events a thread takes from the budget at a time: the shared counter is touched once per this many.
constexpr std::uint64_t budget_chunk = 1024;

struct buffer {
  std::vector<event> events;
  std::uint32_t track = 0;
};

struct recorder {
  std::atomic<bool> on{false};
  std::atomic<std::uint32_t> every{1};
  std::atomic<std::uint64_t> generation{0};  // a start() begins a new one: threads take new buffers
  std::atomic<std::uint64_t> reserved{0}, dropped{0};
  std::uint64_t max_events = 0;
  std::mutex lock;  // what follows
  std::vector<std::shared_ptr<buffer>> buffers;
  std::vector<name_entry> names;
  std::map<std::pair<std::string, std::string>, std::uint32_t> name_index;
  std::vector<track> tracks;
  std::uint32_t next_track = 1;

  static recorder& instance() {
    static recorder r;
    return r;
  }
};

struct thread_state {
  std::shared_ptr<buffer> buf;
  std::uint64_t generation = ~std::uint64_t{0};
  std::uint64_t budget_left = 0;
};
thread_local thread_state this_thread;

/// The calling thread's buffer for the current recording (made, with a track, on first use).
buffer& own_buffer() {
  recorder& r = recorder::instance();
  const std::uint64_t g = r.generation.load(std::memory_order_acquire);
  if (this_thread.generation != g || !this_thread.buf) {
    auto b = std::make_shared<buffer>();
    std::lock_guard guard(r.lock);
    b->track = r.next_track++;
    r.tracks.push_back({"thread " + std::to_string(b->track), b->track, 1000 + b->track});
    r.buffers.push_back(b);
    this_thread.buf = std::move(b);
    this_thread.generation = g;
    this_thread.budget_left = 0;
  }
  return *this_thread.buf;
}

/// Whether one more event fits the budget (taken from the shared counter a chunk at a time).
bool take_budget() {
  recorder& r = recorder::instance();
  if (this_thread.budget_left == 0) {
    const std::uint64_t before = r.reserved.fetch_add(budget_chunk, std::memory_order_relaxed);
    if (before >= r.max_events) {
      r.dropped.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    this_thread.budget_left = std::min(budget_chunk, r.max_events - before);
  }
  --this_thread.budget_left;
  return true;
}

void append(const event& e) {
  buffer& b = own_buffer();
  if (!take_budget()) return;
  event copy = e;
  if (copy.track == 0) copy.track = b.track;
  b.events.push_back(copy);
}

}  // namespace

bool enabled() noexcept {
  return recorder::instance().on.load(std::memory_order_relaxed);
}

void start(std::uint64_t max_events, std::uint32_t sample_every) {
  recorder& r = recorder::instance();
  std::lock_guard guard(r.lock);
  r.buffers.clear();
  r.tracks.clear();
  r.names.clear();
  r.name_index.clear();
  r.next_track = 1;
  r.max_events = max_events;
  r.reserved.store(0);
  r.dropped.store(0);
  r.every.store(sample_every == 0 ? 1 : sample_every);
  r.generation.fetch_add(1, std::memory_order_release);
  r.on.store(true);
}

void stop() {
  recorder::instance().on.store(false);
}

std::uint32_t sample_every() noexcept {
  return recorder::instance().every.load(std::memory_order_relaxed);
}

std::uint32_t intern(const std::string& name, const std::string& category, const std::string& arg_name) {
  recorder& r = recorder::instance();
  std::lock_guard guard(r.lock);
  const auto [it, added] =
      r.name_index.try_emplace({name, category}, static_cast<std::uint32_t>(r.names.size()));
  if (added) r.names.push_back({name, category, arg_name});
  return it->second;
}

std::uint32_t new_track(const std::string& name, std::uint32_t order) {
  recorder& r = recorder::instance();
  std::lock_guard guard(r.lock);
  const std::uint32_t id = r.next_track++;
  r.tracks.push_back({name, id, order});
  return id;
}

void name_this_thread(const std::string& name, std::uint32_t order) {
  const std::uint32_t id = own_buffer().track;
  recorder& r = recorder::instance();
  std::lock_guard guard(r.lock);
  for (track& t : r.tracks)
    if (t.id == id) {
      t.name = name;
      t.order = order;
    }
}

std::uint32_t this_thread_track() {
  return own_buffer().track;
}

void span(std::uint32_t name, std::uint64_t start_ns, std::uint64_t end_ns, std::uint64_t arg, bool has_arg,
          std::uint32_t track) {
  append({start_ns, end_ns > start_ns ? end_ns - start_ns : 0, arg, name, track, false, has_arg});
}

void instant(std::uint32_t name, std::uint64_t at_ns, std::uint64_t arg, bool has_arg, std::uint32_t track) {
  append({at_ns, 0, arg, name, track, true, has_arg});
}

void nvtx_push(const char* name) noexcept {
#if XF_HAVE_NVTX
  nvtxRangePushA(name);
#else
  (void)name;
#endif
}

void nvtx_pop() noexcept {
#if XF_HAVE_NVTX
  nvtxRangePop();
#endif
}

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

recording collect() {
  recorder& r = recorder::instance();
  std::lock_guard guard(r.lock);
  recording out;
  for (const auto& b : r.buffers) out.events.insert(out.events.end(), b->events.begin(), b->events.end());
  out.names = r.names;
  out.tracks = r.tracks;
  out.dropped = r.dropped.load();
  out.sample_every = r.every.load();
  return out;
}

}  // namespace xf::trace
