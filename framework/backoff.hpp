// Waiting on a word another thread (or the GPU) will change: spin briefly, then yield, then sleep in
// growing steps, so a full or empty topic costs little CPU on a 2-core machine yet reacts in microseconds
// on a busy one. Every wait checks an abort flag. The longest sleep bounds how late a waiter notices a
// free slot: at 30 GB/s of 16 KiB frames a slot frees every ~0.5 µs, and a publisher that slept 200 µs
// left the GPU waiting (measured on the H100: an in-place source lost a fifth of the stream's rate), so
// sleeps stop at 50 µs, after ~10 µs of spinning.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "framework/errors.hpp"

namespace xf {

class backoff {
 public:
  void pause() {
    if (step_ < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else if (step_ < kSpins + kYields) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
      if (sleep_us_ < kMaxSleepUs) sleep_us_ *= 2;
    }
    ++step_;
  }

 private:
  static constexpr std::uint32_t kSpins = 256;
  static constexpr std::uint32_t kYields = 64;
  static constexpr std::uint32_t kMaxSleepUs = 50;
  std::uint32_t step_ = 0;
  std::uint32_t sleep_us_ = 1;
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
