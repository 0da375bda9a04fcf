// Waiting on a word another thread (or the GPU) will change: spin briefly, then yield, then sleep in
// growing steps, so a full or empty topic costs little CPU on a 2-core machine yet reacts in microseconds
// on a busy one. Every wait checks an abort flag. The longest sleep bounds how late a waiter notices a
// free slot: at 30 GB/s of 16 KiB frames a slot frees every ~0.5 µs, and a publisher that slept 200 µs
// left the GPU waiting (measured on the H100: an in-place source lost a fifth of the stream's rate), so
// sleeps stop at 50 µs, after ~10 µs of spinning.
//
// A process may cap every wait's sleeps lower (a run does, from runtime.max_sleep_us): a sleep is what a
// frame arriving meanwhile waits for, once per hand-off, so an unloaded stream's latency grows with it. At
// 0 the waits never sleep: they spin, then yield, on cores that are theirs to spend.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "framework/core/errors.hpp"

namespace xf {

/// How a waiter backs off: `spins` pause instructions, then `yields` yields, then sleeps doubling from
/// `first_sleep_us` to `max_sleep_us`. The default is the operators' (above).
struct backoff_policy {
  std::uint32_t spins = 256;
  std::uint32_t yields = 64;
  std::uint32_t first_sleep_us = 1;
  std::uint32_t max_sleep_us = 50;
};

/// The process's cap on every wait's sleeps, in microseconds (the default leaves each policy's own);
/// 0: waits never sleep, they yield instead.
inline constexpr std::uint32_t no_sleep_cap = ~std::uint32_t{0};
inline std::atomic<std::uint32_t>& backoff_sleep_cap_us() noexcept {
  static std::atomic<std::uint32_t> cap{no_sleep_cap};
  return cap;
}

/// Sets the process's sleep cap for a scope and puts the one before back after it. Waits already sleeping
/// take it at their next pause.
class scoped_backoff_sleep_cap {
 public:
  explicit scoped_backoff_sleep_cap(std::uint32_t us) noexcept
      : before_(backoff_sleep_cap_us().exchange(us, std::memory_order_relaxed)) {}
  ~scoped_backoff_sleep_cap() { backoff_sleep_cap_us().store(before_, std::memory_order_relaxed); }
  scoped_backoff_sleep_cap(const scoped_backoff_sleep_cap&) = delete;
  scoped_backoff_sleep_cap& operator=(const scoped_backoff_sleep_cap&) = delete;

 private:
  std::uint32_t before_;
};

class backoff {
 public:
  explicit backoff(backoff_policy policy = {}) : policy_(policy), sleep_us_(policy.first_sleep_us) {}

  void pause() {
    if (const std::uint32_t us = next_sleep_us(); us != 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(us));
      if (sleep_us_ < policy_.max_sleep_us) sleep_us_ = std::min(2 * sleep_us_, policy_.max_sleep_us);
    } else if (step_ < policy_.spins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
    ++step_;
  }

  /// What the next pause sleeps, in microseconds: 0 while it spins or yields (past the spins and yields,
  /// also when the process's cap is 0).
  std::uint32_t next_sleep_us() const noexcept {
    if (step_ < policy_.spins + policy_.yields) return 0;
    return std::min(sleep_us_, backoff_sleep_cap_us().load(std::memory_order_relaxed));
  }

 private:
  backoff_policy policy_;
  std::uint32_t step_ = 0;
  std::uint32_t sleep_us_;
};

/// Waits until `ready()` returns true; throws run_aborted once `abort` is set. Returns the nanoseconds
/// waited (0 when ready at once).
template <class Ready>
std::uint64_t wait_until(Ready&& ready, const std::atomic<bool>& abort) {
  if (ready()) return 0;
  const auto start = std::chrono::steady_clock::now();
  backoff b;
  while (!ready()) {
    if (abort.load(std::memory_order_relaxed)) throw run_aborted();
    b.pause();
  }
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace xf
