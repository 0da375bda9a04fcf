// Per-thread state of one operator instance: every thread that calls the instance gets its own slot, found
// without a lock after its first call, so sinks called from many threads share no counters on the hot path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace xf {

/// Per-thread slots are aligned to this so that two threads' slots never share a cache line (x86-64 and
/// Arm Neoverse lines are 64 bytes; std::hardware_destructive_interference_size warns as ABI-unstable).
inline constexpr std::size_t cache_line_bytes = 64;

/// Owns one `Slot` per calling thread. `local()` is safe from any number of threads; the first call on a
/// thread takes a mutex, later calls hit a thread-local cache keyed by an instance id that is never reused,
/// so a cache entry can never point into a destroyed instance. Slots live as long as the instance.
/// `for_each` visits every slot under the mutex: what it reads must be atomics, or the writers must be done.
template <class Slot>
class thread_slots {
 public:
  thread_slots() : id_(next_id()) {}
  thread_slots(const thread_slots&) = delete;
  thread_slots& operator=(const thread_slots&) = delete;

  Slot& local() {
    // One cached (instance, slot) pair per thread: a thread serves one instance of a sink at a time in the
    // executors, so it almost always hits; a miss only costs the locked lookup below.
    thread_local std::uint64_t cached_id = 0;
    thread_local Slot* cached = nullptr;
    if (cached_id == id_) return *cached;
    std::lock_guard lock(mutex_);
    std::unique_ptr<Slot>& slot = slots_[thread_token()];
    if (!slot) slot = std::make_unique<Slot>();
    cached_id = id_;
    cached = slot.get();
    return *cached;
  }

  template <class Fn>
  void for_each(Fn&& fn) const {
    std::lock_guard lock(mutex_);
    for (const auto& [token, slot] : slots_) fn(*slot);
  }

 private:
  /// Ids start at 1: 0 is the empty cache.
  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  /// Unique per thread for the life of the process (std::thread::id may be reused by a later thread,
  /// which would inherit a finished thread's state).
  static std::uint64_t thread_token() {
    static std::atomic<std::uint64_t> counter{0};
    thread_local const std::uint64_t token = counter.fetch_add(1, std::memory_order_relaxed);
    return token;
  }

  const std::uint64_t id_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::unique_ptr<Slot>> slots_;
};

}  // namespace xf
