// Waiting on a word another thread (or the GPU) will change: spin briefly, then yield, then sleep in
// growing steps, so a full or empty topic costs little CPU on a 2-core machine yet reacts in microseconds
// on a busy one. Every wait checks an abort flag. The longest sleep bounds how late a waiter notices a
// free slot: at 30 GB/s of 16 KiB frames a slot frees every ~0.5 µs, and a publisher that slept 200 µs
// left the GPU waiting (measured on the H100: an in-place source lost a fifth of the stream's rate), so
// sleeps stop at 50 µs, after ~10 µs of spinning.
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

class backoff {
 public:
  explicit backoff(backoff_policy policy = {}) : policy_(policy), sleep_us_(policy.first_sleep_us) {}

  void pause() {
    if (step_ < policy_.spins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else if (step_ < policy_.spins + policy_.yields) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
      if (sleep_us_ < policy_.max_sleep_us) sleep_us_ = std::min(2 * sleep_us_, policy_.max_sleep_us);
    }
    ++step_;
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
